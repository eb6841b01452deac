"""Each verdict, from a small document of page texts: what the check decides and what it says."""

from types import SimpleNamespace

from factcheck.check import (
    NOT_DISCLOSED,
    PAGE_CORRECTED,
    QUOTE_NOT_FOUND,
    VALUE_NOT_IN_QUOTE,
    VERIFIED,
    check,
    check_fact,
    search_order,
)

ROW = "Total assets 5,917,340 5,512,003"
PAGES = {
    1: "ANNUAL REPORT 2022\nOakridge Brands Group, Inc.",
    2: "Item 7. Management's Discussion\nRevenue grew to $7.9 billion.",
    3: "CONSOLIDATED BALANCE SHEETS (in thousands)\n2022 2021\n" + ROW,
    4: "Notes to the financial statements",
    5: "股权登记日：2023年6月7日\n除权除息日：2023年6月9日",
    12: "Other information",
    13: "CONSOLIDATED BALANCE SHEETS (in thousands)\n" + ROW,  # the statement repeated far away
}


def test_verified_when_quote_and_value_are_on_the_cited_page():
    verdict = check_fact("5,917,340", "USD thousands", "Total assets 5,917,340", 3, PAGES)
    assert verdict.status == VERIFIED and verdict.page == 3 and verdict.usable
    assert verdict.matched.startswith("Total assets 5,917,340")


def test_wrong_page_is_corrected_to_the_nearest_page_that_holds_the_quote():
    verdict = check_fact(5917340000.0, "USD", "Total assets 5,917,340", 4, PAGES)
    assert verdict.status == PAGE_CORRECTED and verdict.page == 3 and verdict.cited_page == 4
    assert "page 3" in verdict.reason and "cited page 4" in verdict.reason
    far = check_fact(5917340000.0, "USD", "Total assets 5,917,340", 12, PAGES)
    assert far.status == PAGE_CORRECTED and far.page == 13  # the neighbour wins over the first page in order


def test_search_order_is_cited_then_neighbours_then_the_rest():
    assert search_order(4, PAGES) == [4, 3, 5, 2, 1, 12, 13]
    assert search_order(None, PAGES) == sorted(PAGES)
    assert search_order(99, PAGES) == sorted(PAGES)


def test_last_years_value_with_this_years_quote_is_flagged():
    verdict = check_fact("5,512,003", None, "Total assets 5,917,340", 3, PAGES)
    assert verdict.status == VALUE_NOT_IN_QUOTE and not verdict.usable
    assert "5,512,003" in verdict.reason


def test_last_years_value_quoting_the_whole_row_is_not_caught():
    """The documented blind spot: a quote holding both years' cells verifies either value."""
    assert check_fact("5,512,003", None, ROW, 3, PAGES).status == VERIFIED


def test_invented_value_is_flagged():
    verdict = check_fact("6,104,225", None, "Total assets 5,917,340", 3, PAGES)
    assert verdict.status == VALUE_NOT_IN_QUOTE


def test_a_digit_changed_inside_a_long_quote_fails_on_the_pages_own_words():
    quote = "CONSOLIDATED BALANCE SHEETS (in thousands) 2022 2021 Total assets 5,917,840"
    verdict = check_fact("5,917,840", None, quote, 3, PAGES)
    assert verdict.score < 100  # found fuzzily...
    assert verdict.status == VALUE_NOT_IN_QUOTE  # ...but the page says 5,917,340


def test_paraphrased_quote_is_not_found():
    quote = "According to the balance sheet, the company's total assets came to 5,917,340 thousand dollars"
    verdict = check_fact("5,917,340", None, quote, 3, PAGES)
    assert verdict.status == QUOTE_NOT_FOUND and verdict.page is None
    assert "quote the line exactly as printed" in verdict.reason


def test_missing_quote_and_not_disclosed():
    assert check_fact("5,917,340", None, None, 3, PAGES).status == QUOTE_NOT_FOUND
    assert check_fact(None, None, None, None, PAGES).status == NOT_DISCLOSED
    assert check_fact("12", None, "x", 3, PAGES, disclosed=False).status == NOT_DISCLOSED
    assert check_fact("未披露", None, "", None, PAGES).status == NOT_DISCLOSED
    # a "no", a zero, an empty list without a quote: stated by absence, nothing to check
    assert check_fact(False, None, None, None, PAGES).status == NOT_DISCLOSED
    assert check_fact("否", None, "", None, PAGES).status == NOT_DISCLOSED
    assert check_fact(0, None, None, None, PAGES).status == NOT_DISCLOSED
    assert check_fact([], None, None, None, PAGES).status == NOT_DISCLOSED
    assert check_fact("是", None, None, None, PAGES).status == QUOTE_NOT_FOUND  # a "yes" needs its quote
    assert (
        check_fact(0, None, "Total assets 5,917,340", 3, PAGES).status == VALUE_NOT_IN_QUOTE
    )  # quoted: checked


def test_dates_verify_in_any_form_and_a_yes_no_checks_the_quote_only():
    assert check_fact("2023-06-07", "date", "股权登记日：2023年6月7日", 5, PAGES).status == VERIFIED
    assert check_fact("2023-06-09", "date", "股权登记日：2023年6月7日", 5, PAGES).status == VALUE_NOT_IN_QUOTE
    assert check_fact("是", None, "除权除息日：2023年6月9日", 5, PAGES).status == VERIFIED
    assert check_fact(True, None, "本公司不存在应披露而未披露的重大诉讼", 5, PAGES).status == QUOTE_NOT_FOUND


def test_check_reads_a_fact_object():
    fact = SimpleNamespace(
        value="5,917,340", unit=None, quote="Total assets 5,917,340", page=3, disclosed=True
    )
    assert check(fact, PAGES).status == VERIFIED
    assert check(fact, PAGES).to_dict()["status"] == VERIFIED
