"""Deterministic, finance-aware parsing of raw extracted values into canonical typed values.

Money -> plain currency units (万元 x1e4, 亿元 x1e8, thousands x1e3, millions x1e6, billions x1e9);
"(1,234)" -> negative; percents -> percent points (a bare fraction <= 1 is taken as a fraction);
每10股派X元 / per 10 shares -> per share; Chinese and English dates -> ISO; 是/否/yes/no -> bool;
lists -> list[str]. What these rules cannot parse is left to the LM normalizer (ok=False).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

from signatures.types import FieldSpec

NOT_DISCLOSED = {
    "", "none", "null", "n/a", "na", "nan", "not disclosed", "not available", "not stated", "-", "--", "—",
    "未披露", "不适用", "无数据", "未提及", "未说明",
}  # fmt: skip

# Longest first: "万亿" must win over "亿" and "万".
ZH_SCALES = [("万亿", 1e12), ("千亿", 1e11), ("百亿", 1e10), ("十亿", 1e9), ("亿", 1e8), ("千万", 1e7),
             ("百万", 1e6), ("十万", 1e5), ("万", 1e4), ("千", 1e3)]  # fmt: skip
EN_SCALES = [(r"trillions?|tn", 1e12), (r"billions?|bn", 1e9), (r"millions?|mn|mm", 1e6),
             (r"thousands?|'000|\$000", 1e3)]  # fmt: skip
SCALE_PATTERNS = [(re.compile(re.escape(w)), f) for w, f in ZH_SCALES] + [
    (re.compile(rf"(?<![a-z])(?:{p})(?![a-z])", re.I), f) for p, f in EN_SCALES]  # fmt: skip
SUFFIX_SCALES = {"k": 1e3, "m": 1e6, "b": 1e9}  # "$1.2B", "3.4M" written right after the number

NUMBER = re.compile(r"\d(?:[\d,]*\d)?(?:\.\d+)?|\.\d+")
PER_TEN = re.compile(r"(每\s*10\s*股|per\s+10\s+shares?|10\s*股?\s*(?=派|送|转))", re.I)
PERCENT_MARK = re.compile(r"%|percent|百分|pct", re.I)

TRUE_WORDS = {"是", "有", "已", "存在", "yes", "y", "true", "t", "1", "对"}
FALSE_WORDS = {"否", "无", "没有", "未", "不存在", "no", "n", "false", "f", "0", "不"}

MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], start=1)}  # fmt: skip
MONTH = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?"
DATE_PATTERNS = [
    (re.compile(r"(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})"), ("y", "m", "d")),
    (re.compile(r"(?<!\d)(\d{4})(\d{2})(\d{2})(?!\d)"), ("y", "m", "d")),
    (re.compile(MONTH + r"\s+(\d{1,2}),?\s+(\d{4})", re.I), ("mon", "d", "y")),
    (re.compile(r"(\d{1,2})\s+" + MONTH + r",?\s+(\d{4})", re.I), ("d", "mon", "y")),
]
LIST_SPLIT = re.compile(r"\s*(?:[、,;；/\n]|\band\b|和|及|以及)\s*")


def tidy(value: float) -> float:
    """Drop binary noise from scaling (0.1544 * 100 -> 15.44, not 15.440000000000001)."""
    return float(f"{value:.12g}")


@dataclass(frozen=True)
class Parsed:
    ok: bool  # False: the rules could not decide; ask the LM normalizer
    value: Any = None
    reason: str = ""


def clean(text: str | None) -> str:
    """NFKC folds full-width digits and punctuation (（１，２３４）％ -> (1,234)%)."""
    return unicodedata.normalize("NFKC", str(text or "")).strip()


def is_not_disclosed(text: str | None) -> bool:
    return clean(text).lower().rstrip(".。") in NOT_DISCLOSED


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
    after = text[match.end():]
    if before.endswith(("-", "−", "–")) or (before.endswith("(") and ")" in after):
        value = -value
    return value, match


def is_year_label(text: str, match: re.Match) -> bool:
    if not re.fullmatch(r"(19|20)\d\d", match.group()):
        return False
    return bool(re.match(r"\s*(年|fiscal)", text[match.end():], re.I)
                or re.search(r"(FY|fiscal year|year|财年)\s*$", text[: match.start()], re.I))


def scale_of(after_number: str, unit: str) -> tuple[float, str]:
    """Multiplier stated right after the number (the nearest scale word wins), else in the unit."""
    suffix = re.match(r"\s*([kmb])\b", after_number, re.I)
    if suffix:
        return SUFFIX_SCALES[suffix.group(1).lower()], suffix.group(1)
    for text in (after_number, unit):
        found = [(m.start(), -len(m.group()), factor, m.group()) for pattern, factor in SCALE_PATTERNS
                 for m in pattern.finditer(text)]  # fmt: skip
        if found:
            _, _, factor, word = min(found)
            return factor, word
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
    factor, word = scale_of(body[match.end():], unit_text) if scaled else (1.0, "")
    value *= factor
    if per_ten:
        value /= 10
    value = tidy(value)
    notes = [n for n in (f"x{factor:g} ({word})" if factor != 1 else "", "per 10 shares -> per share" if per_ten else "") if n]
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
        month = MONTHS[parts["mon"][:3].lower()] if "mon" in parts else int(parts["m"])
        try:
            return Parsed(True, dt.date(int(parts["y"]), month, int(parts["d"])).isoformat())
        except ValueError:
            return Parsed(False, reason=f"impossible date {raw!r}")
    return Parsed(False, reason=f"no date in {raw!r}")


def parse_bool(raw: str) -> Parsed:
    text = clean(raw).lower().rstrip(".。!")
    if text in TRUE_WORDS:
        return Parsed(True, True)
    if text in FALSE_WORDS:
        return Parsed(True, False)
    return Parsed(False, reason=f"not a yes/no: {raw!r}")


def parse_list(raw: Any) -> Parsed:
    if isinstance(raw, list):
        return Parsed(True, [clean(x) for x in raw if clean(x)])
    text = clean(raw)
    if text.startswith("["):
        try:
            items = json.loads(text)
            if isinstance(items, list):
                return Parsed(True, [clean(x) for x in items if clean(x)])
        except json.JSONDecodeError:
            pass
    return Parsed(True, [part for part in LIST_SPLIT.split(text) if part])


def parse_value(raw: Any, unit: str | None, spec: FieldSpec) -> Parsed:
    """Canonical value for one field of one document; Parsed.ok=False means 'ask the LM'."""
    if raw is None or (isinstance(raw, str) and is_not_disclosed(raw)):
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
        return Parsed(True, re.sub(r"\s+", " ", clean(text)))
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
