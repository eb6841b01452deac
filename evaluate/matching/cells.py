"""One extracted value against one gold value, deterministically, with a one-line explanation.

Gold types come from the MuDABench metadata: numbers (unit in the key: `_pct` percent points,
`_10k_cny` 万元, `_cny`/`_usd` currency units, no suffix = a fraction or a count), strings (firm
names, addresses), booleans, dates (`YYYY-MM-DD`, `MM-DD`), lists (of strings or of small objects),
and null (not disclosed).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from evaluate.matching.quantities import Quantity, find_dates, find_quantities, fold, parse_date_value
from signatures.vocabulary import FALSE_WORDS, TRUE_WORDS, is_not_disclosed, list_items, read_bool

# Scorer-only, layered on the shared words: the scorer has no LM to fall back on, so it also reads
# MuDABench's yes/no phrasings ("已审验", "遵循"); the normalizer hands those to its LM.
SCORER_TRUE_WORDS = TRUE_WORDS | {"已披露", "披露", "已审验", "经过", "遵循", "参照"}
# Scorer-only: MuDABench's yes/no gold asks "disclosed/done?", so "未披露" is a No; units.py keeps it null.
SCORER_FALSE_WORDS = FALSE_WORDS | {"未披露", "不适用", "未审验", "未经过"}
STRING_NOISE = re.compile(r"[\s()（）\[\]【】“”\"'‘’《》<>.,，。、:：;；!！?？_\-/]|特殊普通合伙")
RELATIVE_TOLERANCE = 0.005
DATE_VALUE = re.compile(r"^\d{4}-\d{2}-\d{2}$|^\d{2}-\d{2}$")


@dataclass(frozen=True)
class CellResult:
    doc_id: str
    symbol: str
    field: str
    gold: Any
    got: Any
    correct: bool
    explanation: str  # "601166 value_total_operating_cost_cny: got 3.2e+09, gold 3.24e+09"


def show(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float | int):
        return f"{value:.6g}"
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= 60 else text[:57] + "..."


def normalize_string(value: Any) -> str:
    """Full/half width, case, punctuation and firm-suffix variants folded away."""
    text = STRING_NOISE.sub("", fold(str(value))).lower()
    return text.replace("股份有限公司", "有限公司").replace("有限责任公司", "有限公司")


def _gold_base(key: str, gold: float) -> float:
    """The gold number in base units: currency units, fractions for percents."""
    if key.endswith("_10k_cny"):
        return gold * 1e4
    if key.endswith("_pct"):
        return gold / 100
    return gold


def _readings(key: str, got: Any) -> list[float]:
    """Base-unit readings of an extracted number (a bare number may be percent points or 万元)."""
    if isinstance(got, int | float) and not isinstance(got, bool):
        quantity = Quantity(float(got), abs(float(got)), "none", 0.0, 0, 0, str(got))
    else:
        text = fold(str(got))
        found = find_quantities(text, [(d.start, d.end) for d in find_dates(text)])
        if not found:
            return []
        quantity = found[0]
    value = quantity.value
    readings = [value]
    if quantity.kind == "none":
        if key.endswith("_pct") or "ratio" in key or "margin" in key:
            readings.append(value / 100)  # percent points written without "%"
        if key.endswith("_10k_cny"):
            readings.append(value * 1e4)  # still in 万元, as the filing states it
    return readings


def same_number(key: str, gold: float, got: Any) -> bool:
    target = _gold_base(key, float(gold))
    for value in _readings(key, got):
        # Filings state exact figures: only 0.5% slack (15.4% for 15.44), not coarse rounding (3.2e9 for 3.24e9).
        if abs(value - target) <= max(RELATIVE_TOLERANCE * abs(target), 1e-12):
            return True
    return False


def _as_bool(got: Any) -> bool | None:
    if isinstance(got, bool):
        return got
    if isinstance(got, int | float):
        return bool(got)
    return read_bool(str(got), SCORER_TRUE_WORDS, SCORER_FALSE_WORDS)


def _list_key(element: Any) -> str:
    if isinstance(element, dict):
        return json.dumps({k: normalize_string(v) for k, v in sorted(element.items())}, ensure_ascii=False)
    return normalize_string(element)


def same_string(gold: str, got: Any) -> bool:
    a, b = normalize_string(gold), normalize_string(got)
    if not a or not b:
        return a == b
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 4 and len(short) >= 0.5 * len(long_) and short in long_


def compare_cell(key: str, gold: Any, got: Any) -> tuple[bool, str]:
    """(correct, why) for one cell; `got` may be a typed value or the text the extractor wrote."""
    if gold is None:
        return is_not_disclosed(got), "gold: not disclosed"
    # On a yes/no field every answer is read as one: "未披露" there is a No, not a gap (see SCORER_FALSE_WORDS).
    if is_not_disclosed(got) and not isinstance(gold, bool):
        return False, "not extracted"
    if isinstance(gold, bool):
        value = _as_bool(got)
        return value is gold, "" if value is not None else "not a yes/no"
    if isinstance(gold, int | float):
        return same_number(key, gold, got), ""
    if isinstance(gold, list):
        gold_set = {_list_key(e) for e in gold}
        got_set = {_list_key(e) for e in list_items(got)}
        missing, extra = gold_set - got_set, got_set - gold_set
        why = "; ".join(
            p
            for p in (
                f"missing {sorted(missing)}" if missing else "",
                f"extra {sorted(extra)}" if extra else "",
            )
            if p
        )
        return not missing and not extra, why
    if isinstance(gold, str) and (DATE_VALUE.match(gold) or key.endswith("_date") or key.endswith("_mmdd")):
        want, have = parse_date_value(gold), parse_date_value(got)
        if want is None or have is None:
            return same_string(gold, got), ""
        same_day = want[1:] == have[1:]
        same_year = None in (want[0], have[0]) or want[0] == have[0]
        return same_day and same_year, ""
    return same_string(str(gold), got), ""
