"""Deterministic, finance-aware parsing of raw extracted values into canonical typed values.

Money -> plain currency units (万元 x1e4, 亿元 x1e8, thousands x1e3, millions x1e6, billions x1e9);
"(1,234)" -> negative; percents -> percent points (a bare fraction <= 1 is taken as a fraction);
每10股派X元 / per 10 shares -> per share; Chinese and English dates -> ISO; 是/否/yes/no -> bool;
lists -> list[str]. What these rules cannot parse is left to the LM normalizer (ok=False).
The words themselves (not disclosed, yes/no, scales, months, list separators) are shared with the
scorer in signatures/vocabulary.py, so both read an extracted value the same way.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from signatures.types import FieldSpec
from signatures.vocabulary import (
    DATE_YMD,
    MONTH_NAMES,
    SCALE_LETTER,
    SCALE_WORD,
    clean,
    is_not_disclosed,
    list_items,
    month_number,
    one_line,
    read_bool,
    scale_factor,
)

NUMBER = re.compile(r"\d(?:[\d,]*\d)?(?:\.\d+)?|\.\d+")
PER_TEN = re.compile(r"(每\s*10\s*股|per\s+10\s+shares?|10\s*股?\s*(?=派|送|转))", re.I)
PERCENT_MARK = re.compile(r"%|percent|百分|pct", re.I)

# A field value is one date, so abbreviations ("12 Sept. 2023") are safe here; the scorer, reading
# free text, accepts only full capitalized names.
MONTH = r"(" + "|".join(name[:3] for name in MONTH_NAMES) + r")[a-z]*\.?"
DATE_PATTERNS = [
    (re.compile(DATE_YMD), ("y", "m", "d")),
    (re.compile(r"(?<!\d)(\d{4})(\d{2})(\d{2})(?!\d)"), ("y", "m", "d")),
    (re.compile(MONTH + r"\s+(\d{1,2}),?\s+(\d{4})", re.I), ("mon", "d", "y")),
    (re.compile(r"(\d{1,2})\s+" + MONTH + r",?\s+(\d{4})", re.I), ("d", "mon", "y")),
]


def tidy(value: float) -> float:
    """Drop binary noise from scaling (0.1544 * 100 -> 15.44, not 15.440000000000001)."""
    return float(f"{value:.12g}")


@dataclass(frozen=True)
class Parsed:
    ok: bool  # False: the rules could not decide; ask the LM normalizer
    value: Any = None
    reason: str = ""


def first_number(text: str) -> tuple[float, re.Match] | None:
    """The first number in text, signed: a leading minus or enclosing parentheses make it negative."""
    matches = list(NUMBER.finditer(text))
    if not matches:
        return None
    # "2023年营业收入1.5亿元", "FY2023 revenue $3.2 billion": a year label is not the value.
    values = [m for m in matches if not is_year_label(text, m)]
    match = values[0] if values else matches[0]
    value = float(match.group().replace(",", ""))
    before = text[: match.start()].rstrip(" $¥￥€£RMBUSDCNY元")
    after = text[match.end() :]
    if before.endswith(("-", "−", "–")) or (before.endswith("(") and ")" in after):
        value = -value
    return value, match


def is_year_label(text: str, match: re.Match) -> bool:
    if not re.fullmatch(r"(19|20)\d\d", match.group()):
        return False
    return bool(
        re.match(r"\s*(年|fiscal)", text[match.end() :], re.I)
        or re.search(r"(FY|fiscal year|year|财年)\s*$", text[: match.start()], re.I)
    )


def scale_of(after_number: str, unit: str) -> tuple[float, str]:
    """Multiplier stated right after the number (the nearest scale word wins), else in the unit."""
    suffix = SCALE_LETTER.match(after_number)
    if suffix:
        return scale_factor(suffix.group(1)), suffix.group(1)
    for text in (after_number, unit):
        found = SCALE_WORD.search(text)  # the first scale word; at one place, the longest ("万亿" not "万")
        if found:
            return scale_factor(found.group()), found.group()
    return 1.0, ""


def parse_amount(raw: str, unit: str | None, scaled: bool = True) -> Parsed:
    """A number with sign, scale words and per-10-share conversion applied."""
    text = clean(raw)
    unit_text = clean(unit)
    per_ten = bool(PER_TEN.search(text) or PER_TEN.search(unit_text) or re.search(r"/\s*10\s*股", unit_text))
    body = PER_TEN.sub(" ", text)
    found = first_number(body)
    if found is None:
        return Parsed(False, reason=f"no number in {raw!r}")
    value, match = found
    factor, word = scale_of(body[match.end() :], unit_text) if scaled else (1.0, "")
    value *= factor
    if per_ten:
        value /= 10
    value = tidy(value)
    notes = [
        n
        for n in (
            f"x{factor:g} ({word})" if factor != 1 else "",
            "per 10 shares -> per share" if per_ten else "",
        )
        if n
    ]
    return Parsed(True, value, "; ".join(notes))


def parse_percent(raw: str, unit: str | None, as_ratio: bool = False) -> Parsed:
    """Percent points (15.44) or, for as_ratio, a fraction (0.1544)."""
    text = clean(raw)
    found = first_number(text)
    if found is None:
        return Parsed(False, reason=f"no number in {raw!r}")
    value = found[0]
    marked = bool(PERCENT_MARK.search(text) or PERCENT_MARK.search(clean(unit)))
    if as_ratio:
        return Parsed(True, tidy(value / 100) if marked else value, "percent -> fraction" if marked else "")
    if not marked and abs(value) <= 1:
        return Parsed(True, tidy(value * 100), "bare fraction -> percent points")
    return Parsed(True, value)


def parse_date(raw: str) -> Parsed:
    text = clean(raw)
    for pattern, order in DATE_PATTERNS:
        match = pattern.search(text)
        if not match:
            continue
        parts = dict(zip(order, match.groups(), strict=True))
        month = month_number(parts["mon"]) if "mon" in parts else int(parts["m"])
        if month is None:
            return Parsed(False, reason=f"no month named in {raw!r}")
        try:
            return Parsed(True, dt.date(int(parts["y"]), month, int(parts["d"])).isoformat())
        except ValueError:
            return Parsed(False, reason=f"impossible date {raw!r}")
    return Parsed(False, reason=f"no date in {raw!r}")


def parse_bool(raw: str) -> Parsed:
    value = read_bool(raw)
    return Parsed(True, value) if value is not None else Parsed(False, reason=f"not a yes/no: {raw!r}")


def parse_list(raw: Any) -> Parsed:
    return Parsed(True, [clean(item) for item in list_items(raw) if clean(item)])


MONEY = ("USD", "CNY")


def with_page_scale(parsed: Parsed, spec: FieldSpec, scale: float | None, source: str) -> Parsed:
    """A money value times the scale the fact check read off its page (Fact.scale: "(in millions, ...)"
    over the statement), so every value of a table is scaled alike whatever the reader wrote in its
    unit. A scale that could not be read is flagged in the reason, never guessed."""
    if (
        not parsed.ok
        or parsed.value is None
        or spec.unit not in MONEY
        or spec.type not in ("number", "integer")
    ):
        return parsed
    if scale is None:
        if source.startswith("unread"):
            return Parsed(True, parsed.value, "; ".join(x for x in (parsed.reason, f"scale {source}") if x))
        return parsed
    if scale == 1:
        return parsed
    value = tidy(parsed.value * scale)
    if spec.type == "integer":
        value = int(round(value))
    return Parsed(True, value, "; ".join(x for x in (parsed.reason, f"x{scale:g} ({source})") if x))


def parse_value(raw: Any, unit: str | None, spec: FieldSpec) -> Parsed:
    """Canonical value for one field of one document; Parsed.ok=False means 'ask the LM'."""
    if is_not_disclosed(raw, yes_no=spec.type == "boolean"):
        return Parsed(True, None, "not disclosed")
    if isinstance(raw, bool) and spec.type == "boolean":
        return Parsed(True, raw)
    if spec.type == "list":
        return parse_list(raw)
    text = str(raw)
    if spec.type == "boolean":
        return parse_bool(text)
    if spec.type == "date" or spec.unit == "date":
        return parse_date(text)
    if spec.type == "string":
        return Parsed(True, one_line(text))
    if spec.type == "percent" or spec.unit == "percent":
        return parse_percent(text, unit)
    if spec.unit == "ratio":
        return parse_percent(text, unit, as_ratio=True)
    parsed = parse_amount(text, unit)
    if parsed.ok and spec.type == "integer":
        rounded = round(parsed.value)
        if abs(parsed.value - rounded) > 1e-6 * max(1.0, abs(parsed.value)):
            return Parsed(False, reason=f"{raw!r} is not a whole number")
        return Parsed(True, int(rounded), parsed.reason)
    return parsed
