"""What a catalog-drafting rule found in a document: a value, the rule that found it, and how sure it is.

`sure` is a property of the rule, not of the document: a rule that reads the one place a filing must
state the field (the SEC cover's "For the fiscal year ended", the A-share title "2022年年度报告") is
sure; a rule that infers it from prose elsewhere ("under the symbol", a meeting's title year plus one)
is not, and its row is drafted with a lower confidence so a person checks it.
"""

from __future__ import annotations

from typing import NamedTuple


class Finding(NamedTuple):
    value: str | int
    rule: str  # names the rule, e.g. "cover:trading-symbol"; written to the row's `source` column
    sure: bool


def first(*findings: Finding | None) -> Finding | None:
    """The first rule that found something, in the order given (most reliable first)."""
    return next((f for f in findings if f is not None), None)
