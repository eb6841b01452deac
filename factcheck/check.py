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

from factcheck.printed_values import (
    asks_year,
    is_nothing,
    is_yes_no,
    mask_labels,
    mask_page_number,
    value_in_text,
    value_spans,
    value_text,
)
from factcheck.quotes import FUZZY_THRESHOLD, Match, locate
from factcheck.rows import column_check, is_row, label_check, part_check
from factcheck.scale import Scale, read_fact_scale, section_scale, stated_scale
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
    # an amount's scale as the page states it (factcheck.scale): what the normalizer multiplies the
    # fact's own reading by (1 when its value or unit already says it), None when not read; and where
    scale: float | None = None
    scale_source: str = ""

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


def _widen(text: str, match: Match) -> tuple[int, int]:
    """Where the matched words are, with whole numbers at its edges and the scale word right after."""
    start, end = match.start, match.end
    while start > 0 and re.match(r"[\d,.(（$¥-]", text[start - 1]):
        start -= 1
    while end < len(text) and re.match(r"[\d,.%％)）]", text[end]):
        end += 1
    tail = re.match(
        r"[ \t]*(万亿|亿元|亿|千万|百万|万元|万|千元|元|%|％|thousand|million|billion)?",
        text[end : end + TAIL],
    )
    return start, end + (tail.end() if tail else 0)


def check_fact(
    value,
    unit: str | None,
    quote: str | None,
    page: int | None,
    pages: Mapping[int, str],
    disclosed: bool = True,
    threshold: float = FUZZY_THRESHOLD,
    amount: bool = False,
    field: str | None = None,
    period: int | None = None,
    description: str = "",
    fiscal_year: int | None = None,
) -> Verdict:
    """The verdict on one fact, given its document's page texts {1-based page: text}; `amount`: the value
    is money, whose scale is read off the page (Verdict.scale) and must agree with the fact's own; `field`
    (the field's name; `description` its description) and `period` (the year asked; `fiscal_year` the
    filing's own, None when it is the period): on a statement row, the row's label must be
    the field and the value's column the period (factcheck.rows)."""
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
    first_hit: tuple[int, Match, str, str] | None = None
    own = getattr(pages, "own", None)  # each page's own text, where pages' texts share chunks over a break
    for number in search_order(page, pages):
        text = pages[number]
        match = locate(quote, text, threshold)
        if match is None:
            continue
        start, end = _widen(text, match)
        words = text[start:end]
        if own is not None:
            number = printed_on(quote, number, own, threshold)
        scale: float | None = None
        scale_source = ""
        if is_yes_no(value):
            ok, how = True, "yes/no value: only the quote is checked"
        else:
            # labels masked in the whole page: a date or a note reference may begin before the quote
            # (and the page's printed number): same length as the text, so the match's offsets hold in both
            masked = mask_labels(mask_page_number(text), years=not asks_year(unit))[start:end]
            ok, how = value_in_text(value, unit, words, masked)
            if ok and amount:
                reading = read_fact_scale(
                    value, unit, words, masked, _page_scale(quote, text, match, own, number, pages), number
                )
                ok, how = reading.ok, how if reading.ok else reading.reason
                scale, scale_source = reading.scale, reading.source
            if ok and (field or period):
                wrong = _wrong_row_or_column(
                    value, unit, text, masked, start, field, description, period, fiscal_year
                )
                ok, how = not wrong, wrong or how
        if ok:
            if number == page:
                return Verdict(
                    VERIFIED,
                    number,
                    page,
                    match.score,
                    f"quote on page {number}; value {how}",
                    words,
                    scale,
                    scale_source,
                )
            where = (
                f"page {number}, not on the cited page {page}" if page else f"page {number} (no page cited)"
            )
            return Verdict(
                PAGE_CORRECTED, number, page, match.score, f"quote on {where}", words, scale, scale_source
            )
        if first_hit is None:
            first_hit = (number, match, words, how)
        if number == page and _definite(how):
            break  # the cited page prints the quote and shows the value is another row's, period's or scale's
    if first_hit is not None:
        number, match, words, how = first_hit
        if _definite(how):  # say why
            return Verdict(VALUE_NOT_IN_QUOTE, number, page, match.score, how, words)
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


