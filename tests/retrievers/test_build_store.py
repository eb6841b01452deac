"""Building an index folder: parallel, per-document failures, content-hash cache; the store on top of it."""

from __future__ import annotations

import copy
import json

import pytest

from retrievers.building.build import build_index
from retrievers.catalog import Catalog
from retrievers.embedding.dense_text import chosen
from retrievers.indexing.store import DocumentNotIndexed, IndexStore, doc_folder


def _build(c, workers=2):
    return build_index(
        Catalog.load(c["catalog"]),
        c["pdf_dir"],
        c["index"],
        workers=workers,
        embedder="hashing-256",
        progress=False,
    )


def test_broken_documents_are_reported_and_the_rest_is_built(tiny_collection):
    report = _build(tiny_collection)  # a real process pool
    status = {r.doc_id: (r.status, r.kind) for r in report.results}
    assert status == {
        "zh1": ("built", ""),
        "en1": ("built", ""),
        "enc": ("failed", "encrypted"),
        "bad": ("failed", "corrupt"),
        "blank": ("failed", "empty"),
        "scan": ("failed", "scanned"),
        "missing": ("failed", "missing"),
    }
    assert all(r.fix for r in report.failures)
    manifest = json.loads((tiny_collection["index"] / "manifest.json").read_text())
    assert manifest["counts"] == {"built": 2, "cached": 0, "failed": 5}
    assert manifest["failures"]["enc"]["kind"] == "encrypted" and manifest["pages"] == 3
    stored = Catalog.open(tiny_collection["index"]).get("zh1")
    assert stored.pages == 2 and len(stored.content_hash) == 64


def test_unchanged_documents_are_never_rebuilt(tiny_collection, writers):
    _build(tiny_collection, workers=1)
    folder = doc_folder(tiny_collection["index"], "zh1")
    stamp = (folder / "meta.json").stat().st_mtime_ns
    again = _build(tiny_collection, workers=1)
    assert {r.doc_id for r in again.results if r.status == "cached"} == {"zh1", "en1"}
    assert (folder / "meta.json").stat().st_mtime_ns == stamp
    writers.column(tiny_collection["pdf_dir"] / "zh1.pdf")  # zh1's content changes
    third = _build(tiny_collection, workers=1)
    assert {r.doc_id: r.status for r in third.results if r.status != "failed"} == {
        "zh1": "built",
        "en1": "cached",
    }
    assert (
        "Total assets" in IndexStore.open(tiny_collection["index"]).search("zh1", "total assets", k=1)[0].text
    )


def test_store_searches_lazily_reports_unindexed_documents_and_is_shared(tiny_collection):
    _build(tiny_collection, workers=1)
    store = IndexStore.open(tiny_collection["index"], cache_size=1)
    assert len(store.catalog) == 7 and store.indexed_ids() == ["zh1", "en1"]
    top = store.search("zh1", "资本充足率", k=3)
    assert "2022年 | 资本充足率 | 15.44%" in top[0].text and top[0].page == 1
    assert store.search("en1", "net income", k=1)[0].text.endswith("Net income $ 98,765")
    assert list(store._cache) == ["en1"]  # LRU of one: zh1 was evicted
    with pytest.raises(DocumentNotIndexed, match="encrypted"):
        store.search("enc", "anything")
    with pytest.raises(KeyError, match="not in the catalog"):
        store.search("nope", "anything")
    pooled = store.search_pooled("total assets", k=3)
    assert pooled[0].doc_id == "en1" and len(pooled) == 3
    assert {p.doc_id for p in store.search_pooled("资本充足率", k=2, doc_ids=["zh1", "enc"])} == {"zh1"}
    assert copy.deepcopy(store) is store
    assert copy.deepcopy({"s": store})["s"] is store


