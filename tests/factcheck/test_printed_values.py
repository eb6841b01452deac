"""A value is found in text however a filing prints it, and a different value is not."""

import pytest

from factcheck.printed_values import dates, value_in_text
from signatures.vocabulary import is_not_disclosed


@pytest.mark.parametrize(
    "value, unit, text",
    [
        ("1,234", None, "Total revenue 1,234"),
        ("1234", None, "Total revenue 1,234"),
        (1234.0, "USD", "Total revenue 1,234"),
        ("(1,234)", None, "Net loss (1,234)"),
        ("-1234", None, "Net loss (1,234)"),
        ("12.3%", None, "gross margin 0.123"),
        (0.123, "ratio", "gross margin 12.3%"),
        ("13.96", "percent", "资本充足率 13.96%"),
        ("1.2亿元", None, "营业收入12,000万元"),
        (120000000.0, "CNY", "营业收入1.2亿元"),
        ("3,239,006 万元", None, "营业收入 32,390,060,000 元"),
        ("5,917,340", "USD thousands", "Total assets $ 5,917,340"),
        (5917340000.0, "USD", "Total assets $ 5,917,340"),
        ("$5.9 billion", None, "Total assets $ 5,917,340"),  # printed rounded, two significant digits
        ("0.496", "元/股", "每10股派发现金红利4.96元（含税）"),
        ("2022-06-15", "date", "股权登记日：2022年6月15日"),
        ("2022年6月15日", None, "record date 2022-06-15"),
        ("June 15, 2022", None, "股权登记日 2022/6/15"),
        ("06-15", "date", "股权登记日：2022年6月15日"),
        ("安永华明会计师事务所（特殊普通合伙）", None, "会计师事务所名称 安永华明会计师事务所(特殊普通合伙)"),
        (["现场投票", "网络投票"], None, "采用现场投票和网络投票相结合的方式召开"),
    ],
)
def test_printed_forms_match(value, unit, text):
    ok, how = value_in_text(value, unit, text)
    assert ok, how


@pytest.mark.parametrize(
    "value, unit, text",
    [
        ("1,235", None, "Total revenue 1,234"),  # a changed digit
        ("5,512,003", None, "Total assets $ 5,917,340"),  # last year's figure, not in this cell
        ("0.496", "元/股", "每股派发现金红利4.96元"),  # a shift of ten is explained only by per-10-shares
        ("$6 billion", None, "Total assets $ 5,917,340"),  # one significant digit: no rounding slack
        ("14.1%", None, "资本充足率 13.96%"),
        ("2022-06-16", "date", "股权登记日：2022年6月15日"),
        ("2021-06-15", "date", "股权登记日：2022年6月15日"),
        ("普华永道中天会计师事务所(特殊普通合伙)", None, "安永华明会计师事务所(特殊普通合伙)"),
        (["现场投票", "书面表决"], None, "采用现场投票和网络投票相结合的方式召开"),
        ("", None, "anything"),
        ("3,000", None, "Total assets (Note 3) 5,917,340"),  # a note number is no amount in thousands
        ("20.22%", None, "2022年 | 资本充足率 | 13.96%"),  # nor is a year label a percent
    ],
)
def test_other_values_do_not_match(value, unit, text):
    ok, how = value_in_text(value, unit, text)
    assert not ok, how


def test_dates_in_every_form_read_the_same():
    assert dates("2022年6月15日") == dates("2022-06-15") == dates("2022/6/15") == [(2022, 6, 15)]
    assert dates("June 15, 2022") == dates("15 June 2022") == [(2022, 6, 15)]
    assert dates("2022年2月30日") == []  # not a calendar date


def test_not_disclosed_values():
    assert is_not_disclosed(None) and is_not_disclosed("未披露") and is_not_disclosed(" N/A ")
    assert not is_not_disclosed(0) and not is_not_disclosed("0") and not is_not_disclosed(False)
