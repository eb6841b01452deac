"""Company identifiers named in an answer: 6-digit A-share codes and US tickers, in order of mention.

Tickers are only recognised from a candidate list (the symbols of the question's documents) or in
the bracket form the MuDABench gold uses ([WMG]): a bare capitalised word is too often not a ticker.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

# Six digits not inside a longer number and not followed by a unit (123456元 is money, not a code).
A_SHARE_CODE = re.compile(r"(?<![\d.])\d{6}(?!\d|\.\d|\s*(?:元|万|亿|股|人|天|家|%|个|次|分))")
BRACKET_TICKER = re.compile(r"\[([A-Z][A-Z.]{0,5})\]")
# What may sit between two names of one enumeration: "A、B、C", "[A], [B] and [C]", "A, B 和 C".
ENUMERATION_GAP = re.compile(r"^(?:[\s、,，/\[\]()（）]|and|和|及|与|以及)*$")


@dataclass(frozen=True)
class Mention:
    symbol: str
    start: int
    end: int


def find_mentions(text: str, candidates: Iterable[str] | None = None) -> list[Mention]:
    """Every mention of a company identifier, sorted by position (repeats included)."""
    found: dict[tuple[int, int], Mention] = {}
    for m in A_SHARE_CODE.finditer(text):
        found[(m.start(), m.end())] = Mention(m.group(), m.start(), m.end())
    for m in BRACKET_TICKER.finditer(text):
        found[(m.start(1), m.end(1))] = Mention(m.group(1), m.start(1), m.end(1))
    for symbol in {str(c) for c in candidates or ()}:
        if not symbol or symbol.isdigit():
            continue
        for m in re.finditer(rf"(?<![A-Za-z0-9]){re.escape(symbol)}(?![A-Za-z0-9])", text):
            found[(m.start(), m.end())] = Mention(symbol, m.start(), m.end())
    return sorted(found.values(), key=lambda x: x.start)


def ordered_symbols(mentions: list[Mention]) -> list[str]:
    """Distinct symbols in order of first mention."""
    seen: dict[str, None] = {}
    for m in mentions:
        seen.setdefault(m.symbol, None)
    return list(seen)


def enumerations(text: str, mentions: list[Mention]) -> list[list[str]]:
    """Runs of mentions separated only by list punctuation: the lists the answer gives."""
    runs: list[list[str]] = []
    previous: Mention | None = None
    for m in mentions:
        if previous is not None and ENUMERATION_GAP.match(text[previous.end : m.start]):
            runs[-1].append(m.symbol)
        else:
            runs.append([m.symbol])
        previous = m
    return runs


def owner_at(position: int, mentions: list[Mention], keep: set[str]) -> str | None:
    """The last kept symbol mentioned before a position: whose value a number is."""
    owner = None
    for m in mentions:
        if m.start >= position:
            break
        if m.symbol in keep:
            owner = m.symbol
    return owner
