"""Is a value printed in a piece of text, however a filing prints it? Pure text processing, no LM.

A value stands in a filing as 1,234 / 1234 / (1,234) / -1,234, as 12.3% for 0.123, as 1.2亿 for
12,000万 or 120,000,000元, as "5,917,340" in a table headed "(in thousands)" for 5,917,340,000,
as 2022年6月15日 / 2022/6/15 / June 15, 2022 for 2022-06-15. Numbers are therefore compared by
their digits with the decimal point shifted by what a scale word or a percent sign can account
for, signs aside (a filing prints a loss as (1,234), as -1,234 or as "a loss of 1,234"), and a value
printed rounded (1.2亿 for 123,456,789元) matches within half of its own last digit.

Its words (not disclosed, yes/no, month names, folding) are the shared vocabulary's
(signatures/vocabulary.py), so the fact check, the normalizer and the scorer read "未提及" alike.
It only has to answer "is this value in this text", so it ignores the units and kinds that the
normalizer (programs/stages/units.py) and the scorer (evaluate/matching/quantities.py) need.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import dataclass
from functools import lru_cache

from signatures.vocabulary import FALSE_WORDS, MONTH_NAMES, clean, read_bool, word_key

# Decimal shifts a scale word or a percent sign explains: %, thousand(千), 万, 十万, million(百万),
# 千万, 亿(1e8), billion(1e9), 百亿, 千亿, 万亿/trillion. A shift of one is explained by nothing
# except "per 10 shares" (每10股派4.96元 is 0.496 per share), so it is allowed only then.
SHIFTS = (0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
PER_TEN = re.compile(r"每\s*10\s*股|per\s+10\s+shares?|10\s*股\s*派", re.I)
NUMBER = re.compile(r"(?<![\d.])\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\d.,])\d+(?:\.\d+)?|(?<![\d])\.\d+")
# What a filing states by saying nothing (no GRI, no women officers): a "no", a zero, an empty list.
NOTHING = FALSE_WORDS | {"0.0", "[]", "none"}
# Units of a field that asks for a year: only then may a year printed on the page be the value.
YEAR_UNITS = frozenset({"year", "years", "年", "年份", "fiscal year"})

MONTHS = MONTH_NAMES
_MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
DATE_PATTERNS = [  # (pattern, order of its groups)
    (re.compile(r"(?<!\d)(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})\s*日?(?!\d)"), "ymd"),
    (re.compile(_MONTH + r"\s+(\d{1,2}),?\s+(\d{4})", re.I), "bdy"),
    (re.compile(r"(?<!\d)(\d{1,2})\s+" + _MONTH + r",?\s+(\d{4})", re.I), "dby"),
    (re.compile(r"(?<![\d年/-])(\d{1,2})月(\d{1,2})日"), "md"),
    (re.compile(r"^(\d{1,2})-(\d{1,2})$"), "md"),  # a month-day value such as "06-07"
]
# A month as a word of its own ("Dec.", "December"), not the start of another word ("margin", "decrease").
_MONTH_WORD = (
    r"\b(?:january|february|march|april|may|june|july|august|september|october|november|december|"
    r"jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec)\b\.?"
)
LIST_SPLIT = re.compile(r"\s*(?:[、,，;；/]|\band\b|和|及)\s*")
# A date written as one, whether or not it is a calendar date ("2022/5/67" is date-shaped, not one).
DATE_SHAPED = re.compile(
    r"\s*(\d{4}\s*[-/.年]\s*\d{1,2}\s*[-/.月]\s*\d{1,2}\s*日?|" + _MONTH + r"\s+\d{1,2},?\s+\d{4}|"
    r"\d{1,2}\s+" + _MONTH + r",?\s+\d{4})\s*",
    re.I,
)
# Numbers a page prints as labels, never as a value: a note, item, topic, part or page number ("Note 18",
# "ITEM 8.", "Topic 606", "ASU 2021-08", "Form 10-K", "附注七、43", "第12页"), a footnote mark glued to
# its word ("expense(1)"), and the parts of a date ("December 26, 2015"). Seen on real 10-Ks with the demo
# reader: Verizon's revenue "606" from "Topic 606", AMD's revenue "2015" from its fiscal year's header.
LABEL_NUMBERS = (
    # capitalized as a reference is ("Note 18", "ITEM 8."), not as a row label ("Special items 245")
    re.compile(
        r"\b(?:Notes?|NOTES?|Items?|ITEMS?|Parts?|PART|Sections?|SECTION|Schedules?|Exhibits?|Articles?|"
        r"Pages?|PAGE|Chapters?|Topics?|ASC|ASU|Forms?|Footnotes?|Rules?|pp?\.|No\.)\s*\(?"
        r"\d{1,4}[A-Za-z]?(?:[-–.]\d+[A-Za-z]?)*(?!,\d{3})\)?"
        r"(?:\s*(?:,|and|&|through|to)\s*\d{1,3}[A-Za-z]?(?![\d,.]\d))*"
    ),
    re.compile(r"\b\d+-[kq]\b", re.I),
    re.compile(r"(?:附注|注释?)\s*[一二三四五六七八九十]*[、.]?\s*\(?\d+\)?|第\s*\d+\s*[页节条章项款]"),
    re.compile(r"(?<=[A-Za-z)])\(\d{1,2}\)"),
    re.compile(_MONTH_WORD + r"\s+\d{1,2}\b,?(?:\s+\d{4})?", re.I),
    re.compile(r"(?<!\d)\d{4}\s*[-/.年]\s*\d{1,2}\s*[-/.月]\s*\d{1,2}\s*日?(?!\d)"),
    re.compile(r"(?<!\d)\d{1,2}\s+" + _MONTH_WORD + r",?\s+\d{4}", re.I),
)
YEAR = re.compile(r"(?<![\d,.])(?:19|20)\d\d(?!\d|[,.]\d)")


@dataclass(frozen=True)
class Printed:
    """A number as printed: its value (unsigned, unscaled) and how many decimals it shows."""

    value: float
    decimals: int
    year_like: bool = False  # 2022 with no comma or decimals: a year label, not an amount

    @property
    def significant(self) -> int:
        digits = f"{self.value:.{self.decimals}f}".replace(".", "").lstrip("0")
        return len(digits)


def numbers(text: str) -> list[Printed]:
    out = []
    for m in NUMBER.finditer(clean(text)):
        token = m.group().replace(",", "")
        decimals = len(token.split(".")[1]) if "." in token else 0
        year_like = bool(re.fullmatch(r"(19|20)\d\d", m.group()))
        out.append(Printed(float(token), decimals, year_like))
    return out


def asks_year(unit: str | None) -> bool:
    return clean(unit).lower() in YEAR_UNITS


@lru_cache(maxsize=256)  # a page is masked once for all the facts checked on it
def mask_labels(text: str, years: bool = True) -> str:
    """text with the digits of its label numbers (and of its years, unless years=False) made spaces:
    same length, so a span of text is the same span of the mask."""
    chars = list(text)
    # a year asked for may be printed in a date: then only the references are masked
    patterns = LABEL_NUMBERS + (YEAR,) if years else LABEL_NUMBERS[:4]
    for pattern in patterns:
        for m in pattern.finditer(text):
            for i in range(m.start(), m.end()):
                if chars[i].isdigit():
                    chars[i] = " "
    return "".join(chars)


@lru_cache(maxsize=1024)
def mask_page_number(text: str) -> str:
    """A page's text with its printed page number (a lone number of 1-3 digits on its first or last
    line, "- 12 -" or "Page 12") made spaces."""
    lines = text.split("\n")
    filled = [i for i, line in enumerate(lines) if line.strip()]
    for i in filled[:1] + filled[-1:]:
        if re.fullmatch(r"\s*(?:-\s*)?(?:page\s+)?\d{1,3}(?:\s*-)?\s*", lines[i], re.I):
            lines[i] = re.sub(r"\d", " ", lines[i])
    return "\n".join(lines)


def value_text(value) -> str:
    """A parsed value as text without float noise or exponents (5917340000.0 -> '5917340000')."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        text = f"{value:.15g}"
        return f"{value:.12f}".rstrip("0").rstrip(".") if "e" in text else text
    if isinstance(value, (list, tuple)):
        return "、".join(value_text(v) for v in value)
    return clean(value)


