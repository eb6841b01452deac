"""Check an extracted fact against its document, by code: is the quote on the cited page, is the value in it?

The LM reads, code decides. A fact (value, unit, quote, page) gets one verdict:
- verified: the quote is on the cited page and the page's words there print the value;
- page_corrected: the same, but on another page (`page` is the corrected one; neighbours first);
- value_not_in_quote: the quote is in the document but the value is not printed in it;
- quote_not_found: the quote is nowhere in the document (or there is none);
- not_disclosed: the fact says the document does not state the value, or it is a "no" / zero / empty
  list given without a quote (stated by absence): there is nothing to check against a page.

The value is looked for in the PAGE's words where the quote matched, not in the LM's copy of the
quote: a quote that matches fuzzily because the LM changed a digit in it still fails on the value.

What this cannot catch: a quote that holds both years' cells of a row ("Total assets 5,917,340
5,512,003") verifies either value, so a value taken from last year's column is only flagged when
the quote is narrower than the row; a value quoted correctly but for the wrong field (goodwill
quoted for intangibles) verifies; a derived value (a ratio computed from two amounts) is not
printed anywhere and fails as value_not_in_quote: check the amounts it was computed from instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from factcheck.printed_values import is_nothing, is_yes_no, value_in_text, value_text
from factcheck.quotes import FUZZY_THRESHOLD, Match, locate
from signatures.vocabulary import is_not_disclosed

VERIFIED, PAGE_CORRECTED = "verified", "page_corrected"
VALUE_NOT_IN_QUOTE, QUOTE_NOT_FOUND, NOT_DISCLOSED = "value_not_in_quote", "quote_not_found", "not_disclosed"
VERDICTS = (VERIFIED, PAGE_CORRECTED, VALUE_NOT_IN_QUOTE, QUOTE_NOT_FOUND, NOT_DISCLOSED)
USABLE = (VERIFIED, PAGE_CORRECTED)
# Pages either side of the cited one searched before the whole document: an LM that miscounts a
# page is usually off by one or two (a chunk spanning a page break, a cover page not counted).
NEIGHBOURS = 2
# Characters after a matched span still read for the value: "5,917,340" matched, " 万元" follows.
TAIL = 8


@dataclass(frozen=True)
class Verdict:
    status: str  # one of VERDICTS
    page: int | None  # where the quote is (the corrected page for page_corrected); None if not found
    cited_page: int | None
    score: float  # quote match score, 100 = exact after folding; 0 when not found
    reason: str  # one line for people and for a repair prompt ("the quote is not on page 12; ...")
    matched: str = ""  # the page's own words where the quote matched

    @property
    def usable(self) -> bool:
        """May the computation use the fact by default (verified or page corrected)?"""
        return self.status in USABLE

    def to_dict(self) -> dict:
        return asdict(self)


def search_order(cited: int | None, pages: Mapping[int, str]) -> list[int]:
    """The cited page, then its neighbours nearest first, then every other page in order."""
    numbers = sorted(pages)
    if cited is None or cited not in pages:
        return numbers
    near = [cited]
    for d in range(1, NEIGHBOURS + 1):
        near += [p for p in (cited - d, cited + d) if p in pages]
    return near + [p for p in numbers if p not in near]


def _widen(text: str, match: Match) -> str:
    """The matched words plus whole numbers at its edges and the scale word right after."""
    start, end = match.start, match.end
    while start > 0 and re.match(r"[\d,.(（$¥-]", text[start - 1]):
        start -= 1
    while end < len(text) and re.match(r"[\d,.%％)）]", text[end]):
        end += 1
    tail = re.match(
        r"[ \t]*(万亿|亿元|亿|千万|百万|万元|万|千元|元|%|％|thousand|million|billion)?",
        text[end : end + TAIL],
    )
    return text[start : end + (tail.end() if tail else 0)]


def check_fact(
    value,
    unit: str | None,
    quote: str | None,
    page: int | None,
    pages: Mapping[int, str],
    disclosed: bool = True,
    threshold: float = FUZZY_THRESHOLD,
) -> Verdict:
    """The verdict on one fact, given its document's page texts {1-based page: text}."""
    # yes_no=True: "无" may be the answer No (then its quote is checked); "未提及" is not disclosed
    if not disclosed or is_not_disclosed(value, yes_no=True):
        return Verdict(NOT_DISCLOSED, page, page, 0.0, "the document is said not to state this value")
    if (not quote or not quote.strip()) and is_nothing(value):
        return Verdict(
            NOT_DISCLOSED, page, page, 0.0, f"{value_text(value)!r} stated by absence: nothing to check"
        )
    if not quote or not quote.strip():
        return Verdict(
            QUOTE_NOT_FOUND, None, page, 0.0, "no quote was given: quote the line exactly as printed"
        )
    first_hit: tuple[int, Match, str] | None = None
    for number in search_order(page, pages):
        text = pages[number]
        match = locate(quote, text, threshold)
        if match is None:
            continue
        words = _widen(text, match)
        if is_yes_no(value):
            ok, how = True, "yes/no value: only the quote is checked"
        else:
            ok, how = value_in_text(value, unit, words)
        if ok:
            if number == page:
                return Verdict(
                    VERIFIED, number, page, match.score, f"quote on page {number}; value {how}", words
                )
            where = (
                f"page {number}, not on the cited page {page}" if page else f"page {number} (no page cited)"
            )
            return Verdict(PAGE_CORRECTED, number, page, match.score, f"quote on {where}", words)
        if first_hit is None:
            first_hit = (number, match, words)
    if first_hit is not None:
        number, match, words = first_hit
        shown = value if not isinstance(value, float) else f"{value:.15g}"
        return Verdict(
            VALUE_NOT_IN_QUOTE,
            number,
            page,
            match.score,
            f"the quote on page {number} does not print the value {shown}: give the value as printed there",
            words,
        )
    where = f"on page {page} nor anywhere else" if page in pages else "anywhere"
    return Verdict(
        QUOTE_NOT_FOUND,
        None,
        page,
        0.0,
        f"the quote is not in the document ({where}): quote the line exactly as printed",
    )


def check(fact, pages: Mapping[int, str], threshold: float = FUZZY_THRESHOLD) -> Verdict:
    """check_fact for anything with .value .unit .quote .page .disclosed (signatures.types.Fact, ExtractedValue)."""
    return check_fact(fact.value, fact.unit, fact.quote, fact.page, pages, fact.disclosed, threshold)
