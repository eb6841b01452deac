"""Rules that read a US filing's identity from its first pages: the SEC cover page, or an earnings release.

Method only, no table of companies: the cover states the form ("FORM 10-K"), the period ("For the
fiscal year ended November 27, 2015"), the registrant ("... (Exact name of registrant as specified in
its charter)") and, since 2019, the "Trading Symbol(s)" table; an earnings release states its issuer's
exchange tag ("PepsiCo, Inc. (NASDAQ: PEP)") and its period ("12 weeks ended March 25, 2023").

The year is the fiscal year as companies label it (retrievers.catalog_draft.fiscal_year): a year by the
calendar year it ends in, one run into the first days of January by the year before, a quarter's by
the fiscal year it belongs to, read from the fiscal year end or the label the filing prints, never
guessed from the calendar year of the quarter's end.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from datetime import date

from retrievers.catalog_draft.finding import Finding, first
from retrievers.catalog_draft.fiscal_year import (
    DATE,
    Dated,
    fiscal_year_of_end,
    last_year_end,
    parse_date,
    quarter_label,
    year_end_after,
)

# Doctype names: MuDABench's for an annual report (catalog.ENGLISH_DOCTYPES, data.synth), FinanceBench's
# for the forms MuDABench has none for.
ANNUAL = "US Stock Annual Report"
QUARTERLY, CURRENT, EARNINGS = "10Q", "8K", "EARNINGS"
DOCTYPES = (ANNUAL, QUARTERLY, CURRENT, EARNINGS)
_FORMS = {"10-K": ANNUAL, "10-KT": ANNUAL, "10-K405": ANNUAL, "20-F": ANNUAL, "40-F": ANNUAL}
_FORMS |= {"10-Q": QUARTERLY, "10-QT": QUARTERLY, "8-K": CURRENT}

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_YEAR = r"((?:19|20)\d{2})"
# "November 27, 2015", "Dec. 31 2022", "31 December 2022", "12/31/2022"; the year is the last group found.
_DATE = rf"(?:{_MONTH}\.?\s+\d{{1,2}}\s*,?\s*{_YEAR}|\d{{1,2}}\s+{_MONTH}\.?,?\s+{_YEAR}|\d{{1,2}}/\d{{1,2}}/{_YEAR})"
# A cover laid out in two columns interleaves a few words ("For the quarterly period ended Commission
# file\nMarch 31, 2021 number 1-5805", JPMorgan's 10-Q): allow that much between a label and its date.
_GAP = r"[^\d]{0,40}?"

_FORM_LINE = re.compile(
    r"^\s*(?:\(Mark One\)\s*)?FORM\s+(10-K(?:T|405)?|10-QT?|8-K|20-F|40-F)(?:/A)?\s*$", re.I | re.M
)
_REPORT_KIND = [  # the cover's statutory heading, when the form line is missing or split
    (re.compile(r"ANNUAL\s+REPORT\s+PURSUANT\s+TO\s+SECTION\s+13\s+OR\s+15\s*\(d\)", re.I), ANNUAL),
    (re.compile(r"QUARTERLY\s+REPORT\s+PURSUANT\s+TO\s+SECTION\s+13\s+OR\s+15\s*\(d\)", re.I), QUARTERLY),
    (re.compile(r"CURRENT\s+REPORT\s+Pursuant\s+to\s+Section\s+13\s+or\s+15\s*\(d\)", re.I), CURRENT),
]
# What marks a press release as one, besides its issuer's exchange tag (McDonald's prints none): the
# wire's or the exhibit's heading, or the lead's "today announced/reported results".
_RELEASE_MARK = re.compile(
    r"FOR\s+IMMEDIATE\s+RELEASE|NEWS\s+RELEASE|PRESS\s+RELEASE|^\s*Exhibit\s+99(?:\.\d+)?\b|/PRNewswire/|"
    r"\((?:BUSINESS|GLOBE)\s*WIRE\)|\btoday\s+(?:announced|reported)\s+(?:its\s+)?(?:financial\s+)?results\b",
    re.I | re.M,
)
_RELEASE = re.compile(
    r"\b(?:reports?|reported|announces?|announced|posts?|delivers?)\b[^.]{0,80}?"  # a headline may wrap
    r"\b(?:quarter|full[- ]year|fiscal(?:\s+year)?\s+\d{4}|year[- ]end|Q[1-4]|FY\s*'?\d{2,4})\b[^.]{0,60}?\bresults\b"
    # the lead's own words: "today announced results for the fourth quarter and year ended ..."
    r"|\b(?:announced|reported)\s+(?:its\s+)?(?:financial\s+)?results\s+for\s+(?:the\s+|its\s+)?"
    r"(?:first|second|third|fourth|1st|2nd|3rd|4th|full|fiscal)\b",
    re.I,
)
_FISCAL_YEAR_ENDED = re.compile(rf"fis\s?cal\s+year\s+ended\s*:?{_GAP}{DATE}", re.I)  # "Fis cal": PG&E 2015
_QUARTER_ENDED = re.compile(rf"quarterly\s+period\s+ended\s*:?{_GAP}{DATE}", re.I)
_REPORT_DATE = re.compile(
    rf"Date\s+of\s+Report\s*(?:\(\s*Date\s+of\s+earliest\s+event\s+reported\s*\))?\s*:?{_GAP}{DATE}", re.I
)
# Salesforce's covers print the date above its label: "January 4, 2023\nDate of Report (date of ...)"
_DATE_THEN_REPORT = re.compile(rf"{DATE}\s*\n\s*Date\s+of\s+Report", re.I)
# A release states its period in its lead paragraph; past it come comparisons and outlooks.
RELEASE_LEAD = 3000
_RELEASE_PERIOD = re.compile(rf"\b(?:quarter|period|weeks|months)\W{{0,3}}\s+ended\s+{DATE}", re.I)
_RELEASE_YEAR_ENDED = re.compile(
    rf"\b(?:fiscal\s+year|full[- ]year|twelve\s+months|year)\W{{0,3}}\s+ended\s+{DATE}", re.I
)
_ANY_PERIOD_ENDED = re.compile(
    rf"\b(?:year|quarter|period|weeks|months)\W{{0,3}}\s+ended\s*:?\s+{_DATE}", re.I
)
_NAMED_QUARTER = re.compile(
    rf"\b(?:first|second|third|fourth|1st|2nd|3rd|4th)[- ]quarter(?:\s+of)?(?:\s+fiscal(?:\s+year)?)?\s+{_YEAR}\b"
    rf"|\bQ[1-4]\s+(?:fiscal\s+)?{_YEAR}\b|\bfiscal(?:\s+year)?\s+{_YEAR}\b",
    re.I,
)

_TICKER = r"(?-i:[A-Z]{1,5}(?:[.-][A-Z]{1,2})?)"  # capitals even inside a case-blind pattern
# A symbol set in small capitals comes out of the text layer in mixed case (Oracle's "OrCL"): capitals
# at both ends, read in capitals.
_SMALL_CAPS = r"(?-i:[A-Z][A-Za-z]{1,3}[A-Z])"
_EXCHANGE = (
    r"(?:The\s+)?(?:New\s+York\s+Stock\s+Exchange|NYSE|Nasdaq|NASDAQ|Cboe|CBOE|Chicago\s+Stock\s+Exchange)\b"
)
_SYMBOL_BEFORE_EXCHANGE = re.compile(rf"(?<![\w$.%-])({_TICKER}|{_SMALL_CAPS})\s+{_EXCHANGE}")
# The table as retrievers.documents.pdf renders a ruled one: "Trading Symbol(s) | Common Stock | ACME".
_SYMBOL_CELL = re.compile(
    rf"Trading\s*Symbols?(?:\(s\))?\s*\|\s*([^|\n]*?)\s*\|\s*({_TICKER})\s*$", re.I | re.M
)
_SYMBOL_AFTER_COLON = re.compile(rf"Trading\s+symbols?\s*:\s*({_TICKER})\b", re.I)
# "Trading Symbol(s)", or its two words on two lines of a header laid out in columns (Apple's covers:
# "Trading\nTitle of each class symbol(s) Name of ...", PG&E's 8-Ks: "Trading Name of each exchange\n
# Title of each class Symbol(s) on which registered")
_TABLE_HEAD = re.compile(r"Trading(?:\s*|[^\n]{0,60}\n[^\n]{0,60}?)Symbols?(?:\(s\))?", re.I)
_TABLE_END = re.compile(r"Section\s+12\s*\(g\)|Indicate\s+by\s+check\s+mark", re.I)
_COMMON = re.compile(r"common\s+(?:stock|shares)|ordinary\s+shares|American\s+Depositary|Class\s+A", re.I)
_TAG = re.compile(
    rf"\((?:NYSE(?:\s+American|\s+MKT)?|NASDAQ|Nasdaq|NasdaqGS|NasdaqGM|Nasdaq\s*GS|AMEX)\s*:\s*({_TICKER})\s*[;,)]"
)
# The tag without its parentheses, as some wires print it: "... Corporation, NYSE: XYZ, today announced"
_BARE_TAG = re.compile(rf"(?<![\w(])(?:NYSE|NASDAQ|Nasdaq)\s*:\s*({_TICKER})(?![\w-])")
_PROSE_SYMBOL = re.compile(
    rf"(?:under\s+the\s+(?:ticker\s+|trading\s+)?symbols?|Stock\s+Trading\s+Symbol\s*[–—:-])\s*[“\"'‘]?({_TICKER})\b"
)
# Quoted, a symbol may come out of a small-caps font in mixed case: Oracle's "under the symbol “OrCL.”"
_PROSE_SYMBOL_QUOTED = re.compile(
    r"under\s+the\s+(?:ticker\s+|trading\s+)?symbols?\s*[“\"'‘]([A-Za-z]{1,5})[.,]?[”\"'’]"
)
_REGISTRANT = re.compile(r"\(\s*Exact\s+name\s+of\s+(?:the\s+)?registrant", re.I)
_SEPARATOR = re.compile(r"_{3,}")  # a cover's rule drawn as underscores, on the registrant's line
# A name's word starts with a capital, with digits then a capital ("3M") or with one lower-case letter then a
# capital ("eBay", "iRobot"): never a bare number ("26, 2023") or a plain lower-case word.
_NAME_WORD = r"(?:(?:\d*|[a-z])[A-Z][\w.&'’-]*)"
_ANNOUNCER = re.compile(
    rf"((?:{_NAME_WORD},?\s+|&\s+|and\s+|of\s+){{0,5}}{_NAME_WORD})\s+today\s+(?:announced|reported)\b"
)
_NAME_BEFORE_TAG = re.compile(rf"((?:{_NAME_WORD},?\s+|&\s+|and\s+|of\s+)*{_NAME_WORD})\s*$")


def read_us_filing(text: str, later: Callable[[], str] | None = None) -> dict[str, Finding]:
    """The identity fields the first pages state: doctype, year, symbol, company (each when found);
    `later`, when given, reads the pages after them (a 10-Q may print its fiscal year end only there)."""
    text = unicodedata.normalize("NFKC", text)  # "Trading\xa0Symbol(s)" (Corning's covers) reads as words
    found: dict[str, Finding] = {}
    doctype = _doctype(text)
    if doctype:
        found["doctype"] = doctype
    year = _year(text, str(doctype.value) if doctype else None, later)
    if year:
        found["year"] = year
    symbol = first(_cover_symbol(text), _tag_symbol(text))
    if symbol:
        found["symbol"] = symbol
    company = first(_registrant(text), _tagged_name(text), _announcer(text))
    if company:
        found["company"] = company
    return found


def symbol_in_prose(text: str) -> Finding | None:
    """A ticker from a sentence such as 'our common stock is traded ... under the symbol "ADBE"' (Item 5 of
    a 10-K filed before covers carried a symbol table): the one near 'common stock', else the first."""
    hits = sorted(
        [*_PROSE_SYMBOL.finditer(text), *_PROSE_SYMBOL_QUOTED.finditer(text)], key=lambda m: m.start()
    )
    near_common = [m for m in hits if _COMMON.search(text[max(0, m.start() - 200) : m.start()])]
    best = (near_common or hits)[:1]
    return Finding(best[0].group(1).upper(), "text:under-the-symbol", sure=False) if best else None


def cover_contradicts_content(cover: str, content: str) -> str | None:
    """Both readings, when an SEC cover names one company and the release behind it another's issuer tag
    (an exhibit filed under the wrong cover): the cover's symbol and registrant printed nowhere in the
    content, whose exchange tags name only other symbols. None when they agree or either says nothing."""
    symbol = _cover_symbol(cover)
    if symbol is None:
        return None
    tags = [m for pattern in (_TAG, _BARE_TAG) for m in pattern.finditer(content)]
    others = sorted({m.group(1) for m in tags} - {symbol.value})
    if not tags or len(others) < len({m.group(1) for m in tags}):
        return None  # no tag, or one is the cover's own
    if re.search(rf"(?<![\w-]){re.escape(str(symbol.value))}(?![\w-])", content):
        return None
    registrant = _registrant(cover)
    if registrant and _squash(_core_name(str(registrant.value))) in _squash(content):
        return None  # the cover's company is written in the content: a deal's release names the other party
    named = _tagged_name(content)
    cover_side = f"{registrant.value} ({symbol.value})" if registrant else str(symbol.value)
    content_side = f"{named.value} ({', '.join(others)})" if named else ", ".join(others)
    return (
        f"its cover and its content disagree: the cover is {cover_side}'s, the content a text of "
        f"{content_side} (an exhibit filed under another company's cover?)"
    )


def _squash(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.casefold())


def _core_name(name: str) -> str:
    """'Acme Widgets, Inc.' -> 'Acme Widgets': the words a text about the company writes."""
    return re.sub(
        r"(?i)[,\s]+(?:inc|incorporated|corp|corporation|co|company|ltd|plc|llc)\.?$", "", name.strip()
    )


def _doctype(text: str) -> Finding | None:
    form = _FORM_LINE.search(text)
    if form:
        return Finding(_FORMS[form.group(1).upper()], "cover:form", sure=True)
    for pattern, doctype in _REPORT_KIND:
        if pattern.search(text):
            return Finding(doctype, "cover:report-heading", sure=True)
    if _RELEASE.search(text[:RELEASE_LEAD]) and (
        _TAG.search(text) or _BARE_TAG.search(text) or _RELEASE_MARK.search(text[:RELEASE_LEAD])
    ):
        return Finding(EARNINGS, "release:results-headline", sure=True)
    return None


def _year(text: str, doctype: str | None, later: Callable[[], str] | None = None) -> Finding | None:
    """The fiscal year (retrievers.catalog_draft.fiscal_year says how it is named); `later` gives the
    pages after the first, read only when a quarter's fiscal year end is not on them."""
    if doctype == ANNUAL:
        end = _first_date(_FISCAL_YEAR_ENDED, text)
        if end:
            return Finding(fiscal_year_of_end(end.day), "cover:fiscal-year-ended", sure=True)
    elif doctype == QUARTERLY:
        quarter = _first_date(_QUARTER_ENDED, text)
        if quarter:
            return _quarter_year(text, quarter.day, later)
    elif doctype == CURRENT:
        reported = _first_date(_REPORT_DATE, text) or _first_date(_DATE_THEN_REPORT, text)
        if reported:
            return Finding(reported.day.year, "cover:date-of-report", sure=True)
    elif doctype == EARNINGS:
        return _release_year(text)
    match = _ANY_PERIOD_ENDED.search(text)
    if match:
        return Finding(_date_year(match), "text:period-ended", sure=False)
    match = _NAMED_QUARTER.search(text)
    if match:
        return Finding(int(next(g for g in match.groups() if g)), "text:named-period", sure=False)
    return None