def dates(text: str) -> list[tuple[int | None, int, int]]:
    """(year or None, month, day) of every date in text that is a real calendar date."""
    found = []
    for pattern, order in DATE_PATTERNS:
        for m in pattern.finditer(clean(text)):
            parts = dict(zip(order, m.groups(), strict=True))
            year = int(parts["y"]) if "y" in parts else None
            month = MONTHS.index(_full_month(parts["b"])) + 1 if "b" in parts else int(parts["m"])
            day = int(parts["d"])
            try:
                dt.date(year or 2000, month, day)
            except ValueError:
                continue
            found.append((year, month, day))
    return found


def _full_month(abbrev: str) -> str:
    return next(m for m in MONTHS if m.startswith(abbrev[:3].lower()))


def is_yes_no(value) -> bool:
    """A yes/no word; a number (0, "1") is an amount to find in the quote, not a yes/no."""
    if isinstance(value, bool):
        return True
    return isinstance(value, str) and not clean(value).isdigit() and read_bool(value) is not None


def is_nothing(value) -> bool:
    """A "no", a zero or an empty list: what a filing states by saying nothing (no GRI, no women officers)."""
    if isinstance(value, (list, tuple)):
        return not value
    return value is False or word_key(value) in NOTHING


def _as_date(value: str) -> tuple[int | None, int, int] | None:
    """The value's date when the value is a date and nothing else (so '2022年营业收入' is not one)."""
    found = dates(value)
    if len(found) != 1:
        return None
    rest = re.sub(r"\d|[-/.年月日,\s]|" + _MONTH, "", value, flags=re.I)
    return found[0] if len(rest) <= 2 else None


