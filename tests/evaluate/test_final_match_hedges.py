"""Issue 33 item 7: hedges and enumerations are wrong in every wording; honest answers keep their verdict.

Before: "可能是1家，也可能是5家", "0家 1家 ... 8家", "...元，也可能是12345元" were marked correct, and
answers stuffed with every code and number scored 4 of 31. Over the real MuDABench gold
(`python -m bench.hostile_answers`): hedge_zh 688/712, hedge_en 516/534, enumeration 325/428 and
stuffed 58/494 hostile answers scored correct before; 0, 0, 6 and 2 after (the 6: a list of months
beside a distribution of months; the 2: item 26, whose gold lists every company).
"""

import json
from pathlib import Path

import pytest

from evaluate.matching.final_match import final_match

COUNT_Q = "针对中国A股市场，在你的知识库中2021年有多少家办公地址在深圳的公司？"
COUNT_GOLD = "根据2021年数据分析，办公地址在深圳的公司共有1家。"
RANGE_Q = "针对中国A股市场，请你计算你知识库中2021年公司营业总成本的极差是多少？"
RANGE_GOLD = "根据2021年数据分析，知识库中公司营业总成本的极差为172689968830.00元。"
US_COUNT_Q = "Based on US stock market, how many companies had a current ratio above 2 in 2022?"
US_COUNT_GOLD = "Based on 2022 data, a total of 4 companies had a current ratio above 2."
TOP3_Q = "针对中国A股市场，请你给出你知识库中2021年资本充足率最高的三家公司股票代码和资本充足率"
TOP3_GOLD = "资本充足率最高的三家公司分别是：601398（18.02%）、002142（17.50%）、601166（16.10%）。"
TOP3_SYMBOLS = ["601398", "002142", "601166", "002839", "600908", "600000", "600015", "600016"]
TIMES_Q = "针对中国A股市场，2021年召开临时股东大会次数最多的公司是哪家？召开了几次？"
TIMES_GOLD = "召开临时股东大会次数最多的公司是600016，共4次。"


def verdict(question, gold, answer, symbols=()):
    result = final_match(question, gold, answer, list(symbols))
    assert result.reason
    return result.correct if result.decided else "undecided"


@pytest.mark.parametrize(
    "answer",
    [
        "可能是1家，也可能是5家",  # the report's wording
        "共有1家，也可能是5家",
        "共有1家，但也可能是2家",
        "要么1家要么2家",
        "共有1家，或许是3家",
        "大概1家，也许是2家",
    ],
)
def test_a_hedged_count_in_chinese_is_wrong(answer):
    assert verdict(COUNT_Q, COUNT_GOLD, answer) is False


def test_a_hedged_amount_is_wrong():
    # the report's wording: a gold amount offered beside another
    assert verdict(RANGE_Q, RANGE_GOLD, "极差为172689968830.00元，也可能是12345元") is False
    assert verdict(RANGE_Q, RANGE_GOLD, "极差为172689968830.00元") is True


@pytest.mark.parametrize(
    "answer",
    [
        "4, or possibly 5 companies",
        "4 companies, though it could also be 5 companies",
        "maybe 4, maybe 5 companies",
        "4 companies, but it might be 6 companies",
        "4 or perhaps 3 companies",
    ],
)
def test_a_hedged_count_in_english_is_wrong(answer):
    assert verdict(US_COUNT_Q, US_COUNT_GOLD, answer) is False


@pytest.mark.parametrize(
    "answer",
    [
        "0家 1家 2家 3家 4家 5家 6家 7家 8家",  # the report's enumeration
        "共有0家、1家、2家、3家、4家",
        "0, 1, 2, 3, 4 companies",
    ],
)
def test_every_count_listed_is_wrong(answer):
    question, gold = (US_COUNT_Q, US_COUNT_GOLD) if "compan" in answer else (COUNT_Q, COUNT_GOLD)
    if "compan" in answer:
        answer = answer.replace("0, 1, 2, 3, 4", "2, 3, 4, 5, 6, 7")
    assert verdict(question, gold, answer) is False


def test_a_list_of_amounts_holding_the_gold_one_is_wrong():
    amounts = "、".join(f"{d}72689968830.00元" for d in (2, 3, 1, 4, 5))
    assert verdict(RANGE_Q, RANGE_GOLD, f"极差为{amounts}") is False


