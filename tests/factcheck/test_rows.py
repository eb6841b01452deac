"""A real figure of the wrong row or column, quoted with its own line, is caught (issue 29 item 3, last bullet).

The proxy that corrupted a cheap extractor's replies got 22 of 23 such documents past the cascade:
the value was printed in its quote, so the check verified it. Pages here are shaped like 10-K statements.
"""

from __future__ import annotations

import pytest

from factcheck.check import VALUE_NOT_IN_QUOTE, VERIFIED, check_fact
from factcheck.check import check as check_one
from retrievers.documents.page_text import PageTexts
from signatures.types import Fact

AMD = """Consolidated Statements of Operations
Year Ended
December 26,
2015
December 27,
2014
December 28,
2013
(In millions, except per share amounts)
Net revenue $ 3,991 $ 5,506 $ 5,299
Cost of sales 2,911 3,667 3,321
Gross margin 1,080 1,839 1,978
Operating income (loss) (481) (155) 103
Interest expense (160) (177) (177)
Provision for income taxes 14 5 9
Net loss $ (660) $ (403) $ (83)"""
AMAZON = """(in millions, except per share data)
 Year Ended December 31,
2015 2016 2017
Total net sales 107,006 135,987 177,866
Operating income 2,233 4,186 4,106"""
SALESFORCE = """(in millions, except per share data)
Fiscal Year Ended January 31,
2023 2022 2021
Total revenues 31,352 26,492 21,252"""
ULTA = """(In thousands)
February 3, January 28,
2024 2023
Net sales $ 11,207,303 $ 10,208,580"""


def check(value, quote, field, period, page):
    return check_fact(value, "USD millions", quote, 1, {1: page}, field=field, period=period)


@pytest.mark.parametrize(
    "value, quote, field, period, page",
    [
        ("3,991", "Net revenue $ 3,991 $ 5,506 $ 5,299", "net revenue", 2015, AMD),
        ("(660)", "Net loss $ (660) $ (403) $ (83)", "net income", 2015, AMD),  # a loss is net income's sign
        ("(481)", "Operating income (loss) (481) (155) 103", "operating income", 2015, AMD),
        (
            "177,866",
            "Total net sales 107,006 135,987 177,866",
            "operating_revenue",
            2017,
            AMAZON,
        ),  # ascending years
        ("31,352", "Total revenues 31,352 26,492 21,252", "total revenue", 2023, SALESFORCE),
        (
            "11,207,303",
            "Net sales $ 11,207,303 $ 10,208,580",
            "net sales",
            2023,
            ULTA,
        ),  # fiscal 2023 ends 2024
        ("3,991", "Net revenue $ 3,991 $ 5,506 $ 5,299", None, None, AMD),  # nothing asked: nothing judged
    ],
)
def test_the_right_row_and_column_verify(value, quote, field, period, page):
    verdict = check(value, quote, field, period, page)
    assert verdict.status == VERIFIED, verdict.reason


@pytest.mark.parametrize(
    "value, quote, field, period, page, why",
    [
        ("5,506", "Net revenue $ 3,991 $ 5,506 $ 5,299", "net revenue", 2015, AMD, "column"),
        ("(403)", "Net loss $ (660) $ (403) $ (83)", "net loss", 2015, AMD, "column"),
        ("107,006", "Total net sales 107,006 135,987 177,866", "total net sales", 2017, AMAZON, "column"),
        ("10,208,580", "Net sales $ 11,207,303 $ 10,208,580", "net sales", 2023, ULTA, "column"),
        ("2,911", "Cost of sales 2,911 3,667 3,321", "net revenue", 2015, AMD, "row"),
        ("3,991", "Net revenue $ 3,991 $ 5,506 $ 5,299", "cost of sales", 2015, AMD, "row"),
        ("(481)", "Operating income (loss) (481) (155) 103", "net income", 2015, AMD, "row"),
        ("(160)", "Interest expense (160) (177) (177)", "interest income", 2015, AMD, "row"),
        ("14", "Provision for income taxes 14 5 9", "net loss", 2015, AMD, "row"),
        ("1,080", "Gross margin 1,080 1,839 1,978", "research and development", 2015, AMD, "row"),
    ],
)
def test_another_row_or_period_is_caught(value, quote, field, period, page, why):
    verdict = check(value, quote, field, period, page)
    assert verdict.status == VALUE_NOT_IN_QUOTE, verdict.reason
    assert ("column" in verdict.reason) == (why == "column"), verdict.reason


def test_a_verizon_total_of_an_acquisition_is_not_total_assets():
    page = (
        "(dollars in millions)\nCash $ 1,021\nTotal assets acquired $ 10,294\nTotal liabilities assumed 1,200"
    )
    verdict = check_fact(
        "10,294", "USD millions", "Total assets acquired $ 10,294", 1, {1: page}, field="total_assets"
    )
    assert verdict.status == VALUE_NOT_IN_QUOTE and "acquired" in verdict.reason


