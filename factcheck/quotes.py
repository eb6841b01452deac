"""Find a quote in a page's text the way a reader would: layout and width differences aside.

An LM's "verbatim" quote and the page's text layer rarely agree byte for byte: line breaks fall
elsewhere, table cells come back joined by " | " (retrievers.documents.pdf.render_table), full-width
punctuation is half-width in one and not the other, leader dots fill a statement's label column,
and a text layer may split a word ("Firm's" -> "Firm s"). So both sides are folded first (NFKC,
case, every space, line break, cell bar and leader dot removed, curly quotes and dashes made plain)
and compared exactly; only then fuzzily, by rapidfuzz's partial ratio (the best-aligned window of the
page). A match keeps its place in the ORIGINAL text, so callers can read the page's own words there
(the value check reads the page, not the LM's copy of it) and draw boxes around them.
"""

from __future__ import annotations

import unicodedata
from array import array
from dataclasses import dataclass
from functools import lru_cache

from rapidfuzz import fuzz

# Partial-ratio score (0-100) from which a folded quote counts as found. Measured with
# bench/fact_check.py (2026-12-03): the 933 true quotes of the default synthetic corpus score 100 (exact
# once folded); its 311 paraphrased quotes score <= 53.3 anywhere in their document; the 49 FinanceBench
# evidence texts (other tool's reading order, up to 6,000 characters) score >= 97.7 on their own page
# and <= 45.5 on the page farthest from it. 90 sits in the gap with room on both sides.
FUZZY_THRESHOLD = 90.0
# Shorter folded quotes must match exactly: one changed character in "13.96%" is a different number
# at 83, and a short label ("净利润") is found nearly everywhere at any threshold.
MIN_FUZZY_CHARS = 12

_DROP = set(" \t\r\n\f\v\u00a0\u2002\u2003\u2009\u200b\u3000|\u00ad\x02\ufffe\ufeff")
_PLAIN = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-", "−": "-", "…": "."})


@dataclass(frozen=True)
class Match:
    """Where a quote sits in a text: [start, end) in the original text, and how well it matched."""

    start: int
    end: int
    score: float  # 100 when the folded quote occurs exactly
    text: str  # the original text of the span: the page's own words


@lru_cache(maxsize=1024)
def fold_with_offsets(text: str) -> tuple[str, array]:
    """The folded text and, for each of its characters, the index of the original character.

    Cached: a fact searched over a whole document folds every page, and the next fact of the same
    document folds the same pages again (1,024 pages of offsets as int32 arrays: ~40 MB at most).
    """
    out: list[str] = []
    where = array("i")
    for i, ch in enumerate(text):
        if ch in _DROP or ch.isspace():
            continue
        for c in unicodedata.normalize("NFKC", ch).translate(_PLAIN).casefold():
            if c in _DROP or c.isspace():
                continue
            out.append(c)
            where.append(i)
    folded = "".join(out)
    # Leader dots ("Cash and cash equivalents........ $ 876,560") are layout: drop runs of 3+.
    if "..." in folded:
        keep = _leader_mask(folded)
        folded = "".join(c for c, k in zip(folded, keep, strict=True) if k)
        where = array("i", (w for w, k in zip(where, keep, strict=True) if k))
    return folded, where


def _leader_mask(folded: str) -> list[bool]:
    keep = [True] * len(folded)
    i = 0
    while i < len(folded):
        if folded[i] == ".":
            j = i
            while j < len(folded) and folded[j] == ".":
                j += 1
            if j - i >= 3:
                keep[i:j] = [False] * (j - i)
            i = j
        else:
            i += 1
    return keep


def fold(text: str) -> str:
    return fold_with_offsets(text)[0]


def locate(quote: str, text: str, threshold: float = FUZZY_THRESHOLD) -> Match | None:
    """The span of `text` that states `quote`, or None: exact after folding, else fuzzy above threshold."""
    needle = fold(quote)
    if not needle:
        return None
    hay, where = fold_with_offsets(text)
    if not hay:
        return None
    at = hay.find(needle)
    if at >= 0:
        return _span(text, where, at, at + len(needle), 100.0)
    if len(needle) < MIN_FUZZY_CHARS:
        return None
    found = fuzz.partial_ratio_alignment(needle, hay, score_cutoff=threshold)
    if found is None or found.dest_end <= found.dest_start:
        return None
    return _span(text, where, found.dest_start, found.dest_end, round(found.score, 1))


def score(quote: str, text: str) -> float:
    """The best partial-ratio score of the folded quote anywhere in text (100 = exact); for measuring."""
    needle, hay = fold(quote), fold(text)
    if not needle or not hay:
        return 0.0
    if needle in hay:
        return 100.0
    return round(fuzz.partial_ratio(needle, hay), 1)


def _span(text: str, where: array, start: int, end: int, score: float) -> Match:
    first, last = where[start], where[end - 1] + 1
    return Match(first, last, score, text[first:last])
