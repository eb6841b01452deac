"""Rules that read a US filing's identity from its first pages: the SEC cover page, or an earnings release.

Method only, no table of companies: the cover states the form ("FORM 10-K"), the period ("For the
fiscal year ended November 27, 2015"), the registrant ("... (Exact name of registrant as specified in
its charter)") and, since 2019, the "Trading Symbol(s)" table; an earnings release states its issuer's
exchange tag ("PepsiCo, Inc. (NASDAQ: PEP)") and its period ("12 weeks ended March 25, 2023").

The year of a period is the year its end date falls in, as the cover writes it. That is also how
FinanceBench names Ulta Beauty's release for the fiscal year ended January 28, 2023 (2023), which the
release itself calls "Fiscal 2022": a company's fiscal-year label depends on its own convention, the
end date does not.
"""

from __future__ import annotations

import re
import unicodedata

from retrievers.catalog_draft.finding import Finding, first

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
_RELEASE = re.compile(
    r"\b(?:reports?|reported|announces?|announced|posts?|delivers?)\b[^.]{0,80}?"  # a headline may wrap
    r"\b(?:quarter|full[- ]year|fiscal(?:\s+year)?\s+\d{4}|year[- ]end)\b[^.]{0,60}?\bresults\b",
    re.I,
)
_PERIOD_ENDED = {
    ANNUAL: re.compile(rf"fiscal\s+year\s+ended\s*:?{_GAP}{_DATE}", re.I),
    QUARTERLY: re.compile(rf"quarterly\s+period\s+ended\s*:?{_GAP}{_DATE}", re.I),
    CURRENT: re.compile(
        rf"Date\s+of\s+Report\s*\(\s*Date\s+of\s+earliest\s+event\s+reported\s*\)\s*:?{_GAP}{_DATE}", re.I
    ),
    EARNINGS: re.compile(
        rf"\b(?:quarter|period|weeks|months|fiscal\s+year)\W{{0,3}}\s+ended\s+{_DATE}", re.I
    ),
}
_ANY_PERIOD_ENDED = re.compile(
    rf"\b(?:year|quarter|period|weeks|months)\W{{0,3}}\s+ended\s*:?\s+{_DATE}", re.I
)
_NAMED_QUARTER = re.compile(
    rf"\b(?:first|second|third|fourth|1st|2nd|3rd|4th)[- ]quarter(?:\s+of)?(?:\s+fiscal(?:\s+year)?)?\s+{_YEAR}\b"
    rf"|\bQ[1-4]\s+(?:fiscal\s+)?{_YEAR}\b|\bfiscal(?:\s+year)?\s+{_YEAR}\b",
    re.I,
)

_TICKER = r"(?-i:[A-Z]{1,5}(?:[.-][A-Z]{1,2})?)"  # capitals even inside a case-blind pattern
_EXCHANGE = (
    r"(?:The\s+)?(?:New\s+York\s+Stock\s+Exchange|NYSE|Nasdaq|NASDAQ|Cboe|CBOE|Chicago\s+Stock\s+Exchange)\b"
)
_SYMBOL_BEFORE_EXCHANGE = re.compile(rf"(?<![\w$.%-])({_TICKER})\s+{_EXCHANGE}")
# The table as retrievers.documents.pdf renders a ruled one: "Trading Symbol(s) | Common Stock | ACME".
_SYMBOL_CELL = re.compile(
    rf"Trading\s*Symbols?(?:\(s\))?\s*\|\s*([^|\n]*?)\s*\|\s*({_TICKER})\s*$", re.I | re.M
)
_SYMBOL_AFTER_COLON = re.compile(rf"Trading\s+symbols?\s*:\s*({_TICKER})\b", re.I)
_TABLE_HEAD = re.compile(r"Trading\s*Symbol", re.I)
_TABLE_END = re.compile(r"Section\s+12\s*\(g\)|Indicate\s+by\s+check\s+mark", re.I)
_COMMON = re.compile(r"common\s+(?:stock|shares)|ordinary\s+shares|American\s+Depositary|Class\s+A", re.I)
_TAG = re.compile(
    rf"\((?:NYSE(?:\s+American|\s+MKT)?|NASDAQ|Nasdaq|NasdaqGS|NasdaqGM|Nasdaq\s*GS|AMEX)\s*:\s*({_TICKER})\s*[;,)]"
)
_PROSE_SYMBOL = re.compile(
    rf"(?:under\s+the\s+(?:ticker\s+|trading\s+)?symbols?|Stock\s+Trading\s+Symbol\s*[–—:-])\s*[“\"'‘]?({_TICKER})\b"
)
_REGISTRANT = re.compile(r"\(\s*Exact\s+name\s+of\s+(?:the\s+)?registrant", re.I)
_SEPARATOR = re.compile(r"_{3,}")  # a cover's rule drawn as underscores, on the registrant's line
_NAME_BEFORE_TAG = re.compile(r"((?:[A-Z][\w.&'’-]*,?\s+|&\s+|and\s+|of\s+)*[A-Z][\w.&'’-]*)\s*$")


