"""One document's retriever: FAISS inner product over unit embeddings + BM25, fused by reciprocal rank.

On disk, one folder per document:
    meta.json      {"format_version", "doc_id", "embedder" (null: no dense side), "tokenizer", "content_hash", ...}
    chunks.jsonl   one Chunk per line, in index order
    dense.faiss    faiss.IndexIDMap2(IndexFlatIP) over the embedded chunks' vectors, keyed by chunk number
                   (absent when "embedder" is null; which chunks: retrievers/dense_text.py; indexes built
                   before it hold a plain IndexFlatIP over every chunk, still read)
    bm25/          bm25s index of the tokenized chunks (text and statement names)
    bm25_headings/ bm25s index of each chunk's heading path (absent in indexes built before heading paths)
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path

import faiss
import numpy as np

from retrievers.documents.chunking import Chunk
from retrievers.embedding.dense_text import DENSE_TEXT_VERSION, dense_text, readings
from retrievers.embedding.embedders import Embedder, get_embedder
from retrievers.indexing.lexical import NGRAM, LexicalIndex
from retrievers.indexing.query_text import strip_instructions
from retrievers.indexing.row_labels import RowLabels
from signatures.errors import CollateError
from signatures.types import Passage

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
RRF_K = 60  # the usual constant: ranks matter, raw score scales of the two sides do not
MODES = ("hybrid", "dense", "bm25")
# Search terms are what a filing prints, more specific than a field's description: a chunk first by
# the terms and third by the description beats one first by the description and unmatched by the
# terms. A design choice, not a tuned figure (no question set with planner terms exists yet).
TERMS_WEIGHT = 1.5
# A chunk's heading path is a field of its own for BM25 (its score added at this weight to the text's), so
# the heading a chunk sits under ("Item 3. Legal Proceedings", "Our Customers") counts as a heading, however
# long the text under it. Measured 2026-12-03 with the same chunks (FinanceBench dev, 38 questions: hybrid
# recall@5 / @10 / MRR; synthetic corpus, 136 English / 369 Chinese field descriptions: shipped recall@5):
#
#     heading words                           dev                    synthetic en / zh
#     only as the chunk's first line          0.763 / 0.868 / 0.646  0.993 / 0.992
#     path appended to the chunk's BM25 text  0.789 / 0.895 / 0.646  0.985 / 0.951
#     own field, weight 0.1                   0.789 / 0.868 / 0.663  0.993 / 0.997
#     own field, weight 0.25                  0.763 / 0.895 / 0.665  0.993 / 0.997   <- this
#     own field, weight 0.5                   0.816 / 0.895 / 0.708  0.971 / 0.997
#     own field, weight 1.0                   0.789 / 0.895 / 0.683  -
#     own field without the section, 0.5      0.789 / 0.868 / 0.647  0.993 / 0.970
#
# What helps is the chunk's own heading counting twice (the ancestors alone add nothing). A question is long
# and names a section ("legal battles", "customers"); a field's description is two words, and at 0.5 a
# heading sharing one of them ("Market for Registrant's Common Equity" for "shareholders' equity") lifts its
# whole section over the balance sheet. 0.25 keeps the descriptions' recall; one question moves the dev
# figures by 0.026, so 0.25 vs 0.5 on dev is within noise. Appended to the text, a Chinese path's
# characters match every query. The path is not embedded: MiniLM over path + figure chunk ranked worse (dev
# dense recall@5 0.711 -> 0.658, MRR 0.520 -> 0.464).
HEADING_WEIGHT = 0.25


# MiniLM is English-centric: on Chinese queries its ranking is close to noise (dense-only recall@5 0.28
# on the synthetic corpus vs 0.95+ for BM25), so it gets a small say; on English queries a larger one.
# English 0.3 (was 1.0), measured 2026-12-03 with the chunks of issue 10 (heads carried, ~2x longer English
# chunks): synthetic en hybrid recall@5 0.941 / 0.978 / 0.993 / 1.000 at dense weight 1.0 / 0.5 / 0.3 / 0;
# real filings (15 FinanceBench dev questions, page level) 0.800 / 0.867 / 0.867 / 0.800.
DENSE_WEIGHT_EN, DENSE_WEIGHT_ZH = 0.3, 0.1
# The row-label ranking's weight (row_labels.py): the chunks printing a line labelled with the query's words
# and an amount, a third ranking beside MiniLM's and BM25's. A description's own row ("Total liabilities
# 6,385 5,393") otherwise ranks below notes quoting the words and cash-flow text. Measured 2026-12-06
# (bench/line_item_recall.py, hybrid @5 / @1; MAX_EXTRA 1): financebench-more, 14 filings no one tuned to,
# 99/104 / 63 -> 104/104 / 90 (weight 0.5: 104 / 86; 2: 104 / 92); dev 22 filings 135/143 / 82 -> 138 / 122
# (0.5: 138 / 120). Silent on questions: the 38 FinanceBench dev questions read 0.763 / 0.895 / MRR 0.662
# at every weight (no question's words are a row's label), the synthetic corpora's counts are unchanged.
# Weight 1, BM25's own, is a design choice: 0.5-2 differ by a few first places only.
LABEL_WEIGHT = 1.0
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")


class IndexVersionError(CollateError, RuntimeError):
    exit_code = 2  # rebuild the index
    pass


def dense_weight(query: str) -> float:
    """The dense side's weight in fusion: low when the query is mostly Chinese."""
    han, latin = len(_HAN.findall(query)), len(_LATIN.findall(query))
    return DENSE_WEIGHT_ZH if han > latin else DENSE_WEIGHT_EN