def test_a_definite_rejection_on_the_cited_page_is_not_traded_for_another_page():
    other = "Selected Financial Data\nNet revenue $ 3,991 $ 5,506 $ 5,299"  # no header: no column to judge
    verdict = check_fact(
        "5,506",
        None,
        "Net revenue $ 3,991 $ 5,506 $ 5,299",
        1,
        {1: AMD, 2: other},
        field="net revenue",
        period=2015,
    )
    assert (verdict.status, verdict.page) == (VALUE_NOT_IN_QUOTE, 1), verdict


def test_a_part_of_a_printed_total_is_not_the_total():
    page = AMAZON.replace(
        "Total net sales",
        "Net product sales $ 79,268 $ 94,665 $ 118,573\nNet service sales 27,738 41,322 59,293\nTotal net sales",
    )
    part = check_fact(
        "59,293",
        None,
        "Net service sales 27,738 41,322 59,293",
        1,
        {1: page},
        field="total net sales",
        period=2017,
    )
    assert part.status == VALUE_NOT_IN_QUOTE and "add up" in part.reason, part.reason
    total = check_fact(
        "177,866",
        None,
        "Total net sales 107,006 135,987 177,866",
        1,
        {1: page},
        field="total net sales",
        period=2017,
    )
    assert total.status == VERIFIED, total.reason
    # a field that asks no total may be any row
    assert (
        check_fact("59,293", None, "Net service sales 27,738 41,322 59,293", 1, {1: page}).status == VERIFIED
    )


def test_a_prior_year_named_by_the_field_is_read_from_its_own_column():
    # "revenue_2020" from a 2021 10-K: the header's latest year is the filing's (2021), so the 2020 column
    # is fiscal 2020. Aligned to the asked year instead, the true figure failed as "fiscal 2019".
    page = "Year Ended December 31,\n2021 2020 2019\n(In millions)\nNet revenue $ 3,991 $ 5,506 $ 5,299"
    quote = "Net revenue $ 3,991 $ 5,506 $ 5,299"
    fact = Fact(doc_id="d", field="revenue_2020", value="5,506", unit="USD millions", quote=quote, page=1)
    assert check_one(fact, PageTexts({1: page}, period=2021)).status == VERIFIED
    wrong = fact.model_copy(update={"value": "3,991"})
    assert check_one(wrong, PageTexts({1: page}, period=2021)).status == VALUE_NOT_IN_QUOTE


CHANGE = """Results of Operations
(in millions)
Year Ended December 31,
2023 2022 Change
Net revenue $ 3,991 $ 3,500 $ 491 14 %"""


def test_a_change_column_after_the_years_is_no_period():
    # "2023 2022 Change": the cells were aligned from the right, so the 2022 figure stood "in the 2023
    # column" (a true prior-year fact failed; last year's figure for this year's passed)
    quote = "Net revenue $ 3,991 $ 3,500 $ 491 14 %"
    fact = Fact(doc_id="d", field="net_revenue_2022", value="3,500", unit="USD millions", quote=quote, page=1)
    assert check_one(fact, PageTexts({1: CHANGE}, period=2023)).status == VERIFIED
    this_year = fact.model_copy(update={"field": "net_revenue"})
    assert check_one(this_year, PageTexts({1: CHANGE}, period=2023)).status == VALUE_NOT_IN_QUOTE
    assert check_one(
        this_year.model_copy(update={"value": "3,991"}), PageTexts({1: CHANGE}, period=2023)
    ).usable


def test_a_footnote_mark_after_the_label_is_no_cell_beside_a_change_column():
    page = CHANGE.replace("Net revenue $", "Net revenue (1) $")
    quote = "Net revenue (1) $ 3,991 $ 3,500 $ 491 14 %"
    fact = Fact(doc_id="d", field="net_revenue", value="3,991", unit="USD millions", quote=quote, page=1)
    assert check_one(fact, PageTexts({1: page}, period=2023)).status == VERIFIED
    last_year = fact.model_copy(update={"value": "3,500"})
    assert check_one(last_year, PageTexts({1: page}, period=2023)).status == VALUE_NOT_IN_QUOTE


@pytest.mark.parametrize("field", ["dividends_per_common_share", "dividends declared per share"])
def test_cash_dividends_are_the_dividends_row(field):
    # "cash" made the row "another line item" than the dividends asked for
    page = "(In millions, except per share amounts)\n2023 2022\nCash dividends declared per common share $ 0.52 $ 0.48"
    quote = "Cash dividends declared per common share $ 0.52 $ 0.48"
    assert check_fact("0.52", "USD", quote, 1, {1: page}, field=field, period=2023).status == VERIFIED


@pytest.mark.parametrize(
    "line, field, value",
    [
        ("Dividends declared per share $ 0.52 $ 0.48", "dividend_per_share", "0.52"),
        ("Receivables, net 1,234 1,000", "accounts_receivable", "1,234"),
        ("Net earnings 1,200 1,000", "net_earning", "1,200"),
    ],
)
def test_a_label_in_the_plural_is_the_fields_word_in_the_singular(line, field, value):
    # "Dividends" was a qualifier the field "dividend_per_share" lacked; "receivables" no word of "receivable"
    page = f"(In millions, except per share amounts)\n2023 2022\n{line}"
    assert check_fact(value, "USD", line, 1, {1: page}, field=field, period=2023).status == VERIFIED