def _definite(how: str) -> bool:
    return any(
        w in how for w in ("states amounts in", "the quoted row", "column (fiscal")
    )  # row, part, column


def _wrong_row_or_column(
    value,
    unit: str | None,
    text: str,
    masked: str,
    start: int,
    field: str | None,
    description: str,
    period: int | None,
    fiscal_year: int | None = None,
) -> str:
    """Why the value is another row's or another period's figure on its statement row; '' when not."""
    spans = value_spans(value, unit, masked)
    if not spans:
        return ""
    cell = (start + spans[0][0], start + spans[0][1])
    line_start = text.rfind("\n", 0, cell[0]) + 1
    line_end = text.find("\n", cell[1])
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    if not is_row(line):
        return ""  # prose: no row label, no column to judge
    if field and (wrong := label_check(line, field, description) or part_check(text, cell, field)):
        return wrong
    return column_check(text, cell, period, fiscal_year)


def _page_scale(quote: str, text: str, match: Match, own, number: int, pages) -> Scale | None:
    """The scale stated above the quote: in the text it matched in, else in the page's own text, else
    in a section's statement on this page or the pages before ("tabular dollars are in millions")."""
    found = stated_scale(text, match.start)
    if found is None and own is not None and number in own:
        again = locate(quote, own[number])
        if again is not None:
            found = stated_scale(own[number], again.start)
    return found or section_scale(own if own is not None else pages, number)


def printed_on(quote: str, number: int, own: Mapping[int, str], threshold: float = FUZZY_THRESHOLD) -> int:
    """The page whose own text prints the quote: `number` when it does (or when no page near it does),
    else the nearest page that does. A chunk running over a page break is in both pages' texts, so the
    quote of its second half was found on its first page (PepsiCo 2022: a line of page 40 as page 39)."""
    if number not in own or locate(quote, own[number], threshold) is not None:
        return number
    for other in search_order(number, own)[1 : 1 + 2 * NEIGHBOURS]:
        if abs(other - number) <= NEIGHBOURS and locate(quote, own[other], threshold) is not None:
            return other
    return number


def check(fact, pages: Mapping[int, str], threshold: float = FUZZY_THRESHOLD) -> Verdict:
    """check_fact for anything with .value .unit .quote .page .disclosed (signatures.types.Fact, ExtractedValue)."""
    name, description = str(getattr(fact, "field", "") or ""), str(getattr(fact, "description", "") or "")
    return check_fact(
        fact.value,
        fact.unit,
        fact.quote,
        fact.page,
        pages,
        fact.disclosed,
        threshold,
        amount=is_amount(fact),
        field=name or None,
        period=asked_period(f"{name} {description}", getattr(pages, "period", None)),
        description=description,
        fiscal_year=getattr(pages, "period", None),
    )


def asked_period(words: str, fiscal_year: int | None) -> int | None:
    """The period a field asks of its document: the year it names ("revenue_2019" from a 2021 10-K),
    else the document's fiscal year; None (no column judged) when it names several or a prior one."""
    named = set(re.findall(r"(?<!\d)(?:19|20)\d\d(?!\d)", words))
    if len(named) > 1 or re.search(r"prior|previous|last year|preceding|上年|上期|去年|同期", words, re.I):
        return None
    return int(named.pop()) if named else fiscal_year


MONEY_UNITS = ("USD", "CNY")
# "per diluted share", "per common share", "per share of common stock" are per-share figures too
PER_SHARE = re.compile(r"per[- ](?:[a-z]+[- ]){0,2}share|\beps\b|每股|per 10 shares|每10股", re.I)


def is_amount(fact) -> bool:
    """A money field whose value is scaled like its table (a per-share figure is excepted from the
    statement's "in millions" and is not)."""
    words = f"{getattr(fact, 'field', '')} {getattr(fact, 'description', '')} {fact.unit or ''}"
    return getattr(fact, "field_unit", "") in MONEY_UNITS and not PER_SHARE.search(words.replace("_", " "))
