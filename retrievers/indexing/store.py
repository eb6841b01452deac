"""IndexStore: the catalog plus every per-document index of an index folder, loaded lazily.

Per-document indexes are kept in a small LRU so a run over hundreds of documents holds only the
recent ones in memory. The store is shared, never copied: DSPy optimizers deep-copy programs per
candidate, and `copy.deepcopy(store) is store`.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from retrievers.catalog import Catalog
from retrievers.doc_ids import folder_name, legacy_folder_name
from retrievers.documents.ocr_lines import OcrLine, load_document_lines
from retrievers.documents.page_text import page_texts_with_own
from retrievers.indexing.document_index import FORMAT_VERSION, DocumentIndex, IndexVersionError, fuse
from retrievers.indexing.query_text import strip_instructions
from retrievers.indexing.row_labels import label_ranking
from signatures.types import Passage

log = logging.getLogger(__name__)

MANIFEST_FILE = "manifest.json"
DOCS_DIR = "docs"


class DocumentNotIndexed(LookupError):
    """The document is in the catalog but has no index (its build failed or it was never built)."""


def doc_folder(index_dir: str | Path, doc_id: str) -> Path:
    """docs/<name> of the id (retrievers.doc_ids: one folder per id); ValueError for an unusable id."""
    return Path(index_dir) / DOCS_DIR / folder_name(doc_id)


def read_meta(folder: Path) -> dict | None:
    """A document folder's meta.json; None when absent or unreadable (a damaged folder is rebuilt)."""
    try:
        meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):  # absent, truncated, not UTF-8
        return None
    return meta if isinstance(meta, dict) else None


def legacy_doc_folder(index_dir: str | Path, doc_id: str) -> Path | None:
    """The id's folder in an index built before ids mapped to folders injectively, if it holds this id."""
    old = Path(index_dir) / DOCS_DIR / legacy_folder_name(doc_id)
    if old == doc_folder(index_dir, doc_id):
        return None
    meta = read_meta(old)
    return old if meta is not None and meta.get("doc_id") == doc_id else None