def _fold(text: str) -> str:
    return re.sub(r"\s+", "", clean(text)).casefold()


def _numbers_match(fact: Printed, printed: Printed, per_ten: bool) -> bool:
    # A shifted reading needs two significant digits on the page and no year label: otherwise "3,000"
    # would be found in "(Note 3)" and "20.22%" in "2022年".
    shifts = (
        SHIFTS + ((1,) if per_ten else ()) if printed.significant >= 2 and not printed.year_like else (0,)
    )
    # A value printed rounded matches within half its last digit, if it keeps two significant digits
    # ("1.2亿" for 123,456,789): one digit ("1亿") would match far too much.
    slack = 0.5 * 10.0 ** (-fact.decimals) if fact.significant >= 2 else 0.0
    for k in shifts:
        for direction in (1, -1) if k else (1,):
            factor = 10.0 ** (k * direction)
            scaled, tolerance = fact.value * factor, slack * factor
            if abs(scaled - printed.value) <= tolerance + 1e-9 * max(1.0, abs(printed.value)):
                return True
    return False


def value_spans(value, unit: str | None, masked: str) -> list[tuple[int, int]]:
    """Where in `masked` (labels masked: mask_labels) the value's first number is printed, in order."""
    values = numbers(PER_TEN.sub(" ", value_text(value)))
    if not values:
        return []
    per_ten = bool(PER_TEN.search(masked) or PER_TEN.search(clean(unit)) or PER_TEN.search(value_text(value)))
    spans = []
    for m in NUMBER.finditer(masked):
        printed = numbers(m.group())
        if printed and _numbers_match(values[0], printed[0], per_ten):
            spans.append((m.start(), m.end()))
    return spans


def value_in_text(value, unit: str | None, text: str, masked: str | None = None) -> tuple[bool, str]:
    """(is the value printed in text, how it was read): the check behind "is the value in the quote".
    `masked`: the same text with its label numbers already masked in the context of its whole page
    (mask_labels: a date or note reference may begin before the text does)."""
    shown = value_text(value)
    if not shown:
        return False, "empty value"
    if DATE_SHAPED.fullmatch(shown) and _as_date(shown) is None:
        return False, f"{shown} is no calendar date"
    date = _as_date(shown)
    if date is not None:
        for year, month, day in dates(text):
            if (month, day) == date[1:] and (date[0] is None or year is None or year == date[0]):
                return True, "date"
        return False, f"no date {shown} in the text"
    folded_text = _fold(text)
    # "每10股派9.999元": the 10 is part of the wording, not a number to find (9.999 is)
    values = numbers(PER_TEN.sub(" ", shown))
    words = re.sub(
        r"[\d.,%()（）\s$¥￥€£+-]|万|亿|千|百|元|股|人|美元|usd|cny|rmb|thousands?|millions?|billions?",
        "",
        shown,
        flags=re.I,
    )
    if not (values and len(words) <= 2) and _fold(shown) in folded_text:
        return True, "as written"  # a name, an address, a phrase (a number is compared as a number below)
    if values and len(words) <= 2:  # a number, possibly with sign, currency, scale and unit words
        per_ten = bool(PER_TEN.search(clean(text)) or PER_TEN.search(clean(unit)) or PER_TEN.search(shown))
        # a year, a date, a note or page number printed on the page is never the value (unless a year is asked)
        printed = numbers(mask_labels(text if masked is None else masked, years=not asks_year(unit)))
        if all(any(_numbers_match(f, p, per_ten) for p in printed) for f in values):
            return True, "number"
        return False, f"{shown} is not among the amounts of the text (years, dates, notes and pages aside)"
    if isinstance(value, (list, tuple)) or LIST_SPLIT.search(shown):
        items = [i for i in LIST_SPLIT.split(shown) if i] if not isinstance(value, (list, tuple)) else value
        missing = [str(i) for i in items if _fold(value_text(i)) not in folded_text]
        if items and not missing:
            return True, "every item"
        return False, f"not in the text: {', '.join(missing)}"
    return False, f"{shown!r} is not in the text"
