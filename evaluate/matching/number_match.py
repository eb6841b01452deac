"""When a number of an answer is a number of the gold: unit-aware, rounding-aware, no LM.

14.3% == 0.143 == 14.3 (percent points without %), 10600万元 == 1.06亿元, $4.85 billion ==
$4,851,882,000, and an A-share growth rate the gold prints as "-0.14%" may be meant as -14%.
"""

from __future__ import annotations

from evaluate.matching.quantities import Quantity

UNSTATED_SCALES = (1e3, 1e4, 1e6, 1e8, 1e9)
DISCRETE = {"count", "day", "person", "share", "month"}
RELATIVE_TOLERANCE = 0.005  # numbers recomputed from slightly different inputs
MAX_ROUNDING = 0.05  # an answer rounded to fewer digits may be off by half its last digit, up to 5%


def _compatible(gold_kind: str, answer_kind: str) -> bool:
    return gold_kind == answer_kind or "none" in (gold_kind, answer_kind)


def _readings(q: Quantity, gold: Quantity | None, growth_quirk: bool) -> list[tuple[float, float]]:
    """(value, rounding allowance) readings of a number; gold percents may also be read as fractions."""
    readings = [(q.value, q.half_ulp)]
    if gold is None and q.kind == "percent" and growth_quirk:
        readings.append((q.value * 100, q.half_ulp * 100))  # "-0.14%" printed for a fraction -0.14
    if gold is not None and q.kind == "none" and gold.kind == "percent":
        readings.append((q.value / 100, q.half_ulp / 100))  # 18.02 meaning 18.02%
    return readings


def same_number(g: Quantity, a: Quantity, growth_quirk: bool, absolute: bool = False) -> bool:
    """The answer's number `a` states the gold's number `g` (within rounding, in any unit)."""
    if not _compatible(g.kind, a.kind):
        return False
    for gv, gu in _readings(g, None, growth_quirk):
        for av, au in _readings(a, g, growth_quirk):
            if absolute:
                gv, av = abs(gv), abs(av)
            rounding = 0.0 if g.kind in DISCRETE else gu  # 1天 is exactly one day, not 0.5..1.5
            tolerance = max(rounding, min(au, MAX_ROUNDING * abs(gv)), RELATIVE_TOLERANCE * abs(gv))
            if abs(gv - av) <= tolerance:
                return True
    return False


def same_digits(g: Quantity, a: Quantity) -> bool:
    """The digits agree though the units do not (10600 vs 10600万元, or a bare number in 万元 or
    millions): unclear, not wrong."""
    if abs(g.raw - a.raw) <= max(RELATIVE_TOLERANCE * g.raw, 1e-9):
        return True
    if g.kind == "money" and a.kind == "none":
        return any(
            abs(g.value - a.value * scale) <= RELATIVE_TOLERANCE * abs(g.value) for scale in UNSTATED_SCALES
        )
    return False
