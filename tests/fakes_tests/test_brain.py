"""The rule-based analyst: each signature's rules, and the brain as an in-process DSPy engine."""

import asyncio
import contextlib
import io
import json
import statistics

import dspy
import pandas as pd

from fakes.brain import answer_text, judge, plan
from fakes.coding import fix_code, write_code
from fakes.engine import brain_lm
from fakes.reading import extract_field, normalize_records
from signatures.extractor import ExtractFacts
from signatures.planner import PlanQuestion
from signatures.types import FieldSpec, Plan

ZH_CATALOG = "6 documents\ndoctype: A股年报 (6)\nyear: 2021 (3), 2022 (3)\nlanguage: zh (6)\nsymbols: 600000, 600036, 601398"
US_CATALOG = (
    "4 documents\ndoctype: US Stock Annual Report (4)\nyear: 2022 (4)\nlanguage: en (4)\nsymbols: AAPL, MSFT"
)


def only_subquery(out):
    subqueries = Plan.model_validate(out["plan"]).subqueries
    assert len(subqueries) == 1
    return subqueries[0]


def test_plan_maps_chinese_keywords_to_fields_doctype_and_years():
    sq = only_subquery(
        plan(
            {
                "question": "请你给出你知识库中2021-2022年资本增长率最快三家公司的股票代码是？",
                "catalog": ZH_CATALOG,
            }
        )
    )
    assert [(f.name, f.type, f.unit) for f in sq.fields] == [("capital_adequacy_ratio", "percent", "percent")]
    assert sq.restriction.doctypes == ["A股年报"] and sq.restriction.years == [2021, 2022]
    sq = only_subquery(
        plan({"question": "请你计算你知识库中2022年公司营业总成本的极差是多少？", "catalog": ZH_CATALOG})
    )
    assert [(f.name, f.unit) for f in sq.fields] == [("total_operating_cost", "CNY")]


def test_plan_english_ratio_question_asks_for_both_items():
    sq = only_subquery(
        plan(
            {
                "question": "Which 3 companies had the highest debt-to-assets ratio in 2022?",
                "catalog": US_CATALOG,
            }
        )
    )
    assert {f.name for f in sq.fields} == {"total_liabilities", "total_assets"}
    assert all(f.unit == "USD" for f in sq.fields)
    assert sq.restriction.doctypes == ["US Stock Annual Report"] and sq.restriction.years == [2022]


def test_plan_feedback_drops_years_the_catalog_lacks():
    question = "2023年资本充足率最高的三家公司？"
    assert only_subquery(plan({"question": question, "catalog": ZH_CATALOG})).restriction.years == [2023]
    again = plan({"question": question, "catalog": ZH_CATALOG, "feedback": "restriction matches no document"})
    assert only_subquery(again).restriction.years is None


CAR = {"name": "capital_adequacy_ratio", "description": "资本充足率。", "type": "percent", "unit": "percent"}
COST = {"name": "total_operating_cost", "description": "营业总成本。", "type": "number", "unit": "CNY"}


def test_extract_takes_the_labelled_value_not_its_siblings():
    passages = [
        "[page 2] 公司简介",
        "[page 7] 主要监管指标\n核心一级资本充足率 10.11% 9.80%\n一级资本充足率 12.01%\n资本充足率 15.44% 14.98%",
    ]
    value = extract_field(CAR, passages)
    assert value == {
        "field": "capital_adequacy_ratio",
        "disclosed": True,
        "value": "15.44%",
        "unit": "%",
        "quote": "资本充足率 15.44% 14.98%",
        "page": 7,
    }


def test_extract_reads_the_unit_note_and_the_next_line_of_column_tables():
    value = extract_field(
        COST, ["[page 12] 合并利润表 单位：万元\n项目 2022年\n营业总成本\n3,239,006.12\n营业利润 88"]
    )
    assert (value["value"], value["unit"], value["page"]) == ("3,239,006.12", "万元", 12)


def test_extract_says_not_disclosed_when_no_passage_states_it():
    value = extract_field(CAR, ["[page 1] 营业总成本 100 元"])
    assert value["disclosed"] is False and value["value"] is None