def rrf(rankings: list[np.ndarray], n: int, weights: list[float] | None = None) -> np.ndarray:
    """Reciprocal-rank fusion of several rankings (arrays of chunk ids, best first) into one score per chunk."""
    fused = np.zeros(n, dtype=np.float64)
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings), strict=True):
        fused[ranking] += weight / (RRF_K + 1 + np.arange(len(ranking)))
    return fused


def fuse(
    query: str,
    dense: np.ndarray,
    lexical: np.ndarray,
    embedded: np.ndarray | None = None,
    labels: np.ndarray | None = None,
) -> np.ndarray:
    """The hybrid score per chunk: weighted RRF of the dense ranking and the BM25 ranking.

    Only chunks sharing a term with the query are in BM25's ranking (a zero score is no evidence);
    only `embedded` chunks (indices; default all) are in the dense one, since a pooled ranking
    mixes in documents indexed without a dense side. One function for the per-document search,
    the pooled search and the bench, so the figures measure the ranking users get.
    """
    hits = np.flatnonzero(lexical > 0)
    pool = np.arange(len(dense)) if embedded is None else embedded
    rankings = [
        pool[np.argsort(-dense[pool], kind="stable")],
        hits[np.argsort(-lexical[hits], kind="stable")],
    ]
    weights = [dense_weight(query), 1.0]
    if labels is not None and len(labels):
        rankings.append(labels)
        weights.append(LABEL_WEIGHT)
    return rrf(rankings, len(dense), weights=weights)


def fuse_terms(description: np.ndarray, terms: np.ndarray) -> np.ndarray:
    """RRF of the description's ranking and the search terms' ranking (scores of any scale, per chunk).

    Chunks with no score from a side (BM25 zero: no shared term) are left out of that side's ranking.
    """
    rankings = []
    for scores in (description, terms):
        pool = np.flatnonzero(scores > 0) if scores.min() >= 0 else np.arange(len(scores))
        rankings.append(pool[np.argsort(-scores[pool], kind="stable")])
    return rrf(rankings, len(description), weights=[1.0, TERMS_WEIGHT])


def lexical_text(chunk: Chunk) -> str:
    """What BM25 reads of a chunk's body: its text and the usual names of its statement."""
    return f"{chunk.text}\n{chunk.terms}" if chunk.terms else chunk.text


def heading_text(chunk: Chunk) -> str:
    """What BM25 reads of a chunk's headings: its path ("PART I > Item 3. Legal Proceedings"), else its section."""
    return chunk.path or chunk.section


