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
# Where a sentence ends: Chinese and English stops and line breaks ("0.6667" has no space after the dot).
SENTENCE_END = re.compile(r"[。！？!?\n]|\.(?=\s|$)")


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


def _next_stop(text: str, pos: int) -> re.Match | None:
    """The next sentence end from `pos`; the dot of "1. 601398" list numbering is none."""
    while (stop := SENTENCE_END.search(text, pos)) is not None:
        line_start = text.rfind("\n", 0, stop.start()) + 1
        if stop.group() != "." or not re.fullmatch(r"\s*\d{1,2}", text[line_start : stop.start()]):
            return stop
        pos = stop.end()
    return None


def sentence_spans(text: str, mentions: list[Mention]) -> list[tuple[int, int]]:
    """(start, end) of each sentence. A line ending in a colon runs on over the next lines that name a
    company: "Top 3 companies:\n[GEN]: 85.81%\n[ARAY]: 40.25%" is one sentence, as is
    "共有3家公司：\n1. 601398\n2. 002142"; a table of one company per line without one is many."""
    spans, start = [], 0
    while (stop := _next_stop(text, start)) is not None:
        end = stop.start()
        if stop.group() == "\n" and text[start:end].rstrip().endswith((":", "：")):
            while end < len(text):
                line_end = text.find("\n", end + 1)
                line_end = len(text) if line_end < 0 else line_end
                named = [m for m in mentions if end < m.start < line_end]
                if not named or re.search(r"[:：]", text[end + 1 : named[0].start]):
                    break  # a line naming no company, or a new heading ("Others: BBY")
                end = line_end
            spans.append((start, end))
            start = end + 1
            continue
        spans.append((start, end))
        start = stop.end()
    spans.append((start, len(text)))
    return [(s, e) for s, e in spans if s < e]


def by_sentence(text: str, mentions: list[Mention]) -> list[list[str]]:
    """The symbols each sentence names, in order of mention: "股票代码601398，…；股票代码002142，…。"
    names two companies in one sentence, a table names one per line."""
    groups = [[m.symbol for m in mentions if s <= m.start < e] for s, e in sentence_spans(text, mentions)]
    return [g for g in groups if g]


def owner_at(position: int, mentions: list[Mention], keep: set[str]) -> str | None:
    """The last kept symbol mentioned before a position: whose value a number is."""
    owner = None
    for m in mentions:
        if m.start >= position:
            break
        if m.symbol in keep:
            owner = m.symbol
    return owner
