"""The catalog draft's fiscal years, symbols and forms on filings unlike the dev set's (issue 29): text
variants of what SEC covers and press releases print, written from the forms, not from one company."""

from __future__ import annotations

from datetime import date

import pytest

from retrievers.catalog_draft.draft import garbled
from retrievers.catalog_draft.fiscal_year import (
    fiscal_year_of_end,
    last_year_end,
    quarter_label,
    year_end_after,
)
from retrievers.catalog_draft.rules_en import (
    ANNUAL,
    CURRENT,
    EARNINGS,
    QUARTERLY,
    cover_contradicts_content,
    read_us_filing,
    symbol_in_prose,
)


def _values(found: dict) -> dict:
    return {name: f.value for name, f in found.items()}


# ---- how a fiscal year is named ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("end", "year"),
    [
        (date(2023, 1, 1), 2022),  # a 52/53-week year run into January (J&J's)
        (date(2024, 1, 7), 2023),
        (
            date(2023, 1, 28),
            2023,
        ),  # ends late in January: named for the year it ends in (Best Buy's fiscal 2023)
        (date(2022, 12, 31), 2022),
        (date(2019, 9, 28), 2019),  # Apple's
        (date(2023, 5, 31), 2023),  # FedEx's, Oracle's
    ],
)
def test_a_fiscal_year_is_named_by_its_end_save_the_first_days_of_january(end, year):
    assert fiscal_year_of_end(end) == year


@pytest.mark.parametrize(
    ("quarter", "last_end", "year"),
    [
        (date(2023, 7, 29), date(2023, 1, 28), 2024),  # Best Buy: Q2 of fiscal 2024
        (date(2022, 12, 31), date(2022, 6, 30), 2023),  # Amcor: fiscal 2023
        (date(2022, 10, 31), date(2022, 1, 31), 2023),  # Salesforce: Q3 of fiscal 2023
        (date(2023, 7, 2), date(2023, 1, 1), 2023),  # J&J: its year ends 2023-12-31, fiscal 2023
        (date(2022, 9, 30), date(2021, 12, 31), 2022),  # a calendar year
        (date(2023, 1, 31), date(2022, 1, 31), 2023),  # the fourth quarter ends with the year
    ],
)
def test_a_quarter_belongs_to_the_first_fiscal_year_end_after_it(quarter, last_end, year):
    assert fiscal_year_of_end(year_end_after(quarter, last_end)) == year


@pytest.mark.parametrize(
    ("text", "year", "fiscal", "quarter"),
    [
        ("Acme Announces Strong Second Quarter Fiscal 2024 Results", 2024, True, 2),
        ("Initiates Q3 FY24 Revenue Guidance", 2024, True, 3),
        ("Widgetco Reports First-Quarter 2023 Results", 2023, False, 1),
        ("results for the third quarter of fiscal year 2023", 2023, True, 3),
        ("FY2024 Q1 earnings", 2024, True, 0),
        ("fiscal 2024 second quarter results", 2024, True, 2),
        ("Fourth Quarter\nFiscal 2022 Results", 2022, True, 4),
        ("Widgetco Reports Fourth-Quarter and Full-Year 2022 Results", 2022, False, 4),
        ("Widgetco Reports 2022 Fourth-Quarter and Full-Year Results", 2022, False, 4),
        ("Acme Announces Fiscal 2023 Fourth Quarter and Fiscal Full Year Financial Results", 2023, True, 4),
        ("Widgetco Reports Full Year 2022 Financial Results", 2022, False, 0),
    ],
)
def test_quarter_labels_as_releases_print_them(text, year, fiscal, quarter):
    label = quarter_label(text)
    assert label is not None and (label.year, label.fiscal) == (year, fiscal)
    assert quarter == 0 or label.quarter == quarter


def test_no_quarter_label_in_prose_without_one():
    assert quarter_label("We expect growth in 2024. Q2 23 was strong.") is None


@pytest.mark.parametrize(
    "text",
    [
        "Condensed Consolidated Balance Sheets as of October 31, 2022 and January 31, 2022 .... 3",
        "should be read with our Annual Report on Form 10-K for the fiscal year ended January 31, 2022.",
        "the year ended January 31, 2022, included in our Form 10-K filed with the SEC",
    ],
)
def test_the_last_fiscal_year_end_a_10q_prints(text):
    assert last_year_end(text, date(2022, 10, 31)) == date(2022, 1, 31)


# ---- covers --------------------------------------------------------------------------------------------
def test_annual_cover_of_a_year_run_into_january_is_the_year_before():
    text = "FORM 10-K\nANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d)\nFor the fiscal year ended January 1, 2023\n"
    found = read_us_filing(text)
    assert (found["doctype"].value, found["year"].value, found["year"].sure) == (ANNUAL, 2022, True)


def test_a_letter_spaced_fiscal_year_label_still_reads():
    text = "FORM 10-K\nFor the Fis cal Year Ended December 31, 2015\n"
    assert _values(read_us_filing(text))["year"] == 2015


