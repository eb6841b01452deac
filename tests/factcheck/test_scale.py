"""One scale rule for amounts (issue 29 item 3): read off the page, kept on the fact, applied by the normalizer.

Seen on real 10-Ks with the demo reader: "in millions" scaled for Verizon (its unit said "USD millions")
but not for PepsiCo and Corning (its unit said nothing), so one column mixed dollars and millions.
"""

from __future__ import annotations

import pytest

from factcheck.check import VALUE_NOT_IN_QUOTE, VERIFIED, check_fact, is_amount
from programs.facts.store import FactStore
from programs.stages.normalizer import Normalizer
from programs.stages.verification import checked
from signatures.types import Fact, FieldSpec

STATEMENT = """Consolidated Statement of Income
PepsiCo, Inc. and Subsidiaries
Fiscal years ended December 31, 2022, December 25, 2021 and December 26, 2020
(in millions except per share amounts)
2022 2021 2020
Net Revenue $ 86,392 $ 79,474 $ 70,372
Net income 8,978 7,679 7,175
Basic $ 6.45 $ 5.51 $ 5.14"""
QUOTE = "Net Revenue $ 86,392 $ 79,474 $ 70,372"


@pytest.mark.parametrize(
    "value, unit, scale",
    [
        ("86,392", None, 1e6),  # as printed, no unit: the page's scale is applied later
        ("86,392", "USD", 1e6),
        ("86,392", "USD millions", 1.0),  # the unit says it already
        (86392000000.0, "USD", 1.0),  # converted already
        ("$86.4 billion", None, 1.0),  # rounded, with its own scale word
    ],
)
def test_the_scale_is_read_above_the_statement(value, unit, scale):
    verdict = check_fact(value, unit, QUOTE, 1, {1: STATEMENT}, amount=True)
    assert verdict.status == VERIFIED, verdict.reason
    assert verdict.scale == scale
    assert (
        "(in millions except per share amounts)" in verdict.scale_source and "page 1" in verdict.scale_source
    )


@pytest.mark.parametrize(
    "value, unit", [("86,392", "USD thousands"), ("86,392 thousand", None), (86392000.0, "USD")]
)
def test_a_scale_other_than_the_pages_is_flagged(value, unit):
    verdict = check_fact(value, unit, QUOTE, 1, {1: STATEMENT}, amount=True)
    assert verdict.status == VALUE_NOT_IN_QUOTE and "states amounts in millions" in verdict.reason, verdict


def test_without_amount_the_scale_is_not_judged():
    assert check_fact("86,392", "USD thousands", QUOTE, 1, {1: STATEMENT}).status == VERIFIED


@pytest.mark.parametrize(
    "page, value, unit, scale",
    [
        ("资产负债表\n单位：万元 币种：人民币\n资产总计 5,917,340 5,512,003", "5,917,340", "元", 1e4),
        ("主要会计数据（单位：人民币千元）\n营业收入 1,234,567 1,100,000", "1,234,567", None, 1e3),
        ("Selected data\n($ in thousands)\nTotal assets 5,917,340 5,512,003", "5,917,340", "USD", 1e3),
        (
            "Corning had deferred revenue of approximately $912 million and $1.0 billion.",
            "912 million",
            None,
            1.0,
        ),
    ],
)
def test_every_way_a_scale_is_printed(page, value, unit, scale):
    quote = page.splitlines()[-1]
    verdict = check_fact(value, unit, quote, 3, {3: page}, amount=True)
    assert (verdict.status, verdict.scale) == (VERIFIED, scale), verdict


def test_a_scale_that_cannot_be_read_is_flagged_not_guessed():
    page = (
        "Consolidated Net Revenue and Operating Profit\n2022 2021 Change\nNet revenue $ 86,392 $ 79,474 9 %"
    )
    verdict = check_fact("86,392", None, "Net revenue $ 86,392 $ 79,474 9 %", 2, {2: page}, amount=True)
    assert verdict.status == VERIFIED and verdict.scale is None
    assert verdict.scale_source.startswith("unread")


def _fact(**kw) -> Fact:
    base = dict(
        doc_id="P",
        field="revenue",
        value="86,392",
        quote=QUOTE,
        page=1,
        field_type="number",
        field_unit="USD",
    )
    return Fact(**{**base, **kw})


