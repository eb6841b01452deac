"""Row labels: the chunks printing a line whose label is the query's words and an amount beside it.

A field's description ("total liabilities", "cash and cash equivalents") is the label of the statement row
that answers it. BM25 and MiniLM rank a note quoting the words in a sentence as high as the row itself; a
line that *starts* with those words and prints an amount after them is that row. A line's label is its
words before its first amount ("Total liabilities $ 333 $ 51" -> "Total liabilities"); it matches a query
when every content word of the query (tokens.py stems, stop words out) is in it, with at most MAX_EXTRA
words more ("Total net sales" matches "total sales"). A long question matches no label, so the ranking
is empty for it and fusion is unchanged.

Computed at query time from the chunks' texts (no index format change): each chunk's labels are read
once per loaded index (RowLabels), then a query looks its rarest word up.
"""

from __future__ import annotations

import re
from collections import defaultdict

import numpy as np

from retrievers.documents.statements import amount_line, is_year
from retrievers.documents.tokens import tokenize

# Label words beyond the query's a matching label may have. A two-word description with two more words is
# another row ("Total liabilities and stockholders' equity", "Cash and cash equivalents, end of period": the
# balance sheet's own row matches with none). Measured 2026-12-06 (bench/line_item_recall.py, hybrid @5 /
# @1, weight 1): financebench-more 103/104 / 84 at 3, 103 / 87 at 2, 104 / 90 at 1, 104 / 92 at 0; dev
# 138/143 / 121-122 at 1, 2 and 3, 136 / 123 at 0 (a filer's label adds a word: Verizon, AMD).
MAX_EXTRA = 1
# where a line's amounts begin: a number, "$ 5", "(1,234)", a dash standing for zero
_AMOUNT_START = re.compile(r"^(?:[$€£¥]|\(?[-−]?[$€£¥]?\d|[—–-]+$)")
_NUMBER = re.compile(r"\d")
_WORD = re.compile(r"[A-Za-z\u3400-\u9fff]{2}")
# words a row may print after its first amount ("$ 5 million", "3,112 (a)"); more is prose
MAX_ROW_WORDS = 2
_HAN_BIGRAM = re.compile(r"^[\u3400-\u9fff\uf900-\ufaff]{2}$")


def line_label(line: str) -> str | None:
    """The words before a line's first amount, when the line prints one after them; else None.

    An amount is what statements.amount_line counts, or any number not a year after the label: a filer in
    millions prints "TOTAL LIABILITIES $ — $ 369 $ 15", which amount_line (built to pick the lines MiniLM
    reads) does not count."""
    words = line.replace("|", " ").split()
    for n, word in enumerate(words):
        if _AMOUNT_START.match(word):
            if not n:
                return None
            rest = words[n:]
            if sum(1 for w in rest if _WORD.search(w)) > MAX_ROW_WORDS:
                return None  # prose quoting a figure: "Revenue was $ 5.2 billion, up 10% from 2021"
            if amount_line(line) or any(_NUMBER.search(w) and not is_year(w) for w in rest):
                return " ".join(words[:n])
            return None
    return None


class RowLabels:
    """Each chunk's row labels as token sets, with an inverted map from a label token to its (chunk, label)."""

    def __init__(self, texts: list[str]):
        self.labels: list[tuple[int, frozenset[str]]] = []  # (chunk, its label's tokens)
        self.by_token: dict[str, list[int]] = defaultdict(list)  # token -> indices into self.labels
        seen: set[tuple[int, frozenset[str]]] = set()
        for chunk, text in enumerate(texts):
            for line in text.split("\n"):
                label = line_label(line)
                if not label:
                    continue
                tokens = frozenset(t for t in tokenize(label) if not t[0].isdigit())
                if not tokens or (chunk, tokens) in seen:
                    continue
                seen.add((chunk, tokens))
                n = len(self.labels)
                self.labels.append((chunk, tokens))
                for token in tokens:
                    self.by_token[token].append(n)

    def matches(self, query: str) -> dict[int, int]:
        """chunk -> fewest extra label words over its lines whose label holds every query word."""
        words = frozenset(tokenize(query))
        if not words or any(w[0].isdigit() for w in words):
            return {}
        rarest = min(words, key=lambda w: len(self.by_token.get(w, ())))
        best: dict[int, int] = {}
        for n in self.by_token.get(rarest, ()):
            chunk, tokens = self.labels[n]
            if not words <= tokens:
                continue
            # a Chinese label's bigrams only repeat its characters: count its characters, not both
            extra = sum(1 for t in tokens - words if not _HAN_BIGRAM.match(t))
            if extra <= MAX_EXTRA and extra < best.get(chunk, MAX_EXTRA + 1):
                best[chunk] = extra
        return best

    def matches_any(self, queries: list[str]) -> dict[int, int]:
        """`matches` of each query alone, merged (a chunk keeps its fewest extra words over them all).

        Search terms are several labels ("Purchases of property and equipment", "Capital expenditures",
        "Consolidated Statements of Cash Flows"): joined, no row's label holds all their words."""
        best: dict[int, int] = {}
        for query in queries:
            for chunk, extra in self.matches(query).items():
                best[chunk] = min(extra, best.get(chunk, extra))
        return best

    def ranking(self, queries: str | list[str], lexical: np.ndarray) -> np.ndarray:
        """The chunks matching the query (or any of several), best first: fewest extra label words, then
        BM25 (`lexical`, per chunk)."""
        return label_ranking(self.matches_any([queries] if isinstance(queries, str) else queries), lexical)


def label_ranking(best: dict[int, int], lexical: np.ndarray) -> np.ndarray:
    """Chunks (keys of `best`, chunk -> extra label words) ordered by extra words, then by BM25 score."""
    if not best:
        return np.zeros(0, dtype=np.int64)
    chunks = np.fromiter(sorted(best), dtype=np.int64, count=len(best))
    extra = np.asarray([best[int(c)] for c in chunks])
    return chunks[np.lexsort((chunks, -lexical[chunks], extra))]