_10Q = (
    "FORM 10-Q\nQUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d)\n"
    "For the quarterly period ended July 29, 2023\nBig Box Stores, Inc.\n"
    "(Exact name of registrant as specified in its charter)\n"
)


@pytest.mark.parametrize(
    ("more", "year", "sure"),
    [
        (
            "INDEX\nCondensed Consolidated Balance Sheets as of July 29, 2023 and January 28, 2023 3\n",
            2024,
            True,
        ),
        ("read with our Annual Report on Form 10-K for the fiscal year ended January 28, 2023\n", 2024, True),
        ("Results of Operations for the second quarter of fiscal 2024\n", 2024, False),
    ],
)
def test_a_10q_carries_the_fiscal_year_its_quarter_belongs_to(more, year, sure):
    found = read_us_filing(_10Q + more)
    assert (found["doctype"].value, found["year"].value, found["year"].sure) == (QUARTERLY, year, sure)


def test_a_10q_reads_its_fiscal_year_end_from_later_pages_and_marks_it_for_a_check():
    later = "Note 1. ... our Annual Report on Form 10-K for the fiscal year ended June 30, 2022 ..."
    found = read_us_filing(_10Q.replace("July 29, 2023", "December 31, 2022"), lambda: later)
    assert (found["year"].value, found["year"].sure) == (2023, False)  # Amcor-like: fiscal 2023


def test_a_10q_whose_fiscal_year_end_is_printed_nowhere_gets_no_year_not_a_guess():
    assert "year" not in read_us_filing(_10Q, lambda: "Item 2. Management's Discussion\nSales grew.")


@pytest.mark.parametrize(
    "cover",
    [
        "FORM 8-K\nCURRENT REPORT\nJanuary 4, 2023\nDate of Report (date of earliest event reported)\nAcme Inc.\n",
        "FORM 8-K\nCURRENT REPORT\nDate of Report: June 1, 2023\n(Date of earliest event reported)\n",
        "FORM 8-K\nDate of Report (Date of earliest event reported): January 4, 2023\n",
    ],
)
def test_an_8k_is_dated_by_its_report_whichever_side_of_the_label_the_date_stands(cover):
    found = read_us_filing(cover)
    assert (found["doctype"].value, found["year"].value) == (CURRENT, int(cover.split(", 20")[1][:2]) + 2000)


@pytest.mark.parametrize(
    "table",
    [
        # the header's two words on two lines of columns
        "Trading\nTitle of each class symbol(s) Name of each exchange on which registered\n"
        "Common Stock, $0.01 par value per share ACMW The Nasdaq Stock Market LLC",
        "Trading Name of each exchange\nTitle of each class Symbol(s) on which registered\n"
        "Common stock, no par value ACMW The New York Stock Exchange",
        # a symbol set in small capitals, as the text layer gives it
        "Title of each class Trading Symbol(s) Name of each exchange\nCommon Stock, par value $0.01 AcMW New York Stock Exchange",
    ],
)
def test_symbol_tables_in_more_layouts(table):
    text = f"FORM 10-K\nFor the fiscal year ended May 31, 2021\n{table}\nSecurities registered pursuant to Section 12(g)"
    assert _values(read_us_filing(text))["symbol"] == "ACMW"


def test_item_5_symbol_in_small_capitals_is_read_in_capitals():
    found = symbol_in_prose(
        "Our common stock is traded on the New York Stock Exchange under the symbol “AcMW.” We had"
    )
    assert found is not None and found.value == "ACMW" and not found.sure


# ---- press releases ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("lead", "year"),
    [
        # a fiscal label in the headline: the quarter's fiscal year, not the calendar year it ended in
        (
            "Acme Announces Second Quarter Fiscal 2024 Results\nSAN JOSE - Acme (NYSE: ACMW) today announced "
            "results for its second quarter fiscal 2024 ended July 31, 2023.",
            2024,
        ),
        (
            "Acme Reports Q1 FY24 Results\nAcme Inc. (NASDAQ: ACMW) today reported results for the quarter ended April 30, 2023.",
            2024,
        ),
        # a calendar quarter, and the 10-K of the year before cited further on
        (
            "Acme Reports First-Quarter 2023 Results\nAcme Inc. (NYSE:ACMW) today reported results for the "
            "first quarter 2023. See our Annual Report on Form 10-K for the year ended December 31, 2022.",
            2023,
        ),
        # no label: the quarter's fiscal year from the last year end it cites, not that year itself
        (
            "Acme Reports First Quarter Results\nAcme Inc. (NYSE: ACMW) today reported results for the quarter "
            "ended April 30, 2023, against the "
            "year ended January 31, 2023 as reported in our Form 10-K.",
            2024,
        ),
        # a fourth quarter: the year by its end date, whatever the company calls it
        (
            "Acme Announces Fourth Quarter\nFiscal 2022 Results\nAcme Inc. (NASDAQ: ACMW) today announced results "
            "for the thirteen-week period (“fourth quarter”) and fifty-two-week period (“fiscal year”) ended "
            "January 28, 2023.",
            2023,
        ),
        (
            "ACME REPORTS FOURTH QUARTER AND FULL YEAR 2022 RESULTS\nAcme Inc. (NYSE: ACMW) today announced "
            "results for the fourth quarter and year ended January 1, 2023.",
            2022,
        ),
    ],
)
def test_an_earnings_release_carries_the_fiscal_year_of_the_quarter_it_reports(lead, year):
    found = read_us_filing(lead)
    assert (found["doctype"].value, found["year"].value, found["symbol"].value) == (EARNINGS, year, "ACMW")