def read_us_filing(text: str) -> dict[str, Finding]:
    """The identity fields the first pages state: doctype, year, symbol, company (each when found)."""
    text = unicodedata.normalize("NFKC", text)  # "Trading\xa0Symbol(s)" (Corning's covers) reads as words
    found: dict[str, Finding] = {}
    doctype = _doctype(text)
    if doctype:
        found["doctype"] = doctype
    year = _year(text, str(doctype.value) if doctype else None)
    if year:
        found["year"] = year
    symbol = first(_cover_symbol(text), _tag_symbol(text))
    if symbol:
        found["symbol"] = symbol
    company = first(_registrant(text), _tagged_name(text))
    if company:
        found["company"] = company
    return found


def symbol_in_prose(text: str) -> Finding | None:
    """A ticker from a sentence such as 'our common stock is traded ... under the symbol "ADBE"' (Item 5 of
    a 10-K filed before covers carried a symbol table): the one near 'common stock', else the first."""
    hits = list(_PROSE_SYMBOL.finditer(text))
    near_common = [m for m in hits if _COMMON.search(text[max(0, m.start() - 200) : m.start()])]
    best = (near_common or hits)[:1]
    return Finding(best[0].group(1), "text:under-the-symbol", sure=False) if best else None


def _doctype(text: str) -> Finding | None:
    form = _FORM_LINE.search(text)
    if form:
        return Finding(_FORMS[form.group(1).upper()], "cover:form", sure=True)
    for pattern, doctype in _REPORT_KIND:
        if pattern.search(text):
            return Finding(doctype, "cover:report-heading", sure=True)
    if _RELEASE.search(text[:3000]) and _TAG.search(text):
        return Finding(EARNINGS, "release:results-headline", sure=True)
    return None


def _year(text: str, doctype: str | None) -> Finding | None:
    pattern = _PERIOD_ENDED.get(doctype or "")
    if pattern:
        match = pattern.search(text)
        if match:
            return Finding(
                _date_year(match), f"{'release' if doctype == EARNINGS else 'cover'}:period-ended", True
            )
    match = _ANY_PERIOD_ENDED.search(text)
    if match:
        return Finding(_date_year(match), "text:period-ended", sure=False)
    match = _NAMED_QUARTER.search(text)
    if match:
        return Finding(int(next(g for g in match.groups() if g)), "text:named-period", sure=False)
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
        return Finding((common or [s for _, s in cells])[0], "cover:trading-symbol", sure=True)
    return None


def _tag_symbol(text: str) -> Finding | None:
    tag = _TAG.search(text)
    return Finding(tag.group(1), "text:exchange-tag", sure=True) if tag else None


def _registrant(text: str) -> Finding | None:
    label = _REGISTRANT.search(text)
    if not label:
        return None
    before = text[: label.start()].rstrip().splitlines()
    line = _SEPARATOR.sub("", before[-1]).strip() if before else ""
    return Finding(line, "cover:registrant", sure=True) if line else None


def _tagged_name(text: str) -> Finding | None:
    """'... (BUSINESS WIRE)-- Ulta Beauty, Inc. (NASDAQ: ULTA)' -> 'Ulta Beauty, Inc.'"""
    tag = _TAG.search(text)
    if not tag:
        return None
    line = text[: tag.start()].splitlines()[-1] if text[: tag.start()].strip() else ""
    line = re.split(r"--|—|–|\s-\s|\)\s", line)[-1]
    name = _NAME_BEFORE_TAG.search(line.strip())
    return Finding(name.group(1).strip(" ,"), "text:exchange-tag", sure=False) if name else None