def test_a_list_of_values_for_one_company_where_the_gold_states_one_is_wrong():
    symbols = ["600016", "601288", "600908"]
    answer = "次数最多的公司是600016（4次、5次、6次、3次、7次）"
    assert verdict(TIMES_Q, TIMES_GOLD, answer, symbols) is False
    assert verdict(TIMES_Q, TIMES_GOLD, "次数最多的公司是600016（4次）", symbols) is not False


def test_an_answer_stuffed_with_every_code_and_number_is_wrong():
    codes = "、".join(TOP3_SYMBOLS)
    stuffed = f"相关公司：{codes}。相关数值：18.02%、17.50%、16.10%、15.00%、14.20%、13.10%、12.00%。"
    assert verdict(TOP3_Q, TOP3_GOLD, stuffed, TOP3_SYMBOLS) is False
    values = "、".join(f"{d}72689968830.00元" for d in (2, 3, 1, 4))
    assert verdict(RANGE_Q, RANGE_GOLD, f"相关公司：{codes}。相关数值：{values}。", TOP3_SYMBOLS) is False


@pytest.mark.parametrize(
    "answer",
    [
        "资本充足率最高的三家公司分别是：601398（18.02%）、002142（17.50%）、601166（16.10%）。",
        "601398、002142、601166，资本充足率分别为18.02%、17.50%、16.10%。",
        "Top three: 601398 18.02%, 002142 17.50%, 601166 16.10%.",
    ],
)
def test_a_list_answer_naming_the_three_asked_is_not_marked_wrong(answer):
    # (the second is undecided as before: its values stand apart from their companies)
    assert verdict(TOP3_Q, TOP3_GOLD, answer, TOP3_SYMBOLS) is not False


def test_a_table_by_year_is_no_enumeration():
    question = "针对中国A股市场，2022年资本充足率最高的公司的股票代码和资本充足率是？"
    gold = "资本充足率最高的公司是601398，资本充足率为15.30%。"
    answer = "最高的是601398，资本充足率为15.30%（2020, 14.1%, 2021, 14.9%, 2022, 15.30%）。"
    assert verdict(question, gold, answer, ["601398", "600000"]) is True


def test_one_value_written_two_ways_is_still_no_hedge():
    std_q = "针对中国A股市场，请你计算你知识库中2021年各公司资本充足率的总体标准差是多少？"
    std_gold = "根据2021年数据分析，各公司资本充足率的总体标准差为1.7935个百分点。"
    assert verdict(std_q, std_gold, "1.7935个百分点，也可能写作0.017935") is True
    assert (
        verdict(std_q, std_gold, "1.7935个百分点，可能是因为银行扩张") is True
    )  # "可能是" not between values


MUDABENCH = Path(__file__).resolve().parents[3] / "shared" / "mudabench"


def test_no_hostile_answer_made_from_the_mudabench_gold_scores_correct():
    """Every gold scores correct against itself; hedges in every wording score correct nowhere."""
    from bench.hostile_answers import hostile

    if not (MUDABENCH / "simple.json").exists():
        pytest.skip(f"{MUDABENCH} absent: the MuDABench gold is only on machines with ../shared/mudabench")
    passed: dict[str, list[str]] = {}
    for name in ("simple.json", "complex.json"):
        for n, item in enumerate(json.loads((MUDABENCH / name).read_text(encoding="utf-8"))):
            symbols = [row["symbol"] for row in item["metadata"]]
            itself = final_match(item["question"], item["final_answer"], item["final_answer"], symbols)
            assert itself.correct is not False, f"{name}[{n}]: gold vs itself wrong: {itself.reason}"
            if itself.correct is not True:
                continue
            for pattern, answers in hostile(item).items():
                for answer in answers:
                    if final_match(item["question"], item["final_answer"], answer, symbols).correct:
                        passed.setdefault(pattern, []).append(f"{name}[{n}]")
    assert "hedge_zh" not in passed and "hedge_en" not in passed
    # measured: a list of months beside a month distribution (complex 104-106, two wordings each);
    # item 26, whose gold names every company (so "every company" is its right answer)
    assert len(passed.get("enumeration", [])) <= 6 and len(passed.get("stuffed", [])) <= 2, passed
