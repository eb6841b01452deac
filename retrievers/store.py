"""IndexStore: the catalog plus every per-document index of an index folder, loaded lazily.

Per-document indexes are kept in a small LRU so a run over hundreds of documents holds only the
recent ones in memory. The store is shared, never copied: DSPy optimizers deep-copy programs per
candidate, and `copy.deepcopy(store) is store`.
"""

from __future__ import annotations

import json
import logging
import re
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from retrievers.catalog import Catalog
from retrievers.index import FORMAT_VERSION, DocumentIndex, IndexVersionError, fuse
from signatures.types import Passage

log = logging.getLogger(__name__)

MANIFEST_FILE = "manifest.json"
DOCS_DIR = "docs"


class DocumentNotIndexed(LookupError):
    """The document is in the catalog but has no index (its build failed or it was never built)."""


def doc_folder(index_dir: str | Path, doc_id: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", doc_id)
    return Path(index_dir) / DOCS_DIR / safe


def read_manifest(index_dir: str | Path) -> dict:
    path = Path(index_dir) / MANIFEST_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


class IndexStore:
    def __init__(self, index_dir: Path, catalog: Catalog, manifest: dict, cache_size: int = 64):
        self.index_dir, self.catalog, self.manifest = index_dir, catalog, manifest
        self.cache_size = cache_size
        self._cache: OrderedDict[str, DocumentIndex] = OrderedDict()
        self._lock = threading.Lock()
        # Loads are serialized: np.load parses .npy headers with ast.literal_eval, which is not thread-safe
        # on CPython 3.11 ("AST constructor recursion depth mismatch" under concurrent extraction threads).
        self._load_lock = threading.Lock()

    @classmethod
    def open(cls, index_dir: str | Path, cache_size: int = 64) -> IndexStore:
        index_dir = Path(index_dir)
        if not index_dir.is_dir():
            raise FileNotFoundError(
                f"no index folder at {index_dir}: build one with python -m retrievers.build"
            )
        manifest = read_manifest(index_dir)
        version = manifest.get("format_version", FORMAT_VERSION)
        if version != FORMAT_VERSION:
            raise IndexVersionError(
                f"index {index_dir} has format version {version}, this code reads version {FORMAT_VERSION}: "
                "rebuild it with python -m retrievers.build (unchanged files are re-indexed, not re-downloaded)"
            )
        return cls(index_dir, Catalog.open(index_dir), manifest, cache_size)

    def __deepcopy__(self, memo):
        return self  # big, read-only, shared by every program copy

    def failures(self) -> dict[str, dict]:
        """doc_id -> {"kind", "message", "fix"} for documents whose build failed."""
        return self.manifest.get("failures", {})

    # ---- loading --------------------------------------------------------------------------
    def _is_indexed(self, doc_id: str) -> bool:
        # DocumentIndex.save writes meta.json last: its presence marks a complete index folder
        return (doc_folder(self.index_dir, doc_id) / "meta.json").is_file()

    def index(self, doc_id: str) -> DocumentIndex:
        with self._lock:
            if doc_id in self._cache:
                self._cache.move_to_end(doc_id)
                return self._cache[doc_id]
        if not self._is_indexed(doc_id):
            self.catalog.get(doc_id)  # KeyError with a clear message if the id is unknown
            failure = self.failures().get(doc_id)
            why = f"{failure['kind']}: {failure['message']}; {failure['fix']}" if failure else "not built yet"
            raise DocumentNotIndexed(f"document {doc_id!r} has no index ({why})")
        with self._load_lock:
            with self._lock:
                if doc_id in self._cache:  # another thread loaded it while this one waited
                    return self._cache[doc_id]
            # embedders are stateless wrappers (the model is loaded once per process), nothing to share
            loaded = DocumentIndex.load(doc_folder(self.index_dir, doc_id))
        with self._lock:
            self._cache[doc_id] = loaded
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return loaded

    # ---- search ---------------------------------------------------------------------------
    def search(
        self, doc_id: str, query: str, k: int = 5, mode: str = "hybrid", terms: list[str] | None = None
    ) -> list[Passage]:
        """Hybrid dense + BM25 search inside one document, best first; `terms`: see DocumentIndex.ranked."""
        return self.index(doc_id).search(query, k=k, mode=mode, terms=terms)

    def indexed_ids(self) -> list[str]:
        return [d.id for d in self.catalog.documents() if self._is_indexed(d.id)]

    def search_pooled(self, query: str, k: int, doc_ids: list[str] | None = None) -> list[Passage]:
        """One ranking over the chunks of many documents (the flat-RAG baseline).

        Dense cosines are comparable across documents; BM25 scores are per-document, so the
        lexical side is ranked by score normalized to each document's best hit before fusion.
        """
        ids = self.indexed_ids() if doc_ids is None else [d for d in doc_ids if d not in self.failures()]
        vectors: dict[str, np.ndarray] = {}
        owners, dense, lexical, embedded = [], [], [], []
        for doc_id in ids:
            try:
                idx = self.index(doc_id)
            except DocumentNotIndexed as exc:
                log.warning("%s", exc)
                continue
            if idx.embedder is None:
                d = idx.dense_scores(None)
            else:
                name = idx.embedder.name
                if name not in vectors:
                    vectors[name] = idx.embedder.encode([query])[0]
                d = idx.dense_scores(vectors[name])
            lx = idx.lexical.scores(query)
            top = lx.max() if len(lx) else 0.0
            owners += [(idx, i) for i in range(len(idx.chunks))]
            dense.append(d)
            lexical.append(lx / top if top > 0 else lx)
            embedded.append(np.full(len(idx.chunks), idx.has_dense))
        if not owners:
            return []
        # chunks of BM25-only documents have no dense rank
        in_dense = np.flatnonzero(np.concatenate(embedded))
        fused = fuse(query, np.concatenate(dense), np.concatenate(lexical), embedded=in_dense)
        order = np.argsort(-fused, kind="stable")[:k]
        return [owners[i][0].passage(owners[i][1], float(fused[i])) for i in order]
