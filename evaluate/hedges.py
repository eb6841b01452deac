"""Hedged answers: several alternatives offered for one value.

"共有1家或2家或3家", "1.7935或3.2个百分点", "约1.2或1.5", "1, 2 or 3 companies", "601398或601939": an answer
that offers the gold value among others has not given it. This module finds the groups of items (numbers,
dates or company mentions) joined by an "or" word; whether a group is a hedge (its alternatives differ)
and whether it touches a gold fact is decided by the matcher (evaluate/final_match.py), which knows
when two numbers are the same value ("-0.14或-14%" states one growth rate twice, not two).

A range ("1至3家", "从10%到15%") is not read as alternatives: "from 10% to 15%" states a change.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# Between two alternatives: an "or" word, maybe with "about" before the second ("1.2或约1.5").
OR_GAP = re.compile(
    r"^\s*[,，]?\s*(?:或者|或是|抑或|还是|或|\bor\b)\s*(?:约为|约|大约|大概|\babout\b|\baround\b|"
    r"\bapproximately\b|\broughly\b|~)?\s*$",
    re.I,
)
# Between the earlier alternatives of "1, 2 or 3": list punctuation only.
LIST_GAP = re.compile(r"^\s*[,，、]\s*$")


def alternatives(text: str, spans: Sequence[tuple[int, int]]) -> list[list[int]]:
    """Groups (indices into `spans`, sorted by start) of two or more items joined by "or" words: a
    chain of items whose every gap is an "or" or list punctuation, with at least one "or"."""
    groups: list[list[int]] = []
    chain: list[int] = []
    has_or = False

    def close() -> None:
        if len(chain) > 1 and has_or:
            groups.append(list(chain))

    for i, (start, _) in enumerate(spans):
        if chain:
            gap = text[spans[chain[-1]][1] : start]
            if OR_GAP.match(gap):
                chain.append(i)
                has_or = True
                continue
            if LIST_GAP.match(gap):
                chain.append(i)
                continue
            close()
        chain, has_or = [i], False
    close()
    return groups