def test_dense_policy_embeds_english_documents_by_default(tiny_collection):
    c = tiny_collection
    build_index(
        Catalog.load(c["catalog"]),
        c["pdf_dir"],
        c["index"],
        workers=1,
        embedder="hashing-256",
        progress=False,
    )
    assert (doc_folder(c["index"], "en1") / "dense.faiss").is_file()
    assert not (doc_folder(c["index"], "zh1") / "dense.faiss").exists()
    store = IndexStore.open(c["index"])
    assert "15.44%" in store.search("zh1", "资本充足率", k=1)[0].text  # hybrid falls back to BM25
    with pytest.raises(ValueError, match="no dense index.*--dense all"):
        store.search("zh1", "资本充足率", mode="dense")
    assert store.search_pooled("资本充足率 total assets", k=2)  # mixed documents pool without error
    again = build_index(
        Catalog.load(c["catalog"]),
        c["pdf_dir"],
        c["index"],
        workers=1,
        embedder="hashing-256",
        dense="all",
        progress=False,
    )
    assert {r.doc_id: r.status for r in again.results if r.status != "failed"} == {
        "zh1": "built",
        "en1": "cached",
    }
    assert IndexStore.open(c["index"]).search("zh1", "资本充足率", k=1, mode="dense")[0].page == 1
    with pytest.raises(ValueError, match="use one of auto, all, none"):
        build_index(Catalog.load(c["catalog"]), c["pdf_dir"], c["index"], dense="some")


def test_store_survives_a_dspy_program_deepcopy_and_refuses_another_format(tiny_collection):
    import dspy

    from retrievers.indexing.document_index import IndexVersionError

    _build(tiny_collection, workers=1)
    store = IndexStore.open(tiny_collection["index"])

    class Holder(dspy.Module):
        def __init__(self):
            super().__init__()
            self.store = store
            self.step = dspy.Predict("question -> answer")

    copied = Holder().deepcopy()
    assert copied.store is store
    manifest_path = tiny_collection["index"] / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["format_version"] = 99
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(IndexVersionError, match="format version 99.*rebuild"):
        IndexStore.open(tiny_collection["index"])


def test_catalog_paths_resolve_against_the_catalog_folder(tmp_path, writers):
    from retrievers.building.build import resolve_pdf
    from signatures.types import Document

    (tmp_path / "files").mkdir()
    writers.column(tmp_path / "files" / "a.pdf")
    doc = Document(id="a", symbol="X", year=2022, doctype="US Stock Annual Report", path="files/a.pdf")
    assert resolve_pdf(doc, tmp_path / "pdf", tmp_path) == tmp_path / "files" / "a.pdf"
    assert resolve_pdf(doc.model_copy(update={"path": None}), tmp_path / "pdf") == tmp_path / "pdf" / "a.pdf"


def test_a_changed_document_is_hashed_once_to_find_it_stale_and_once_to_record_it(
    tiny_collection, writers, monkeypatch
):
    import retrievers.building.jobs as build_module

    _build(tiny_collection, workers=1)
    writers.column(tiny_collection["pdf_dir"] / "zh1.pdf")
    hashed = []
    real_hash = build_module.file_hash
    monkeypatch.setattr(build_module, "file_hash", lambda path: hashed.append(path.stem) or real_hash(path))
    report = _build(tiny_collection, workers=1)
    assert {r.doc_id: r.status for r in report.results if r.status != "failed"} == {
        "zh1": "built",
        "en1": "cached",
    }
    # the build cache check in the parent, then the recorded hash in the worker; en1 only the check;
    # broken files: enc, bad, blank, scan are hashed by the worker (never indexed, so no cache to check)
    assert sorted(hashed) == sorted(["zh1", "zh1", "en1", "enc", "bad", "blank", "scan"])
    assert report.results[0].content_hash == real_hash(tiny_collection["pdf_dir"] / "zh1.pdf")


def test_what_the_embedder_reads_is_part_of_the_cache_key(tiny_collection):
    """Switching --dense-chunks re-embeds the embedded documents only; BM25-only ones stay cached."""
    c = tiny_collection

    def build(**kw):
        catalog = Catalog.load(c["catalog"])
        report = build_index(
            catalog, c["pdf_dir"], c["index"], workers=1, embedder="hashing-256", progress=False, **kw
        )
        return {r.doc_id: r.status for r in report.results if r.doc_id in ("en1", "zh1")}

    assert build() == {"en1": "built", "zh1": "built"}
    assert build() == {"en1": "cached", "zh1": "cached"}
    assert build(dense_chunks="all") == {"en1": "built", "zh1": "cached"}
    manifest = json.loads((c["index"] / "manifest.json").read_text())
    assert manifest["dense_chunks"] == "all"
    en1 = IndexStore.open(c["index"]).index("en1")
    assert en1.meta["dense_chunks"] == "all"
    assert en1.embedded.tolist() == chosen([ch.text for ch in en1.chunks], "all")
    assert build(dense_chunks="all") == {"en1": "cached", "zh1": "cached"}
    with pytest.raises(ValueError, match="use one of figures, all"):
        build(dense_chunks="tables")