def read_manifest(index_dir: str | Path) -> dict:
    """The last build's record; {} when there is none or it is unreadable (it is informational only:
    each document's own meta.json says whether and how it is indexed)."""
    path = Path(index_dir) / MANIFEST_FILE
    if not path.is_file():
        return {}
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.warning(
            "%s is unreadable (%s): build failures are not known; collate build rewrites it",
            path,
            exc,
        )
        return {}
    return manifest if isinstance(manifest, dict) else {}


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
            raise FileNotFoundError(f"no index folder at {index_dir}: build one with collate build")
        manifest = read_manifest(index_dir)
        version = manifest.get("format_version", FORMAT_VERSION)
        if version != FORMAT_VERSION:
            raise IndexVersionError(
                f"index {index_dir} has format version {version}, this code reads version {FORMAT_VERSION}: "
                "rebuild it with collate build (unchanged files are re-indexed, not re-downloaded)"
            )
        return cls(index_dir, Catalog.open(index_dir), manifest, cache_size)

    def __deepcopy__(self, memo):
        return self  # big, read-only, shared by every program copy

    def failures(self) -> dict[str, dict]:
        """doc_id -> {"kind", "message", "fix"} for documents whose build failed."""
        return self.manifest.get("failures", {})

    # ---- loading --------------------------------------------------------------------------
    def _folder(self, doc_id: str) -> Path:
        folder = doc_folder(self.index_dir, doc_id)
        if not (folder / "meta.json").is_file():
            return legacy_doc_folder(self.index_dir, doc_id) or folder
        return folder

    def _is_indexed(self, doc_id: str) -> bool:
        # a build swaps a document's folder in complete (retrievers.building.swap): meta.json marks one
        try:
            return (self._folder(doc_id) / "meta.json").is_file()
        except ValueError:  # an id no folder can hold is indexed nowhere
            return False

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
            folder = self._folder(doc_id)
            try:
                loaded = DocumentIndex.load(folder)
            except IndexVersionError:
                raise
            except Exception as exc:  # damaged on disk (truncated file, removed by hand): this document only
                raise DocumentNotIndexed(
                    f"document {doc_id!r} has a damaged index in {folder} ({type(exc).__name__}: {exc}): "
                    "rebuild it with collate build (unchanged documents are not redone)"
                ) from None
        with self._lock:
            self._cache[doc_id] = loaded
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return loaded

    def pdf_path(self, doc_id: str) -> Path | None:
        """The PDF the document was indexed from (recorded by the build), if it is still there."""
        recorded = (self.manifest.get("documents", {}).get(doc_id) or {}).get("pdf")
        return Path(recorded) if recorded and Path(recorded).is_file() else None

    def ocr_lines(self, doc_id: str, page: int) -> list[OcrLine]:
        """The lines OCR read on a page without a text layer (retrievers.documents.ocr), with their boxes; [] for any
        other page. The audit report boxes quotes on such pages with them."""
        try:
            return load_document_lines(self._folder(doc_id)).get(page, [])
        except ValueError:  # an id no folder can hold
            return []

    def page_texts(self, doc_id: str) -> dict[int, str]:
        """{page: text} as the index read it: what a fact's quote is checked against (factcheck.check), with
        each page's own text from the PDF when it is still there (.own: the page a quote is printed on) and
        the document's fiscal year (.period: the statement column a value should stand in)."""
        try:
            period: int | None = self.catalog.get(doc_id).year
        except KeyError:
            period = None
        try:  # a scanned page's own text is what OCR read there
            ocr = load_document_lines(self._folder(doc_id))
        except ValueError:
            ocr = {}
        return page_texts_with_own(self.index(doc_id).chunks, self.pdf_path(doc_id), period, ocr)

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
        The question is searched without its instructions to the answerer (query_text.py).
        """
        query = strip_instructions(query)
        # a document whose last build failed but kept its previous index is searched; one with none is skipped
        failed = self.failures()
        ids = (
            self.indexed_ids()
            if doc_ids is None
            else [d for d in doc_ids if d not in failed or self._is_indexed(d)]
        )
        vectors: dict[tuple, np.ndarray] = {}
        owners: list[tuple[DocumentIndex, int]] = []
        dense, lexical, embedded = [], [], []
        labels: dict[int, int] = {}  # pooled chunk -> extra label words (row_labels.py), dense documents only
        for doc_id in ids:
            try:
                idx = self.index(doc_id)
            except DocumentNotIndexed as exc:
                log.warning("%s", exc)
                continue
            if idx.embedder is None:
                d = np.full(len(idx.chunks), -1.0, dtype=np.float32)  # no dense side: no dense vote
            else:
                # one query vector per way of reading it (an index built before dense_text.py reads it whole)
                name = (idx.embedder.name, idx.meta.get("dense_text"))
                if name not in vectors:
                    vectors[name] = idx.query_vector(query)
                d = idx.dense_scores(vectors[name])
            lx = idx.lexical_scores(query)
            top = lx.max() if len(lx) else 0.0
            if idx.embedder is not None:  # as in the per-document search, where only fusion adds the vote
                labels.update((len(owners) + i, extra) for i, extra in idx.row_labels.matches(query).items())
            owners += [(idx, i) for i in range(len(idx.chunks))]
            dense.append(d)
            lexical.append(lx / top if top > 0 else lx)
            mask = np.zeros(len(idx.chunks), dtype=bool)
            mask[idx.embedded] = True
            embedded.append(mask)
        if not owners:
            return []
        # chunks without a vector (BM25-only documents, chunks dense_text.py leaves out) have no dense rank
        in_dense = np.flatnonzero(np.concatenate(embedded))
        pooled = np.concatenate(lexical)
        fused = fuse(query, np.concatenate(dense), pooled, in_dense, label_ranking(labels, pooled))
        order = np.argsort(-fused, kind="stable")[:k]
        return [owners[i][0].passage(owners[i][1], float(fused[i])) for i in order]
