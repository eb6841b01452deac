"""Numbers, units and dates read from free text."""

import pytest

from evaluate.matching.entities import enumerations, find_mentions, ordered_symbols
from evaluate.matching.quantities import find_dates, find_quantities, fold, parse_date_value


def only(text):
    dates = [(d.start, d.end) for d in find_dates(text)]
    found = find_quantities(fold(text), dates)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    "text, value, kind",
    [
        ("资本充足率为18.02%", 0.1802, "percent"),
        ("增长率为-0.14%", -0.0014, "percent"),
        ("１８．０２％", 0.1802, "percent"),  # full-width
        ("社会捐赠额为10600.0万元", 1.06e8, "money"),
        ("1.06亿元", 1.06e8, "money"),
        ("5.44万亿元", 5.44e12, "money"),
        ("[OOMA]: -$3,655,000.00", -3.655e6, "money"),
        ("$4.85 billion", 4.85e9, "money"),
        ("出席人数为1047人", 1047, "person"),
        ("共有七家公司", 7, "count"),
        ("间隔1天", 1, "day"),
        ("召开3次", 3, "count"),
        ("19628079554股", 19628079554, "share"),
        ("in June", 6, "month"),
        ("比值为0.8566", 0.8566, "none"),
        ("极差为1.7269e+11元", 1.7269e11, "money"),  # as pandas prints
        ("$4.85B", 4.85e9, "money"),
        ("3千亿元", 3e11, "money"),  # the shared scale table: 千亿, 百亿, 十亿, 十万, 千 were missing here
        ("$2 millions", 2e6, "money"),  # plurals, as units.py always read them
    ],
)
def test_numbers_with_units(text, value, kind):
    q = only(text)
    assert q.value == pytest.approx(value) and q.kind == kind


def test_rounding_allowance_follows_printed_digits():
    assert only("18.0%").half_ulp == pytest.approx(0.0005)  # 18.0% is 17.95%..18.05%
    assert only("1726.9亿元").half_ulp == pytest.approx(0.05e8)


def test_range_dash_is_not_a_minus():
    values = [q.value for q in find_quantities("2021-2022年")]
    assert values == [2021, 2022]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2022年6月15日", (2022, 6, 15)),
        ("2022-06-15", (2022, 6, 15)),
        ("2022/6/15", (2022, 6, 15)),
        ("June 15, 2022", (2022, 6, 15)),
        ("6月15日", (None, 6, 15)),
        ("06-15", (None, 6, 15)),
        ("2022-02-30", None),
    ],
)
def test_dates(text, expected):
    assert parse_date_value(text) == expected


def test_codes_tickers_and_lists():
    text = fold("前三名：601398、002142，601166；[WMG], HAIN and HLI. 净利润123456元，KEY 不是代码")
    mentions = find_mentions(text, ["HAIN", "HLI", "KE"])
    assert ordered_symbols(mentions) == ["601398", "002142", "601166", "WMG", "HAIN", "HLI"]
    assert enumerations(text, mentions) == [["601398", "002142", "601166"], ["WMG", "HAIN", "HLI"]]


def test_a_token_with_an_exponent_beyond_a_float_is_no_quantity_and_no_crash():
    # issue 21: an answer tagged "[3e905312]" (a hash) crashed the scoring of the whole run (OverflowError)
    assert [q.value for q in find_quantities("净利润 1.5e+3 元 [3e905312]")] == [1500.0]


def test_the_demo_reader_and_the_scorer_read_chinese_counts_from_one_table():
    """fakes/ asks for the top K the scorer then reads in the answer: one table of digits (signatures)."""
    from fakes.coding import top_k
    from signatures.vocabulary import zh_numeral

    for numeral, count in [("一", 1), ("两", 2), ("三", 3), ("九", 9), ("十", 10)]:
        assert zh_numeral(numeral) == count
        assert top_k(f"资本充足率最高的前{numeral}家公司") == count
        assert [q.value for q in find_quantities(f"共有{numeral}家公司")] == [count]
    assert [zh_numeral(t) for t in ("十二", "二十三", "零", "百", "一二")] == [12, 23, 0, None, None]
