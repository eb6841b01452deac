"""The deterministic conversion table: zh + en money, percents, per-10-share, dates, booleans, lists."""

from __future__ import annotations

import pytest

from programs.stages.units import parse_value
from signatures.types import FieldSpec


def spec(type_="number", unit="CNY") -> FieldSpec:
    return FieldSpec(name="x", description="x", type=type_, unit=unit)


@pytest.mark.parametrize(
    ("raw", "unit", "expected"),
    [
        ("3,239,006 万元", None, 32_390_060_000.0),
        ("3,239,006", "万元", 32_390_060_000.0),
        ("1.5亿元", None, 150_000_000.0),
        ("2.3万亿元", None, 2.3e12),
        ("12,345.67元", None, 12345.67),
        ("-12.5", "万元", -125_000.0),
        ("(1,234)", None, -1234.0),
        ("（１，２３４）", "千元", -1_234_000.0),
        ("$1.2 billion", None, 1.2e9),
        ("$3.4M", None, 3.4e6),
        ("1,234", "USD thousands", 1_234_000.0),
        ("(56.7)", "in millions", -56_700_000.0),
        ("RMB 89 million", None, 89e6),
        ("12", "in millions", 12e6),
        ("3千亿元", None, 3e11),
        ("450", None, 450.0),
        ("每10股派发现金红利3.00元(含税)", None, 0.3),
        ("10派3元", None, 0.3),
        ("3.5", "元/10股", 0.35),
        ("cash dividend of $2.50 per 10 shares", None, 0.25),
    ],
)
def test_money(raw, unit, expected):
    parsed = parse_value(raw, unit, spec())
    assert parsed.ok and parsed.value == pytest.approx(expected)


@pytest.mark.parametrize(
    ("raw", "unit", "expected"),
    [
        ("15.44%", None, 15.44),
        ("15.44", "%", 15.44),
        ("0.1544", None, 15.44),
        ("-0.14%", None, -0.14),
        ("12.5 percent", None, 12.5),
        ("１５．４４％", None, 15.44),
        ("23", None, 23.0),
    ],
)
def test_percent_points(raw, unit, expected):
    parsed = parse_value(raw, unit, spec("percent", "percent"))
    assert parsed.ok and parsed.value == pytest.approx(expected)


def test_ratio_unit_is_a_fraction():
    assert parse_value("45%", None, spec("number", "ratio")).value == pytest.approx(0.45)
    assert parse_value("0.45", None, spec("number", "ratio")).value == pytest.approx(0.45)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2023年5月12日", "2023-05-12"),
        ("2023-05-12", "2023-05-12"),
        ("2023/5/2", "2023-05-02"),
        ("2023.05.12", "2023-05-12"),
        ("20230512", "2023-05-12"),
        ("May 12, 2023", "2023-05-12"),
        ("12 Sept. 2023", "2023-09-12"),
        ("股权登记日为2024年6月3日", "2024-06-03"),
    ],
)
def test_dates(raw, expected):
    assert parse_value(raw, None, spec("date", "date")).value == expected


def test_impossible_date_goes_to_the_lm():
    assert not parse_value("2023-02-30", None, spec("date", "date")).ok
    assert not parse_value("next spring", None, spec("date", "date")).ok


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("是", True),
        ("否", False),
        ("Yes", True),
        ("no.", False),
        ("有", True),
        ("无", False),
        ("TRUE", True),
    ],
)
def test_booleans(raw, expected):
    assert parse_value(raw, None, spec("boolean", "none")).value is expected


def test_unclear_boolean_goes_to_the_lm():
    assert not parse_value("部分是", None, spec("boolean", "none")).ok
    assert not parse_value(
        "已审验", None, spec("boolean", "none")
    ).ok  # a scorer-only word: the LM reads it here


def test_not_disclosed_on_a_yes_no_field_stays_null():
    assert parse_value("未披露", None, spec("boolean", "none")).value is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("普华永道、德勤", ["普华永道", "德勤"]),
        ("KPMG, EY and PwC", ["KPMG", "EY", "PwC"]),
        ('["a", "b"]', ["a", "b"]),
        (["x ", ""], ["x"]),
    ],
)
def test_lists(raw, expected):
    assert parse_value(raw, None, spec("list", "none")).value == expected


@pytest.mark.parametrize("raw", [None, "未披露", "N/A", "not disclosed", "—", "", "无", "not stated"])
def test_not_disclosed_is_null(raw):
    parsed = parse_value(raw, None, spec())
    assert parsed.ok and parsed.value is None


def test_integers_and_shares_and_people():
    assert parse_value("1.2万人", None, spec("integer", "people")).value == 12000
    assert parse_value("3.5亿股", None, spec("integer", "shares")).value == 350_000_000
    assert not parse_value("12.5", None, spec("integer", "count")).ok  # not whole: ask the LM


def test_strings_are_cleaned_and_numbers_missing_go_to_the_lm():
    assert parse_value("  上海市  浦东新区 ", None, spec("string", "none")).value == "上海市 浦东新区"
    assert not parse_value("about fifteen", None, spec()).ok


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2023年营业收入为1.5亿元", 1.5e8),
        ("FY2023 revenue of $3.2 billion", 3.2e9),
        ("2023年", 2023.0),
        ("fiscal year 2022: 1,234", 1234.0),
    ],
)
def test_year_labels_are_not_the_value(raw, expected):
    assert parse_value(raw, None, spec()).value == pytest.approx(expected)


def test_the_scale_nearest_the_number_wins():
    assert parse_value("3,239,006 万元，同比增加5亿元", None, spec()).value == pytest.approx(32_390_060_000.0)
    assert parse_value("1,234 (in thousands), up 2 million", None, spec()).value == pytest.approx(1_234_000.0)
