"""The words both sides read the same way: the normalizer's rules (programs/stages/units.py) and the scorer
(evaluate/matching/quantities.py, evaluate/matching/cells.py); the demo reader (fakes/) reads counts with
the scorer's Chinese numerals.

"Not disclosed", yes/no, list separators, folding, scale words and month names live here once, so a
value the normalizer calls missing is not one the scorer calls an answer. Comparison rules (which
readings count as right) stay with the scorer, layered on top of these sets. Pure constants and tiny
pure functions: no I/O.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

# Written where a filing does not state the value (looked up after word_key()).
NOT_DISCLOSED = frozenset(
    {"", "none", "null", "n/a", "na", "nan", "not disclosed", "not available", "not stated", "-", "--", "—"}
    | {"未披露", "不适用", "无", "无数据", "未提及", "未说明"}
)
# Plain yes/no words in any field's answer. "无" is here and in NOT_DISCLOSED: on a yes/no field it is
# the answer No, elsewhere it means nothing is stated (is_not_disclosed(yes_no=True)).
TRUE_WORDS = frozenset({"是", "有", "已", "存在", "对", "yes", "y", "true", "t", "1"})
FALSE_WORDS = frozenset({"否", "无", "没有", "未", "不存在", "不", "no", "n", "false", "f", "0"})

# Separators between list items; "，" and "；" are folded to "," and ";" by fold() but kept for
# callers that split unfolded text.
LIST_SEPARATOR = re.compile(r"\s*(?:[、,，;；/\n]|\band\b|和|及|以及)\s*")

# Chinese scale words, without 元 (they scale shares and people too: 1.2万人, 3.5亿股).
ZH_SCALES = {"万亿": 1e12, "千亿": 1e11, "百亿": 1e10, "十亿": 1e9, "亿": 1e8}
ZH_SCALES |= {"千万": 1e7, "百万": 1e6, "十万": 1e5, "万": 1e4, "千": 1e3}
# The same with 元 attached, and 元 itself: a number followed by one of these is money.
CNY_SCALES = {word + "元": factor for word, factor in ZH_SCALES.items()} | ZH_SCALES | {"元": 1.0}
# English scale words; '000 and $000 are column-header spellings ("USD '000").
EN_SCALES = {"trillion": 1e12, "tn": 1e12, "billion": 1e9, "bn": 1e9, "million": 1e6, "mn": 1e6, "mm": 1e6}
EN_SCALES |= {"thousand": 1e3, "'000": 1e3, "$000": 1e3}
# Plurals of the full words ("in millions"), not of the abbreviations or '000.
EN_SCALES |= {word + "s": factor for word, factor in EN_SCALES.items() if len(word) > 4}
# One letter written right after the number: "$1.2B", "3.4M", "12k".
SCALE_LETTERS = {"k": 1e3, "m": 1e6, "b": 1e9}


# Chinese digits, as counts are written ("前三", "七家"): the scorer reads answers with them
# (evaluate/matching/quantities.py) and the demo reader questions (fakes/coding.py), one table for both.
ZH_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}


def zh_numeral(token: str) -> int | None:
    """Small Chinese numerals (up to 99) as used for counts: 七, 十, 十二, 二十三; None for anything else."""
    if "十" not in token:
        return ZH_DIGITS.get(token) if len(token) == 1 else None
    tens, _, ones = token.partition("十")
    if len(tens) > 1 or len(ones) > 1:
        return None
    return (ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (ZH_DIGITS.get(ones, 0) if ones else 0)


def _longest_first(words) -> str:
    """A regex alternation in which "万亿" is tried before "万" and "千万元" before "千万"."""
    return "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))


CNY_SCALE_WORD = re.compile(_longest_first(CNY_SCALES))
EN_SCALE_WORD = re.compile(rf"(?<![a-z])(?:{_longest_first(EN_SCALES)})(?![a-z])", re.I)
# Any scale word (Chinese without 元, or English) anywhere in a text.
SCALE_WORD = re.compile(rf"{_longest_first(ZH_SCALES)}|{EN_SCALE_WORD.pattern}", re.I)
SCALE_LETTER = re.compile(r"\s*([kmb])\b", re.I)

MONTH_NAMES = "january february march april may june july august september october november december".split()
# "(\d{4}) (\d{1,2}) (\d{1,2})" joined by - / . or 年 月: 2023-05-12, 2023/5/2, 2023年5月12日.
DATE_YMD = r"(\d{4})\s*[-/.年]\s*(\d{1,2})\s*[-/.月]\s*(\d{1,2})"


def fold(text: Any) -> str:
    """NFKC folds full-width digits, letters and punctuation to half-width (（１，２３４）％ -> (1,234)%).
    None is the empty text; 0 and False are not (a list item 0 is kept)."""
    return unicodedata.normalize("NFKC", "" if text is None else str(text))


def clean(text: Any) -> str:
    """fold() without surrounding white space."""
    return fold(text).strip()


def one_line(text: Any) -> str:
    """clean() with every run of white space (line breaks included) made one space."""
    return re.sub(r"\s+", " ", clean(text))


def word_key(text: Any) -> str:
    """How a short answer is looked up in the word sets: folded, lower case, no closing full stop."""
    return clean(text).lower().rstrip(".。!")


def read_bool(text: Any, true_words=TRUE_WORDS, false_words=FALSE_WORDS) -> bool | None:
    """True or False for a yes/no word, None for anything else (callers may pass wider sets)."""
    key = word_key(text)
    return True if key in true_words else False if key in false_words else None


def is_not_disclosed(value: Any, yes_no: bool = False) -> bool:
    """None or a not-disclosed word; on a yes/no field, a word that reads as yes/no ("无") is an answer."""
    if value is None:
        return True
    if not isinstance(value, str) or word_key(value) not in NOT_DISCLOSED:
        return False
    return not (yes_no and read_bool(value) is not None)


def list_items(value: Any) -> list:
    """The items of a list answer: a list as given, a JSON list, or text split at the separators.
    Items of a given or JSON list are returned as they are (they may be objects)."""
    if isinstance(value, list | tuple | set):
        return list(value)
    text = clean(value)
    if text.startswith("["):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            parsed = None
        if isinstance(parsed, list):
            return parsed
    return [part for part in LIST_SEPARATOR.split(text) if part]


def scale_factor(word: str) -> float:
    """The multiplier of a word found by one of the scale patterns above ("亿元" 1e8, "Millions" 1e6)."""
    key = word.strip().lower()
    return CNY_SCALES.get(key) or EN_SCALES.get(key) or SCALE_LETTERS[key]


def month_number(name: str) -> int | None:
    """1-12 for a month name or its abbreviation ("Sept.", "jun"), None otherwise."""
    key = name.strip().lower().rstrip(".")[:3]
    starts = [m[:3] for m in MONTH_NAMES]
    return starts.index(key) + 1 if len(key) == 3 and key in starts else None