def test_a_release_without_an_exchange_tag_is_a_release_and_names_its_company_but_no_symbol():
    text = (
        "Exhibit 99.1\nFOR IMMEDIATE RELEASE FOR MORE INFORMATION CONTACT:\n4/25/2023 Investors: ir@widgetco.com\n"
        "WIDGETCO REPORTS FIRST QUARTER 2023 RESULTS\n"
        "CHICAGO, IL - Widgetco Corporation today announced results for the first quarter ended March 31, 2023."
    )
    found = read_us_filing(text)
    assert _values(found) == {"doctype": EARNINGS, "year": 2023, "company": "Widgetco Corporation"}
    assert not found["company"].sure


@pytest.mark.parametrize(
    "tag", ["Widgetco Corporation, NYSE: WDG, today", "Widgetco Corporation (NYSE:WDG) today"]
)
def test_exchange_tags_with_and_without_parentheses(tag):
    text = f"Widgetco Reports Third Quarter 2023 Results\nCHICAGO - {tag} announced results for the quarter ended September 30, 2023."
    assert _values(read_us_filing(text))["symbol"] == "WDG"


def test_a_headline_that_reports_nothing_is_no_release():
    text = "Widgetco names a new chief executive\nCHICAGO - Widgetco Corporation today announced a new CEO."
    assert "doctype" not in read_us_filing(text)


# ---- bad input -----------------------------------------------------------------------------------------
_COVER = (
    "FORM 8-K\nCURRENT REPORT\nDate of Report (Date of earliest event reported): May 4, 2023\nAcme Widgets, Inc.\n"
    "(Exact name of registrant as specified in its charter)\nTitle of each class Trading Symbol(s) Name of each exchange\n"
    "Common Stock ACMW The Nasdaq Stock Market LLC\nIndicate by check mark"
)


def test_a_cover_that_contradicts_its_content_names_both_readings():
    content = "Exhibit 99.1\nGlobex Corp. (NYSE: GLBX) today reported results for the first quarter 2023."
    why = cover_contradicts_content(_COVER, content)
    assert why and "Acme Widgets, Inc. (ACMW)" in why and "Globex Corp. (GLBX)" in why


@pytest.mark.parametrize(
    "content",
    [
        # a deal's release names the other party's tag, and the registrant by name
        "Item 2.01. On May 4, 2023 Acme Widgets completed its acquisition of Globex Corp. (NYSE: GLBX).",
        "Exhibit 99.1\nAcme Widgets (Nasdaq: ACMW) and Globex (NYSE: GLBX) agree to combine.",
        "Item 8.01. Other Events. The board declared a dividend.",  # no tag at all
    ],
)
def test_a_cover_agreeing_with_its_content_is_no_contradiction(content):
    assert cover_contradicts_content(_COVER, content) is None


def test_a_text_layer_of_noise_is_told_from_text():
    noise = "!\"#$!%&'( )' *+,(-' !\"#$.$ +,\"'#!/0!.123.2#1 " * 10
    assert garbled(noise)
    assert not garbled("McDonald's Corporation today announced results for the fourth quarter. " * 5)
    assert not garbled("$ 1,234 (56) 7.8% — | |" * 3)  # too short to judge


def test_a_release_whose_headline_and_lead_name_the_quarter_after_the_year():
    text = (
        "NEWS RELEASE\nWidgetco Reports 2022 Fourth-Quarter and Full-Year Results\nSANTA CLARA, Calif., Jan. 26, "
        "2023 - Widgetco Corporation today reported fourth-quarter and full-year 2022 financial results."
    )
    found = read_us_filing(text)
    assert (found["doctype"].value, found["year"].value, found["company"].value) == (
        EARNINGS,
        2022,
        "Widgetco Corporation",
    )


@pytest.mark.parametrize(
    ("lead", "company"),
    [
        ("ST. PAUL, Minn., Jan. 24, 2023 - 3M today reported fourth-quarter 2022 results.", "3M"),
        (
            "SANTA CLARA, Calif., Jan. 26, 2023 - Intel Corporation today reported fourth-quarter results.",
            "Intel Corporation",
        ),
        ("Jan. 26, 2023 Widgetco today reported first-quarter 2023 results.", "Widgetco"),
    ],
)
def test_the_issuer_of_a_release_is_who_today_announced_or_reported(lead, company):
    found = read_us_filing("NEWS RELEASE\n" + lead)
    assert found["company"].value == company and not found["company"].sure