def test_normalize_converts_units_dates_and_per_ten_shares():
    specs = [
        COST,
        CAR,
        {
            "name": "pre_tax_dividend_per_share",
            "description": "税前每股股利。",
            "type": "number",
            "unit": "CNY",
        },
        {"name": "record_date", "description": "股权登记日。", "type": "date", "unit": "date"},
        {
            "name": "uses_gri_standard",
            "description": "是否使用或参照 GRI 标准。",
            "type": "boolean",
            "unit": "none",
        },
    ]
    items = [
        {"key": "a", "field": "total_operating_cost", "value": "3,239,006", "unit": "万元"},
        {"key": "b", "field": "capital_adequacy_ratio", "value": "0.1544", "unit": None},
        {"key": "c", "field": "pre_tax_dividend_per_share", "value": "每10股派3.80元", "unit": "元"},
        {"key": "d", "field": "record_date", "value": "2023年7月5日", "unit": None},
        {"key": "e", "field": "uses_gri_standard", "value": "否", "unit": None},
    ]
    out = {v["key"]: v["value"] for v in normalize_records({"field_specs": specs, "items": items})["values"]}
    assert out["a"] == 3_239_006 * 1e4
    assert abs(out["b"] - 15.44) < 1e-9
    assert abs(out["c"] - 0.38) < 1e-9
    assert out["d"] == "2023-07-05"
    assert out["e"] is False


def run(code, rows):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(code, {"df": pd.DataFrame(rows)})  # the brain's own code, in-process for the unit test
    return json.loads(buf.getvalue())


ROWS = [
    {"id": f"d{i}", "symbol": s, "year": y, "doctype": "A股年报", "capital_adequacy_ratio": v}
    for i, (s, y, v) in enumerate(
        [
            ("600000", 2021, 12.0),
            ("600036", 2021, 15.0),
            ("601398", 2021, 15.0),
            ("601988", 2021, 11.0),
            ("600000", 2022, 14.4),
            ("600036", 2022, 15.0),
            ("601398", 2022, 15.3),
            ("601988", 2022, None),
        ]
    )
]


def code_for(question, rows=ROWS):
    return write_code(
        {"question": question, "columns": "capital_adequacy_ratio (percent)", "sample_records": rows[:3]}
    )["code"]


def test_top_k_code_keeps_ties():
    out = run(code_for("2021年资本充足率最高的两家公司"), ROWS)
    assert out["operation"] == "top_k" and out["symbols"] == ["600036", "601398"]
    out = run(code_for("2021年资本充足率最低的1家公司"), ROWS)
    assert out["symbols"] == ["601988"]


def test_growth_code_compares_the_two_years():
    out = run(code_for("2021-2022年资本增长率最快的两家公司"), ROWS)
    assert out["operation"] == "growth" and out["symbols"] == ["600000", "601398"]


def test_range_and_count_code():
    out = run(code_for("2022年资本充足率的极差是多少？"), ROWS)
    assert abs(out["value"] - (15.3 - 14.4)) < 1e-9
    out = run(code_for("2021年资本充足率超过14%的公司有多少家？"), ROWS)
    assert out["value"] == 2 and out["symbols"] == ["600036", "601398"]


def test_fixed_code_is_the_safe_describe():
    out = run(fix_code({"question": "q", "code": "1/0", "error": "ZeroDivisionError"})["fixed_code"], ROWS)
    assert out["operation"] == "describe" and out["rows"] == len(ROWS)


def test_answers_follow_the_question_language_and_name_missing_documents():
    result = json.dumps(
        {
            "operation": "top_k",
            "metric": "capital_adequacy_ratio",
            "years": [2021],
            "order": "desc",
            "k": 3,
            "symbols": ["601398", "002142", "601166"],
        }
    )
    zh = answer_text("2021年资本充足率最高的三家公司", result, [])
    assert zh == "根据2021年数据分析，资本充足率最高的3家公司股票代码分别是：601398、002142、601166。"
    en = answer_text("Which companies had the highest capital adequacy?", result, ["doc-9"])
    assert en.startswith("Based on FY2021 data,") and "601398, 002142, 601166" in en and "doc-9" in en