def test_the_normalizer_applies_the_pages_scale_to_every_value_alike():
    spec = FieldSpec(name="revenue", type="number", unit="USD", description="net revenue")
    as_printed = checked(_fact(), {1: STATEMENT})
    with_unit = checked(_fact(doc_id="Q", unit="USD millions"), {1: STATEMENT})
    assert as_printed.scale == 1e6 and with_unit.scale == 1.0
    out = Normalizer().by_rules([spec], [as_printed, with_unit])
    values = out[1]
    assert values["P"]["revenue"] == values["Q"]["revenue"] == 86392000000.0
    assert "in millions" in out[3]["P:revenue"]
    assert not out[2]  # both normalized by the rules, nothing left for an LM


def test_an_unread_scale_is_kept_as_given_and_said():
    spec = FieldSpec(name="revenue", type="number", unit="USD", description="net revenue")
    page = "Net revenue $ 86,392 $ 79,474 9 %"
    fact = checked(_fact(quote=page), {1: page})
    assert fact.scale is None and fact.scale_source.startswith("unread")
    out = Normalizer().by_rules([spec], [fact])
    assert out[1]["P"]["revenue"] == 86392.0 and "scale unread" in out[3]["P:revenue"]


def test_the_fact_store_keeps_the_scale(tmp_path):
    store = FactStore(tmp_path / "facts.sqlite")
    fact = checked(_fact(description="net revenue"), {1: STATEMENT})
    store.put_many([fact])
    again = store.get("P", "revenue", "net revenue")
    assert again is not None
    assert (again.scale, again.scale_source) == (1e6, fact.scale_source)


def test_a_sections_statement_scales_its_tables_that_print_none():
    # PepsiCo 2022: MD&A opens "Unless otherwise noted, tabular dollars are presented in millions";
    # its table on page 40 prints no scale of its own
    pages = {
        32: "Our discussion and analysis ... Unless otherwise noted, tabular dollars are presented in millions,\n"
        "except per share amounts.",
        33: "Our Business",
        40: "Consolidated Net Revenue and Operating Profit\n2022 2021 Change\nNet revenue $ 86,392 $ 79,474 9 %",
    }
    verdict = check_fact("86,392", None, "Net revenue $ 86,392 $ 79,474 9 %", 40, pages, amount=True)
    assert (verdict.status, verdict.scale) == (VERIFIED, 1e6), verdict
    assert verdict.scale_source.startswith("page 32:") and "tabular dollars" in verdict.scale_source
    # a table header of another page ("(dollars in millions)" over Verizon's tables) is no section statement
    pages[32] = "(dollars in millions)\nOperating revenues 133,613"
    assert (
        check_fact("86,392", None, "Net revenue $ 86,392 $ 79,474 9 %", 40, pages, amount=True).scale is None
    )


PER_SHARE_ROW = STATEMENT.replace("Basic", "Net income per diluted share")


@pytest.mark.parametrize("field", ["net_income_per_diluted_share", "dividends_per_common_share"])
def test_a_per_share_figure_is_not_scaled_by_in_millions(field):
    # "(in millions except per share amounts)": a per-share field named "per diluted share" was scaled x1e6
    quote = "Net income per diluted share $ 6.45 $ 5.51 $ 5.14"
    fact = Fact(doc_id="d", field=field, value="6.45", unit="USD", quote=quote, page=1, field_unit="USD")
    verdict = check_fact("6.45", "USD", quote, 1, {1: PER_SHARE_ROW}, amount=is_amount(fact))
    assert verdict.status == VERIFIED and verdict.scale in (None, 1.0), verdict


def test_a_per_share_row_is_not_scaled_whatever_the_field_is_called():
    quote = "Net income per diluted share $ 6.45 $ 5.51 $ 5.14"
    verdict = check_fact("6.45", "USD", quote, 1, {1: PER_SHARE_ROW}, amount=True)
    assert verdict.status == VERIFIED and verdict.scale in (None, 1.0), verdict


@pytest.mark.parametrize(
    "header",
    [
        "(Shares in thousands, dollars in millions)",
        "(in thousands of shares, except per share data; dollars in millions)",
        "(In millions, except per share data and shares in thousands)",
    ],
)
def test_the_shares_scale_is_not_the_amounts_scale(header):
    # the shares' "in thousands" was read as the amounts' scale: a true "USD millions" fact failed, and an
    # amount without a unit was scaled x1e3
    page = STATEMENT.replace("(in millions except per share amounts)", header)
    assert check_fact("86,392", "USD millions", QUOTE, 1, {1: page}, amount=True).status == VERIFIED
    assert check_fact("86,392", "USD", QUOTE, 1, {1: page}, amount=True).scale == 1e6
