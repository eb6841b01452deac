"""Process accuracy: cell comparison rules, row/column/macro/micro arithmetic, explanations."""

import json
from pathlib import Path

import pytest

from evaluate.dataset import DatasetItem, GoldRow, load_dataset
from evaluate.matching.cells import compare_cell
from evaluate.matching.metrics import full_correct, process_scores, records_to_facts, score_question

MUDABENCH = Path(__file__).resolve().parents[3] / "shared" / "mudabench"


@pytest.mark.parametrize(
    "key, gold, got, expected",
    [
        ("value_capital_adequacy_ratio_pct", 15.44, 15.44, True),
        ("value_capital_adequacy_ratio_pct", 15.44, "15.44%", True),
        ("value_capital_adequacy_ratio_pct", 15.44, 0.1544, True),  # a fraction for percent points
        ("value_capital_adequacy_ratio_pct", 15.44, "15.4%", True),  # rounded as printed
        ("value_capital_adequacy_ratio_pct", 15.44, "14.44%", False),
        ("value_social_donation_10k_cny", 10600.0, "10600.0万元", True),
        ("value_social_donation_10k_cny", 10600.0, "1.06亿元", True),
        ("value_social_donation_10k_cny", 10600.0, 106000000, True),  # normalized to 元
        ("value_social_donation_10k_cny", 10600.0, "1060万元", False),
        ("value_total_operating_cost_cny", 3239006323.23, "323,900.63 万元", True),
        ("value_total_operating_cost_cny", 3239006323.23, "3,239,006 万元", False),  # ten times too large
        (
            "value_total_operating_cost_cny",
            3239006323.23,
            "3.2e9",
            False,
        ),  # 1.2% off: an extraction should be exact
        ("value_net_profit_usd", 610856000.0, "$610.9 million", True),
        ("value_gross_profit_margin", 0.858094864758918, "85.81%", True),
        ("value_gross_profit_margin", 0.858094864758918, 85.81, True),  # percent points without %
        ("value_female_executive_count", 7, "7人", True),
        ("value_female_executive_count", 7, 8, False),
        ("value_third_party_assured", True, "是", True),
        ("value_third_party_assured", True, "no", False),
        ("value_third_party_assured", False, False, True),
        (
            "value_accounting_firm_name",
            "普华永道中天会计师事务所(特殊普通合伙)",
            "普华永道中天会计师事务所（特殊普通合伙）",
            True,
        ),
        (
            "value_accounting_firm_name",
            "普华永道中天会计师事务所(特殊普通合伙)",
            "普华永道中天会计师事务所",
            True,
        ),
        (
            "value_accounting_firm_name",
            "普华永道中天会计师事务所(特殊普通合伙)",
            "安永华明会计师事务所",
            False,
        ),
        ("value_office_address", "广东省深圳市福田区深南大道7088号", "深圳市福田区深南大道7088号", True),
        ("value_record_date", "2022-07-05", "2022年7月5日", True),
        ("value_record_date", "2022-07-05", "2022-07-06", False),
        ("value_record_date_mmdd", "06-20", "2023-06-20", True),
        (
            "value_annual_meeting_methods",
            ["现场投票", "网络投票"],
            "网络投票、现场投票",
            True,
        ),  # lists as sets
        ("value_annual_meeting_methods", ["现场投票", "网络投票"], ["现场投票"], False),
        (
            "value_shareholder_meeting_events",
            [{"month": 6, "meeting_type": "年度股东大会"}],
            [{"meeting_type": "年度股东大会", "month": 6}],
            True,
        ),
        ("value_assurance_org_name", None, None, True),  # gold: not disclosed
        ("value_assurance_org_name", None, "未披露", True),
        ("value_assurance_org_name", None, "安永华明会计师事务所", False),
        ("value_tax_total_10k_cny", 257700.0, None, False),
    ],
)
def test_cells(key, gold, got, expected):
    correct, _ = compare_cell(key, gold, got)
    assert correct is expected


def _item(qid: str, rows: list[tuple[str, dict]]) -> DatasetItem:
    return DatasetItem(
        question_id=qid,
        question="q",
        final_answer="a",
        metadata=[
            GoldRow(id=doc, symbol=doc.upper(), year=2022, doctype="A股年报", values=v) for doc, v in rows
        ],
    )


