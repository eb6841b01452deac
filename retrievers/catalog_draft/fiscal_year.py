"""Which fiscal year a US filing belongs to, read from the dates and labels it prints (issue 29).

The catalog's `year` is the fiscal year as companies and FinanceBench label it:
  - a fiscal year is named by the calendar year it ends in (Apple's year ended 2019-09-28 is 2019,
    Salesforce's ended 2023-01-31 is fiscal 2023), except that a 52/53-week year ending in the first
    days of January belongs to the year before (J&J's year ended 2023-01-01 is fiscal 2022): it is
    the year before, run a few days over;
  - a quarter carries the fiscal year it belongs to: the first fiscal year end on or after the
    quarter's end, when the filing prints its fiscal year end (a 10-Q's balance sheet "as of October
    31, 2022 and January 31, 2022", "our Annual Report on Form 10-K for the fiscal year ended January
    31, 2022"); else the filing's own label ("second quarter fiscal 2024", "Q2 FY24", "first-quarter
    2023"); never the calendar year of the quarter's end alone, which is wrong for every company whose
    year does not end in December (Best Buy's quarter ended 2023-07-29 is Q2 fiscal 2024).
One company labels otherwise: Ulta Beauty calls its year ended 2023-01-28 "Fiscal 2022"; FinanceBench
files it as 2023, as the end-date rule does (its questions say "FY2023 refers to the 12 months ended on
January 28, 2023 (although the company calls it fiscal 2022)").
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import NamedTuple

_MONTHS = {
    m[:3].lower(): i
    for i, m in enumerate(
        "January February March April May June July August September October November December".split(), 1
    )
}
MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
# "November 27, 2015", "Dec. 31 2022", "31 December 2022", "12/31/2022" (a date a line wraps: "January\n29, 2022")
DATE = (
    rf"(?:(?P<m1>{MONTH})\.?\s+(?P<d1>\d{{1,2}})\s*,?\s*(?P<y1>(?:19|20)\d{{2}})"
    rf"|(?P<d2>\d{{1,2}})\s+(?P<m2>{MONTH})\.?,?\s+(?P<y2>(?:19|20)\d{{2}})"
    rf"|(?P<m3>\d{{1,2}})/(?P<d3>\d{{1,2}})/(?P<y3>(?:19|20)\d{{2}}))"
)
_DATE = re.compile(DATE, re.I)
DATE_TEXT = re.sub(r"\?P<\w+>", "?:", DATE)  # the same, without named groups: for two dates in one pattern
# The first days of January a 52/53-week year can run into: it ends on the same weekday each year, so
# at most 6 days past the year it is named for (J&J 2023-01-01, Intel 2022-12-31 / 2023-12-30).
JANUARY_DAYS = 7

_ORDINAL = r"(?P<q>first|second|third|fourth|1st|2nd|3rd|4th)"
_QUARTER_LABEL = re.compile(
    # "second quarter fiscal 2024", "Second-Quarter of Fiscal Year 2024", "first quarter 2023", "fourth
    # quarter and fiscal 2022", "Fourth-Quarter and Full-Year 2022"
    rf"\b{_ORDINAL}[- ]quarter(?:\s+(?:of|and|&))?(?:\s+full[- ]year)?(?:\s+(?P<fiscal>fiscal(?:\s+year)?|FY))?\s*"
    r"(?P<year>(?:19|20)\d{2}|'\d{2})\b"
    # "2022 Fourth-Quarter and Full-Year Results", "Fiscal 2023 Fourth Quarter"
    r"|\b(?P<fiscal5>fiscal(?:\s+year)?\s+|FY\s*)?(?P<year5>(?:19|20)\d{2})\s+"
    r"(?:first|second|third|fourth|1st|2nd|3rd|4th)[- ]quarter\b"
    # "Full Year 2022 Results", "full-year fiscal 2023": the year, with no quarter
    r"|\bfull[- ]year\s+(?P<fiscal6>fiscal\s+|FY\s*)?(?P<year6>(?:19|20)\d{2})\b"
    # "Q2 FY24", "Q2 fiscal 2024", "Q2 2023", "Q2'24"
    r"|\bQ(?P<qn>[1-4])\s*(?P<fiscal2>FY|fiscal(?:\s+year)?)?\s*'?(?P<year2>(?:19|20)\d{2}|\d{2})\b"
    # "FY24 second quarter", "FY24 Q2"
    r"|\b(?P<fiscal3>fiscal(?:\s+year)?|FY)\s*'?(?P<year3>\d{2})\s+"
    r"(?:first|second|third|fourth|1st|2nd|3rd|4th)[- ]quarter\b"
    r"|\b(?:FY)\s*'?(?P<year4>(?:19|20)\d{2}|\d{2})\s+Q[1-4]\b",
    re.I,
)
# Where a filing prints the end of its last fiscal year: the 10-K a 10-Q is read with, the balance
# sheet's comparison column.
_LAST_YEAR_END = [
    re.compile(rf"Form\s+10-K\s+for\s+the\s+(?:fiscal\s+)?year\s+ended\s+{DATE_TEXT}", re.I),
    re.compile(rf"(?:fiscal\s+)?year\s+ended\s+{DATE_TEXT}[^.]{{0,40}}?Form\s+10-K", re.I),
    re.compile(
        rf"Balance\s+Sheets?\s*(?:\(\s*unaudited\s*\))?\s*(?:as\s+of|at)\s+{DATE_TEXT}\s*,?\s+and\s+{DATE_TEXT}",
        re.I,
    ),
]
_FISCAL_YEAR_END_LABEL = re.compile(
    rf"Fiscal\s+Year\s+End(?:s|ing)?\s*:?\s*\(?\s*(?P<m>{MONTH})\.?\s+(?P<d>\d{{1,2}})\b", re.I
)


class Dated(NamedTuple):
    day: date
    start: int  # where the date stands in the text


def parse_date(match: re.Match) -> date | None:
    """The date a DATE match read (its named groups), or None when it is no calendar date (13/45/2022)."""
    g = match.groupdict()
    for i in "123":
        if g.get(f"y{i}"):
            month = g[f"m{i}"]
            month_no = int(month) if month.isdigit() else _MONTHS[month[:3].lower()]
            try:
                return date(int(g[f"y{i}"]), month_no, int(g[f"d{i}"]))
            except ValueError:
                return None
    return None


def fiscal_year_of_end(end: date) -> int:
    """The fiscal year a year ending on `end` is named for: its calendar year, or the one before when it
    ends in the first days of January (a 52/53-week year run a few days over)."""
    return end.year - 1 if end.month == 1 and end.day <= JANUARY_DAYS else end.year


def year_end_after(period_end: date, last_year_end: date) -> date:
    """The first fiscal year end on or after `period_end`, for a company whose year ended on
    `last_year_end`: the same month and day, a year on at a time (a 52/53-week end moves by a few days,
    hence the week of slack)."""
    end = last_year_end
    while end + timedelta(days=JANUARY_DAYS) < period_end:
        end = _same_day_next_year(end)
    return end


def _same_day_next_year(day: date) -> date:
    try:
        return day.replace(year=day.year + 1)
    except ValueError:  # February 29
        return day.replace(year=day.year + 1, day=28)


def last_year_end(text: str, period_end: date) -> date | None:
    """The end of the fiscal year before the period's, as the filing prints it (None when it does not)."""
    for pattern in _LAST_YEAR_END:
        for match in pattern.finditer(text):
            days = [d for d in _dates_in(match.group(0)) if d < period_end]
            if days:
                return days[-1]
    label = _FISCAL_YEAR_END_LABEL.search(text)
    if label:
        month, day = _MONTHS[label.group("m")[:3].lower()], int(label.group("d"))
        for year in (period_end.year - 1, period_end.year - 2):
            try:
                candidate = date(year, month, day)
            except ValueError:
                continue
            if candidate < period_end:
                return candidate
    return None