def _first_date(pattern: re.Pattern, text: str) -> Dated | None:
    for match in pattern.finditer(text):
        day = parse_date(match)
        if day:
            return Dated(day, match.start())
    return None


def _quarter_year(text: str, quarter: date, later: Callable[[], str] | None) -> Finding | None:
    """A 10-Q's fiscal year: the first fiscal year end after its quarter, where the filing prints its
    last one; else its own label of the quarter; else none (the quarter's calendar year would be a guess)."""
    for pages, sure in ((text, True), (later() if later else "", False)):
        last = last_year_end(pages, quarter)
        if last:
            year = fiscal_year_of_end(year_end_after(quarter, last))
            return Finding(year, "cover:quarter-ended+fiscal-year-end", sure)
        label = quarter_label(pages)
        if label and quarter.year <= label.year <= quarter.year + 1:
            return Finding(label.year, "text:fiscal-quarter-label", sure=False)
    return None


def _release_year(text: str) -> Finding | None:
    """An earnings release's fiscal year: the year-end date of a fourth-quarter or full-year release
    (Ulta's "fifty-two-week period (“fiscal year”) ended January 28, 2023": 2023); else the label of the
    quarter it reports ("second quarter fiscal 2024", "first-quarter 2023"); else the year of the fiscal
    year end after its quarter, where it prints the last one."""
    lead = text[:RELEASE_LEAD]
    label = quarter_label(lead)
    period = _first_date(_RELEASE_PERIOD, lead)
    year_end = _first_date(_RELEASE_YEAR_ENDED, lead)
    if year_end and period and year_end.day < period.day:
        year_end = None  # a year before the quarter reported: a comparison, or the last 10-K cited
    if year_end and (label is None or label.quarter in (0, 4)):
        return Finding(fiscal_year_of_end(year_end.day), "release:fiscal-year-ended", sure=True)
    if label and (period is None or period.day.year <= label.year <= period.day.year + 1):
        return Finding(label.year, "release:quarter-label", sure=True)
    if period:
        last = last_year_end(text, period.day)
        if last:
            year = fiscal_year_of_end(year_end_after(period.day, last))
            return Finding(year, "release:period-ended+fiscal-year-end", sure=True)
    return None