class DocumentIndex:
    def __init__(
        self,
        doc_id: str,
        chunks: list[Chunk],
        dense,
        lexical: LexicalIndex,
        embedder: Embedder | None,
        meta: dict,
        headings: LexicalIndex | None = None,
    ):
        self.doc_id, self.chunks, self.dense, self.lexical = doc_id, chunks, dense, lexical
        self.embedder, self.meta = embedder, meta
        self.headings = headings  # None: an index built before heading paths (no heading field)
        self._row_labels: RowLabels | None = None  # read from the chunks at the first search that needs them
        # the chunk numbers that have a vector: the dense ranking is over these only
        if dense is None:
            self.embedded = np.zeros(0, dtype=np.int64)
        elif hasattr(dense, "id_map"):
            self.embedded = np.sort(faiss.vector_to_array(dense.id_map).astype(np.int64))
        else:  # built before dense_text.py: every chunk, in order
            self.embedded = np.arange(dense.ntotal, dtype=np.int64)

    @classmethod
    def build(
        cls,
        doc_id: str,
        chunks: list[Chunk],
        embedder: Embedder | None,
        tokenizer: str = NGRAM,
        content_hash: str | None = None,
        dense_chunks: str = "figures",
    ) -> DocumentIndex:
        """embedder=None builds BM25 only (see retrievers.building.build: MiniLM adds nothing measurable on Chinese);
        otherwise the embedder reads the chunks `dense_chunks` picks, without their figures (dense_text.py)."""
        if not chunks:
            raise ValueError(f"document {doc_id!r} has no text chunks to index")
        dense = None
        meta = {
            "format_version": FORMAT_VERSION,
            "doc_id": doc_id,
            "embedder": embedder.name if embedder is not None else None,
            "tokenizer": tokenizer,
            "content_hash": content_hash,
            "chunks": len(chunks),
        }
        if embedder is not None:
            picked = readings([c.text for c in chunks], dense_chunks)
            dense = faiss.IndexIDMap2(faiss.IndexFlatIP(embedder.dim))
            if picked:
                vectors = embedder.encode([read for _, read in picked])
                dense.add_with_ids(vectors, np.asarray([i for i, _ in picked], dtype=np.int64))
            meta.update(dense_chunks=dense_chunks, dense_text=DENSE_TEXT_VERSION, embedded=len(picked))
        lexical = LexicalIndex.build([lexical_text(c) for c in chunks], tokenizer)
        headings = LexicalIndex.build([heading_text(c) for c in chunks], tokenizer)
        return cls(doc_id, chunks, dense, lexical, embedder, meta, headings)

    # ---- persistence ----------------------------------------------------------------------
    def save(self, folder: str | Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / "chunks.jsonl").open("w", encoding="utf-8") as fh:
            for c in self.chunks:
                fh.write(json.dumps(c.to_dict(), ensure_ascii=False) + "\n")
        if self.dense is not None:
            faiss.write_index(self.dense, str(folder / "dense.faiss"))
        self.lexical.save(folder / "bm25")
        if self.headings is not None:
            self.headings.save(folder / "bm25_headings")
        # meta last: its presence marks a complete index folder
        (folder / "meta.json").write_text(
            json.dumps(self.meta, ensure_ascii=False, indent=1), encoding="utf-8"
        )

    @staticmethod
    def read_meta(folder: str | Path) -> dict | None:
        path = Path(folder) / "meta.json"
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None

    @classmethod
    def load(cls, folder: str | Path) -> DocumentIndex:
        folder = Path(folder)
        meta = cls.read_meta(folder)
        if meta is None:
            raise FileNotFoundError(f"no document index in {folder}: run collate build")
        if meta.get("format_version") != FORMAT_VERSION:
            raise IndexVersionError(
                f"index in {folder} has format version {meta.get('format_version')}, this code reads version "
                f"{FORMAT_VERSION}: rebuild it with collate build"
            )
        lines = (folder / "chunks.jsonl").read_text(encoding="utf-8").splitlines()
        chunks = [Chunk(**json.loads(line)) for line in lines if line]
        dense = embedder = None
        if meta["embedder"] is not None:
            embedder = get_embedder(meta["embedder"])
            dense = faiss.read_index(str(folder / "dense.faiss"))
        lexical = LexicalIndex.load(folder / "bm25", meta["tokenizer"])
        headings_dir = folder / "bm25_headings"
        headings = LexicalIndex.load(headings_dir, meta["tokenizer"]) if headings_dir.is_dir() else None
        return cls(meta["doc_id"], chunks, dense, lexical, embedder, meta, headings)

    # ---- search ---------------------------------------------------------------------------
    @property
    def has_dense(self) -> bool:
        return self.dense is not None

    def query_vector(self, query: str) -> np.ndarray:
        """The query as this index's embedder reads it: its content without instructions to the answerer
        (query_text.py), and without figures, like the chunks (dense_text.py)."""
        if self.embedder is None:
            raise ValueError(f"document {self.doc_id!r} has no dense index (built BM25-only)")
        query = strip_instructions(query)
        text = dense_text(query) if self.meta.get("dense_text") else query
        return self.embedder.encode([text or query])[0]

    def dense_scores(self, query_vector: np.ndarray) -> np.ndarray:
        """Cosine per chunk; -1 for chunks without a vector (all of them when there is no dense side)."""
        out = np.full(len(self.chunks), -1.0, dtype=np.float32)
        if self.dense is None or self.dense.ntotal == 0:
            return out
        sims, ids = self.dense.search(query_vector.reshape(1, -1).astype(np.float32), self.dense.ntotal)
        keep = ids[0] >= 0
        out[ids[0][keep]] = sims[0][keep]
        return out

    def ranked(
        self,
        query: str,
        mode: str = "hybrid",
        query_vector: np.ndarray | None = None,
        terms: list[str] | None = None,
    ) -> np.ndarray:
        """A score per chunk (higher is better) for the chosen side(s).

        `terms` are words the filing would print for what is sought, beside the description: line
        items ("Purchases of property and equipment") and the statement ("cash flow statement").
        They are ranked as a second query on the same side(s) and fused with the description's
        ranking (weight TERMS_WEIGHT), so a chunk that prints them rises without the description's
        own matches being drowned (see `fuse_terms`).

        The query is searched without its instructions to the answerer ("Round to two decimals",
        "Assume you are an analyst": query_text.py); the terms are searched as given.
        """
        if mode not in MODES:
            raise ValueError(f"unknown search mode {mode!r}: use one of {MODES}")
        base = self._ranked(strip_instructions(query), mode, query_vector)
        terms = [t.strip() for t in terms or [] if t and t.strip()]
        if not terms:
            return base
        # BM25 and MiniLM read the terms as one query; row labels match each term alone (row_labels.py)
        return fuse_terms(base, self._ranked("\n".join(terms), mode, None, labels=terms))

    def lexical_scores(self, query: str) -> np.ndarray:
        """BM25 per chunk: its body's score plus HEADING_WEIGHT times its heading path's."""
        scores = self.lexical.scores(query)
        if self.headings is not None:
            scores = scores + HEADING_WEIGHT * self.headings.scores(query)
        return scores

    def _ranked(
        self, query: str, mode: str, query_vector: np.ndarray | None, labels: list[str] | None = None
    ) -> np.ndarray:
        if mode == "bm25" or (mode == "hybrid" and self.dense is None):
            return self.lexical_scores(query)
        if self.dense is None:
            raise ValueError(
                f"document {self.doc_id!r} has no dense index (built BM25-only): search it in hybrid or bm25 "
                "mode, or rebuild with --dense all"
            )
        if query_vector is None:
            query_vector = self.query_vector(query)
        dense = self.dense_scores(query_vector)
        if mode == "dense":
            return dense
        lexical = self.lexical_scores(query)
        return fuse(query, dense, lexical, self.embedded, self.row_labels.ranking(labels or query, lexical))

    @property
    def row_labels(self) -> RowLabels:
        """The chunks' row labels (row_labels.py), read once per loaded index."""
        if self._row_labels is None:
            self._row_labels = RowLabels([c.text for c in self.chunks])
        return self._row_labels

    def search(
        self,
        query: str,
        k: int = 5,
        mode: str = "hybrid",
        query_vector: np.ndarray | None = None,
        terms: list[str] | None = None,
    ) -> list[Passage]:
        """The k best passages for `query` (a field's description), helped by `terms` a filing would print."""
        scores = self.ranked(query, mode, query_vector, terms)
        order = np.argsort(-scores, kind="stable")[:k]
        return [self.passage(int(i), float(scores[i])) for i in order]

    def passage(self, i: int, score: float) -> Passage:
        c = self.chunks[i]
        return Passage(doc_id=self.doc_id, page=c.page, page_end=c.page_end, text=c.text, score=score)
