"""Is a newly planned field the same as one the fact store holds? Decided by code, logged when merged.

A real planner rewords descriptions from question to question ("资本充足率" / "资本充足率（%）" /
"期末资本充足率" / "capital adequacy ratio at year end"). Fields already agree on name, type and
unit before this is asked; it decides whether the descriptions mean the same value.

Why not MiniLM similarity alone (measured 2026-12-03 on pairs of synthetic field descriptions, packaged
all-MiniLM-L6-v2): it is blind on Chinese, where most characters are out of its vocabulary
("股权登记日" vs "除权除息日": cosine 1.000; "股东大会召开次数" vs "临时股东大会次数": 0.995), and on
English it ranks a sibling above a rewording ("total assets" vs "total current assets" 0.873, vs
"total assets at year end" 0.782). So the rule comes first: descriptions match when their cores
agree once units, parentheses, punctuation and period words ("期末", "at year end") are dropped. MiniLM
then only widens English matches, at a cosine (0.92) above every sibling pair measured (max 0.873).
"""

from __future__ import annotations

import logging
import re

from signatures.vocabulary import fold

logger = logging.getLogger(__name__)

EMBEDDING_THRESHOLD = 0.92  # above the highest sibling pair measured (0.873), see the module docstring
# Words that place a value in time without changing which value it is: "period words".
PERIOD_WORDS = re.compile(
    r"(报告期末|报告期内|期末|年末|年度|本年度|本期|当年|截至年末|"
    r"\b(at|as of) (the )?(fiscal )?year[- ]end\b|\bfor the (fiscal )?year\b|\bat year end\b|\bfiscal year\b|\bannual\b)",
    re.I,
)
BRACKETED = re.compile(r"[（(\[【][^）)\]】]*[）)\]】]")
NOISE = re.compile(r"[\s\W_]+", re.U)
ASCII_WORDS = re.compile(r"^[\x00-\x7f]+$")


def core(description: str) -> str:
    """What a description names once wording that does not change the value is removed."""
    text = fold(description).lower()
    text = BRACKETED.sub(" ", text)
    text = PERIOD_WORDS.sub(" ", text)
    text = re.sub(r"\b(the|of|in|reported|disclosed|value|amount)\b", " ", text)
    text = re.sub(r"(的|是多少|为多少|金额|数值)", "", text)
    return NOISE.sub("", text)


class FieldMatcher:
    """same_meaning(a, b) -> (bool, how): the rule on cores, then MiniLM for English descriptions."""

    def __init__(
        self, embedder=None, threshold: float = EMBEDDING_THRESHOLD, embedder_name: str | None = None
    ):
        """embedder: anything with encode(list[str]) -> vectors; None: the embedder table's `embedder_name`
        (default MiniLM, the one the threshold was measured with), loaded on first use."""
        self._embedder, self.threshold, self.embedder_name = embedder, threshold, embedder_name

    def __deepcopy__(self, memo):
        return self  # holds a model: shared by every copy of a program

    def same_meaning(self, a: str, b: str) -> tuple[bool, str]:
        if a == b:
            return True, "same description"
        if core(a) and core(a) == core(b):
            return True, f"same core {core(a)!r}"
        if ASCII_WORDS.match(a) and ASCII_WORDS.match(b):
            score = self.similarity(a, b)
            if score >= self.threshold:
                return True, f"MiniLM cosine {score:.3f} >= {self.threshold}"
            return False, f"MiniLM cosine {score:.3f} < {self.threshold}"
        return False, "different cores"

    def similarity(self, a: str, b: str) -> float:
        return _cosine(self._model(), a, b)

    def _model(self):
        if self._embedder is None:
            from retrievers.embedding.embedders import (  # lazy: only a fuzzy lookup loads it
                MINILM,
                get_embedder,
            )

            self._embedder = get_embedder(self.embedder_name or MINILM)
        return self._embedder


def _cosine(model, a: str, b: str) -> float:
    import numpy as np

    vectors = np.asarray(model.encode([a, b]), dtype="float32")
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12
    return float(vectors[0] @ vectors[1])
