"""Numbers, units and dates found in free-text answers, in a comparable canonical form (no LM).

Both the final-answer matcher and process accuracy compare values written in many ways: 14.3% and
0.143, 10600.0万元 and 1.06亿元 and 106000000, $4,851,882,000.00 and $4.85 billion, 2022年6月15日
and 2022-06-15. Everything here is pure text processing; comparison rules (which readings count)
live in the callers.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from signatures.vocabulary import (
    CNY_SCALE_WORD,
    DATE_YMD,
    EN_SCALE_WORD,
    MONTH_NAMES,
    SCALE_LETTER,
    fold,  # re-exported: final_match, gold_facts and question_traits import it from here
    month_number,
    scale_factor,
    zh_numeral,
)

# Unit words after a number -> the kind of quantity (what it may be compared with).
KIND_WORDS = [
    (r"%|percent|个百分点|百分点", "percent"),
    (r"天|日|days?\b", "day"),
    (r"人|名(?!称)|people\b|persons?\b", "person"),
    (r"家|companies\b|firms\b", "count"),
    (r"次|times\b", "count"),
    (r"个(?!月)", "count"),
    (r"股|shares?\b", "share"),
    (r"个月|months?\b", "duration"),
    (r"月", "month"),
    (r"分|points?\b", "score"),
    (r"年|years?\b", "year"),
]
NUMBER = re.compile(
    r"(?<![A-Za-z0-9_.])(-|−|–)?\s*(\$|¥|￥|USD\s?|RMB\s?)?\s*(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:[eE]([+-]?\d{1,3}))?"
)
MAX_EXPONENT = 300  # a float holds 1e308; a larger exponent is a token that only looks like a number

ZH_NUMERAL = re.compile(
    r"(?<![第零〇一二两三四五六七八九十百千万])([零〇一二两三四五六七八九十]{1,3})(?=家|个|人|天|次|名|月)"
)
DATE_FULL = re.compile(rf"(?<!\d){DATE_YMD}\s*日?(?!\d)")
DATE_ZH_MD = re.compile(r"(?<![\d年-])(\d{1,2})月(\d{1,2})日")
DATE_MMDD = re.compile(r"(?<![\d.,/-])(0\d|1[0-2])-([0-2]\d|3[01])(?![\d-])")
# Free text: only full capitalized names ("may" is a verb, "Mar" a prefix); units.py also reads "Sept.".
DATE_EN = re.compile(
    r"\b(" + "|".join(m.capitalize() for m in MONTH_NAMES) + r")\.?\s+(\d{1,2}),?\s+(\d{4})\b"
)


@dataclass(frozen=True)
class Quantity:
    """One number in a text: `value` has sign and scale applied (money in currency units)."""

    value: float
    raw: float  # the digits as written, unsigned and unscaled: a unit-blind fallback comparison
    kind: str  # money | percent | day | person | count | share | month | duration | score | year | none
    half_ulp: float  # half of the last printed digit, scaled: what rounding may explain
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class DateMention:
    year: int | None
    month: int
    day: int
    start: int
    end: int

    def iso(self) -> str:
        return (
            f"{self.year:04d}-{self.month:02d}-{self.day:02d}"
            if self.year
            else f"{self.month:02d}-{self.day:02d}"
        )


def find_dates(text: str) -> list[DateMention]:
    """Dates in text; a month-day without year keeps year None (MuDABench's *_mmdd fields)."""
    found: list[DateMention] = []
    taken: list[tuple[int, int]] = []

    def add(year, month, day, m):
        if any(s < m.end() and m.start() < e for s, e in taken):
            return
        try:
            dt.date(year or 2000, month, day)
        except ValueError:
            return
        taken.append((m.start(), m.end()))
        found.append(DateMention(year, month, day, m.start(), m.end()))

    for m in DATE_FULL.finditer(text):
        add(int(m.group(1)), int(m.group(2)), int(m.group(3)), m)
    for m in DATE_EN.finditer(text):
        add(int(m.group(3)), month_number(m.group(1)), int(m.group(2)), m)
    for m in DATE_ZH_MD.finditer(text):
        add(None, int(m.group(1)), int(m.group(2)), m)
    for m in DATE_MMDD.finditer(text):
        add(None, int(m.group(1)), int(m.group(2)), m)
    return sorted(found, key=lambda d: d.start)


def parse_date_value(value) -> tuple[int | None, int, int] | None:
    """(year or None, month, day) from a gold or predicted date value, or None."""
    dates = find_dates(fold(str(value)))
    return (dates[0].year, dates[0].month, dates[0].day) if dates else None


def _unit_after(text: str, pos: int) -> tuple[float, str, int]:
    """Scale, kind and end position of the unit written right after a number."""
    tail = text[pos : pos + 16]
    stripped = tail.lstrip(" ")
    offset = pos + len(tail) - len(stripped)
    m = CNY_SCALE_WORD.match(stripped)
    if m:
        return scale_factor(m.group()), "money", offset + m.end()
    m = EN_SCALE_WORD.match(stripped) or SCALE_LETTER.match(stripped)
    if m:
        return scale_factor(m.group()), "scaled", offset + m.end()
    for pattern, kind in KIND_WORDS:
        m = re.match(pattern, stripped, re.I)
        if m:
            return 1.0, kind, offset + m.end()
    return 1.0, "none", pos


def find_quantities(text: str, skip: list[tuple[int, int]] | None = None) -> list[Quantity]:
    """Numbers with their units, skipping spans already taken (dates, entity codes)."""
    skip = list(skip or [])
    out: list[Quantity] = []
    for m in NUMBER.finditer(text):
        if any(s < m.end() and m.start() < e for s, e in skip):
            continue
        digits, decimals = m.group(3), m.group(4) or ""
        exponent = int(m.group(5) or 0)  # 1.7269e+11, as pandas prints
        if abs(exponent) > MAX_EXPONENT:  # "3e905312" in an id or hash is no quantity, and would overflow
            continue
        raw = float(digits.replace(",", "") + decimals) * 10.0**exponent
        places = (len(decimals) - 1 if decimals else 0) - exponent
        scale, kind, end = _unit_after(text, m.end())
        currency = m.group(2)
        if currency and kind in ("none", "scaled"):
            kind = "money"
        elif kind == "scaled":
            kind = "money" if re.search(r"\$|USD|dollars", text[m.end() : end + 12]) else "none"
        sign = -1.0 if m.group(1) else 1.0
        if sign < 0 and not currency and m.start() > 0 and re.match(r"[A-Za-z0-9]", text[m.start() - 1]):
            sign = 1.0  # "2021-2022": a range dash, not a minus
        half_ulp = 0.5 * 10.0 ** (-places) * scale
        value = sign * raw * scale
        if kind == "percent":
            value, half_ulp = value / 100.0, half_ulp / 100.0
        out.append(Quantity(value, raw, kind, half_ulp, m.start(), end, text[m.start() : end]))
    for m in ZH_NUMERAL.finditer(text):
        number = zh_numeral(m.group(1))
        if number is None or any(s < m.end() and m.start() < e for s, e in skip):
            continue
        _, kind, end = _unit_after(text, m.end())
        out.append(Quantity(float(number), float(number), kind, 0.5, m.start(), end, text[m.start() : end]))
    for i, name in enumerate(MONTH_NAMES):
        for m in re.finditer(rf"\b{name.capitalize()}\b", text):
            if not any(s < m.end() and m.start() < e for s, e in skip):
                out.append(Quantity(float(i + 1), float(i + 1), "month", 0.5, m.start(), m.end(), m.group()))
    return sorted(out, key=lambda q: q.start)


def close(a: float, b: float, tolerance: float) -> bool:
    return abs(a - b) <= tolerance