def _dates_in(text: str) -> list[date]:
    return [d for m in _DATE.finditer(text) if (d := parse_date(m)) is not None]


class Label(NamedTuple):
    year: int
    fiscal: (
        bool  # the label says fiscal ("fiscal 2024", "FY24"), not a calendar quarter ("first quarter 2023")
    )
    quarter: int  # 1-4, 0 when the label does not say which
    start: int


def quarter_label(text: str) -> Label | None:
    """The first quarter the text names with its year: "second quarter fiscal 2024" -> 2024."""
    for match in _QUARTER_LABEL.finditer(text):
        g = match.groupdict()
        raw = g["year"] or g["year2"] or g["year3"] or g["year4"] or g["year5"] or g["year6"]
        year = _full_year(raw)
        if year is None:
            continue
        fiscal = bool(
            g["fiscal"] or g["fiscal2"] or g["fiscal3"] or g["year4"] or g["fiscal5"] or g["fiscal6"]
        )
        if g["year2"] and len(raw) == 2 and not g["fiscal2"] and "'" not in match.group(0):
            continue  # "Q2 23" is too loose to be a label
        return Label(year, fiscal, _quarter_number(match.group(0)), match.start())
    return None


def _quarter_number(text: str) -> int:
    low = text.lower()
    for n, words in enumerate((("first", "1st", "q1"), ("second", "2nd", "q2"), ("third", "3rd", "q3")), 1):
        if any(w in low for w in words):
            return n
    return 4 if any(w in low for w in ("fourth", "4th", "q4")) else 0


def _full_year(raw: str) -> int | None:
    digits = raw.strip("'")
    if len(digits) == 2:
        return 2000 + int(digits)
    return int(digits) if len(digits) == 4 else None