def _date_year(match: re.Match) -> int:
    return int(next(g for g in reversed(match.groups()) if g))


def _cover_symbol(text: str) -> Finding | None:
    colon = _SYMBOL_AFTER_COLON.search(text)
    if colon:
        return Finding(colon.group(1), "cover:trading-symbol", sure=True)
    cells = [(m.group(1), m.group(2)) for m in _SYMBOL_CELL.finditer(text)]
    head = _TABLE_HEAD.search(text)
    if not cells and head:
        end = _TABLE_END.search(text, head.end())
        table = text[head.end() : end.start() if end else head.end() + 3000]
        rows = table.splitlines()[1:]
        cells = [(row, m.group(1)) for row in rows for m in [_SYMBOL_BEFORE_EXCHANGE.search(row)] if m]
        if not cells:  # an exchange name wrapped onto the next line: read the table as one line
            cells = [("", m.group(1)) for m in _SYMBOL_BEFORE_EXCHANGE.finditer(" ".join(rows))]
    common = [symbol for row, symbol in cells if _COMMON.search(row)]
    if common or cells:
        return Finding((common or [s for _, s in cells])[0].upper(), "cover:trading-symbol", sure=True)
    return None


def _tag_symbol(text: str) -> Finding | None:
    tag = _TAG.search(text) or _BARE_TAG.search(text)
    return Finding(tag.group(1), "text:exchange-tag", sure=True) if tag else None


def _registrant(text: str) -> Finding | None:
    label = _REGISTRANT.search(text)
    if not label:
        return None
    before = text[: label.start()].rstrip().splitlines()
    line = _SEPARATOR.sub("", before[-1]).strip() if before else ""
    return Finding(line, "cover:registrant", sure=True) if line else None


def _announcer(text: str) -> Finding | None:
    """'CHICAGO, IL - McDonald's Corporation today announced results' -> "McDonald's Corporation"."""
    said = _ANNOUNCER.search(text[:RELEASE_LEAD])
    return Finding(said.group(1), "release:announcer", sure=False) if said else None


def _tagged_name(text: str) -> Finding | None:
    """'... (BUSINESS WIRE)-- Ulta Beauty, Inc. (NASDAQ: ULTA)' -> 'Ulta Beauty, Inc.'"""
    tag = _TAG.search(text)
    if not tag:
        return None
    line = text[: tag.start()].splitlines()[-1] if text[: tag.start()].strip() else ""
    line = re.split(r"--|—|–|\s-\s|\)\s", line)[-1]
    name = _NAME_BEFORE_TAG.search(line.strip())
    return Finding(name.group(1).strip(" ,"), "text:exchange-tag", sure=False) if name else None
