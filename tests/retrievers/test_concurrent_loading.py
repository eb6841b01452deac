"""Extraction threads open document indexes at once: every thread gets the one loaded copy, none fails."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from retrievers.building.build import build_index
from retrievers.catalog import Catalog
from retrievers.indexing.document_index import DocumentIndex
from retrievers.indexing.store import IndexStore


def test_many_threads_opening_the_same_documents_share_one_load(tiny_collection, monkeypatch):
    build_index(
        Catalog.load(tiny_collection["catalog"]),
        tiny_collection["pdf_dir"],
        tiny_collection["index"],
        workers=1,
        embedder="hashing-256",
        progress=False,
    )
    store = IndexStore.open(tiny_collection["index"])
    loads = []
    real_load = DocumentIndex.load

    def counting_load(folder):
        loads.append(folder.name)
        return real_load(folder)

    monkeypatch.setattr(DocumentIndex, "load", staticmethod(counting_load))
    with ThreadPoolExecutor(max_workers=16) as pool:
        got = list(pool.map(lambda i: store.index(["zh1", "en1"][i % 2]), range(64)))
    assert (
        sorted(loads) == sorted(set(loads)) and len(loads) == 2
    )  # one load per document, not one per thread
    assert len({id(x) for x in got}) == 2
    hits = list(
        ThreadPoolExecutor(max_workers=8).map(
            lambda _: store.search("zh1", "资本充足率", k=1)[0].text, range(32)
        )
    )
    assert all("15.44%" in h for h in hits)
