"""BM25 over one document's chunks (bm25s), on the tokens of retrievers.documents.tokens (Chinese
characters and bigrams, English stems; jieba as the alternative)."""

from __future__ import annotations

import functools
import logging
from pathlib import Path

import numpy as np

from retrievers.documents.tokens import JIEBA, LEXICAL_VERSION, NGRAM, tokenize

__all__ = ["JIEBA", "LEXICAL_VERSION", "NGRAM", "LexicalIndex", "tokenize"]

log = logging.getLogger(__name__)


@functools.lru_cache(maxsize=1)
def _bm25s():
    import bm25s

    # bm25s sets its logger to DEBUG on import, flooding a build with "Building index from tokens"
    logging.getLogger("bm25s").setLevel(logging.WARNING)
    return bm25s


class LexicalIndex:
    """BM25 scores for one document's chunks."""

    def __init__(self, retriever, method: str):
        self.retriever, self.method = retriever, method

    @classmethod
    def build(cls, texts: list[str], method: str = NGRAM) -> LexicalIndex:
        retriever = _bm25s().BM25()
        retriever.index([tokenize(t, method) or ["<empty>"] for t in texts], show_progress=False)
        return cls(retriever, method)

    def scores(self, query: str) -> np.ndarray:
        vocab = self.retriever.vocab_dict
        ids = [vocab[t] for t in tokenize(query, self.method) if t in vocab]
        n = self.retriever.scores["num_docs"]
        if not ids:
            return np.zeros(n, dtype=np.float32)
        return np.asarray(self.retriever.get_scores_from_ids(ids), dtype=np.float32)

    def save(self, folder: Path) -> None:
        self.retriever.save(str(folder))

    @classmethod
    def load(cls, folder: Path, method: str) -> LexicalIndex:
        return cls(_bm25s().BM25.load(str(folder)), method)