def test_rows_columns_macro_micro_by_hand():
    # q1: 2 documents x 2 fields; doc a fully right, doc b has one field wrong.
    q1 = _item(
        "q1",
        [("a", {"value_x_cny": 1.0, "value_y_pct": 10.0}), ("b", {"value_x_cny": 2.0, "value_y_pct": 20.0})],
    )
    # q2: 1 document x 1 field, wrong.
    q2 = _item("q2", [("c", {"value_x_cny": 5.0})])
    facts = {
        "q1": {
            "a": {"value_x_cny": 1.0, "y": "10%"},
            "b": {"x_cny": 2.0, "value_y_pct": 25.0},
        },  # key variants accepted
        "q2": {"c": {"value_x_cny": 6.0}},
    }
    scores = process_scores([q1, q2], facts)
    first = scores.per_question[0]
    assert (first.cell_accuracy, first.row_accuracy, first.column_accuracy) == (0.75, 0.5, 0.5)
    assert first.rows == {"a": True, "b": False} and first.columns == {
        "value_x_cny": True,
        "value_y_pct": False,
    }
    assert scores.macro == {"cell": (0.75 + 0) / 2, "row": (0.5 + 0) / 2, "column": (0.5 + 0) / 2}
    assert scores.micro == {"cell": 3 / 5, "row": 1 / 3, "column": 1 / 3}
    assert "B value_y_pct: got 25, gold 20" in first.feedback()
    assert not first.all_rows_right and full_correct(True, first) is False


def test_missing_documents_and_fields_are_wrong_and_explained():
    item = _item("q", [("a", {"value_x_cny": 1.0}), ("b", {"value_x_cny": 2.0})])
    result = score_question(item, {"a": {}})
    assert [c.correct for c in result.cells] == [False, False]
    assert "field not extracted" in result.cells[0].explanation
    assert "document not extracted" in result.cells[1].explanation


def test_full_correct_needs_every_row():
    item = _item("q", [("a", {"value_x_cny": 1.0})])
    right = score_question(item, {"a": {"value_x_cny": "1元"}})
    assert full_correct(True, right) is True
    assert full_correct(None, right) is False and full_correct(False, right) is False


def test_records_become_facts():
    records = [
        {"id": "a", "symbol": "A", "year": 2022, "doctype": "A股年报", "capital_adequacy_ratio": 15.44},
        {"symbol": "no id"},
    ]
    assert records_to_facts(records) == {"a": {"capital_adequacy_ratio": 15.44}}


@pytest.mark.parametrize("name", ["simple.json", "complex.json"])
def test_real_gold_against_itself_is_perfect_and_a_change_is_caught(name):
    path = MUDABENCH / name
    if not path.exists():
        pytest.skip(f"{path} absent")
    items = load_dataset(path)
    facts = {it.question_id: {row.id: dict(row.values) for row in it.metadata} for it in items}
    scores = process_scores(items, facts)
    assert scores.macro == {"cell": 1.0, "row": 1.0, "column": 1.0} == scores.micro
    # Change one numeric cell per question: exactly that cell goes wrong.
    changed = 0
    for item in items:
        for row in item.metadata:
            key = next((k for k, v in row.values.items() if isinstance(v, float)), None)
            if key:
                facts[item.question_id][row.id] = {**row.values, key: row.values[key] * 1.5 + 1}
                changed += 1
                break
    scores = process_scores(items, facts)
    wrong = sum(not c.correct for q in scores.per_question for c in q.cells)
    assert wrong == changed > 50
    json.dumps(scores.as_dict())  # serializable for the report


def test_planner_field_names_align_to_gold_keys():
    from evaluate.matching.process import align_keys

    assert align_keys(["value_capital_adequacy_ratio_pct"], ["car"]) == {
        "value_capital_adequacy_ratio_pct": "car"
    }
    pairs = align_keys(
        ["value_total_operating_cost_cny", "value_net_profit_cny", "value_capital_adequacy_ratio_pct"],
        ["capital_adequacy", "net_profit", "operating_cost_total", "company_name"],
    )
    assert pairs == {
        "value_total_operating_cost_cny": "operating_cost_total",
        "value_net_profit_cny": "net_profit",
        "value_capital_adequacy_ratio_pct": "capital_adequacy",
    }
    # records from the program, with its own names, score through the alignment
    item = _item("q", [("a", {"value_record_date": "2022-07-05", "value_ex_dividend_date": "2022-07-06"})])
    facts = records_to_facts(
        [{"id": "a", "symbol": "A", "record_date": "2022年7月5日", "ex_date": "2022-07-06"}]
    )
    assert score_question(item, facts).cell_accuracy == 1.0


def test_questions_without_gold_cells_stay_out_of_the_averages_and_nothing_scores_zero():
    empty = _item("empty", [("a", {})])
    one = _item("one", [("b", {"value_x_cny": 1.0, "value_y_cny": 2.0})])
    scores = process_scores([empty, one], {"empty": {"a": {}}, "one": {"b": {"value_x_cny": 1.0}}})
    assert scores.per_question[0].cells == [] and scores.per_question[0].cell_accuracy == 0.0
    assert scores.macro == {"cell": 0.5, "row": 0.0, "column": 0.5}  # "empty" would have halved these
    assert scores.micro == {"cell": 0.5, "row": 0.0, "column": 0.5}
    assert json.loads(json.dumps(scores.as_dict())) == {
        "process_macro": scores.macro,
        "process_micro": scores.micro,
    }
    nothing = process_scores([], {})
    assert nothing.macro == nothing.micro == {"cell": 0.0, "row": 0.0, "column": 0.0}