def test_judge_compares_key_facts():
    gold = "根据2021年数据分析，资本充足率最高的三家公司股票代码分别是：601398、002142、601166。"
    assert judge({"gold_answer": gold, "model_answer": "601398、002142、601166"})["correct"] is True
    assert judge({"gold_answer": gold, "model_answer": "601398、002142"})["correct"] is False
    assert (
        judge({"gold_answer": "极差为172689968830.00元。", "model_answer": "极差为172689968830.0元"})[
            "correct"
        ]
        is True
    )


def test_brain_engine_answers_predictors_sync_and_async():
    dspy.configure(lm=brain_lm())
    pred = dspy.Predict(PlanQuestion)(
        question="2022年资本充足率最高的三家公司", catalog=ZH_CATALOG, feedback=""
    )
    assert pred.plan.subqueries[0].fields[0].name == "capital_adequacy_ratio"
    spec = FieldSpec(**CAR)
    extracted = asyncio.run(
        dspy.Predict(ExtractFacts).acall(
            document="600000 2022 A股年报",
            questions=["资本充足率？"],
            field_specs=[spec],
            passages=["[page 3] 资本充足率 13.5%"],
        )
    )
    assert extracted["values"][0].value == "13.5%" and extracted["values"][0].page == 3
    assert dspy.settings.lm.history[-1]["usage"]["total_tokens"] > 0


def test_extract_skips_prior_year_asides_and_reads_table_rows():
    holder = {
        "name": "largest_shareholder_holding_ratio",
        "description": "第一大股东持股比例。",
        "type": "percent",
        "unit": "percent",
    }
    passages = [
        "[page 7] 上年末，第一大股东某某公司持股比例为19.24%。",
        "[page 7] 前十名股东持股情况如下：股东名称 持股比例(%) 持股总数(股)\n某某投资有限公司 17.89 3,182,631,000",
    ]
    assert extract_field(holder, passages)["value"] == "17.89"
    cost = extract_field(COST, ["[page 3] 营业总成本1,393.28亿元，上年为1,441.65亿元；"])
    assert (cost["value"], cost["unit"]) == ("1,393.28亿元", "亿元")


def test_extract_counts_female_executives_in_run_together_table_rows():
    count = {
        "name": "female_executive_count",
        "description": "女性高管人数。",
        "type": "integer",
        "unit": "people",
    }
    row = "姓名 职务 性别 年龄 任期起始日期孔帆林 董事长 男 46 2016年4月萧艳燕 副行长 女 61 2017年11月马丽 非执行董事 女 58 2017年10月"
    value = extract_field(count, [f"[page 5] {row}"])
    assert (value["value"], value["page"]) == ("2", 5)


US_ROWS = [  # revenue ranks BIG first, margin ranks LEAN first
    {
        "symbol": s,
        "year": 2021,
        "operating_revenue": rev,
        "operating_costs": cost,
        "other_business_revenue": other,
    }
    for s, rev, cost, other in [
        ("BIG", 1000.0, 900.0, 10.0),
        ("LEAN", 200.0, 60.0, 50.0),
        ("MID", 500.0, 300.0, 5.0),
        ("TINY", 50.0, 40.0, 1.0),
    ]
]


def test_a_margin_or_a_share_is_computed_from_its_items_not_ranked_by_revenue():
    """It ranked "the highest gross profit margin" by operating revenue (BIG first) and said so as an answer."""

    def code(question):
        columns = "operating_revenue (number)\noperating_costs (number)\nother_business_revenue (number)"
        return write_code({"question": question, "columns": columns, "sample_records": US_ROWS})["code"]

    out = run(code("Which three companies had the highest gross profit margin in 2021?"), US_ROWS)
    assert out["metric"] == "gross_profit_margin" and out["symbols"] == ["LEAN", "MID", "TINY"]
    out = run(code("What is the population standard deviation of the gross profit margin in 2021?"), US_ROWS)
    assert abs(out["value"] - statistics.pstdev([0.1, 0.7, 0.4, 0.2])) < 1e-9
    out = run(
        code(
            "Which three companies had the highest share of other business revenue in total revenue in 2021?"
        ),
        US_ROWS,
    )
    assert out["metric"] == "other_business_revenue_ratio" and out["symbols"][:2] == ["LEAN", "TINY"]
