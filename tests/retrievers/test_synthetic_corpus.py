"""Integration: a tiny corpus from data.synth, indexed from its MuDABench dataset.json, finds its truth strings."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest

from retrievers.building.build import build_index
from retrievers.catalog import Catalog
from retrievers.indexing.store import IndexStore


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    from data.synth.corpus import generate

    out = tmp_path_factory.mktemp("synth")
    generate(out, companies=3, years=[2021, 2022], pages=3)
    return out


def test_tiny_synthetic_corpus_is_indexed_and_its_values_are_found(corpus, tmp_path):
    catalog = Catalog.load(corpus / "catalog.jsonl")
    listed = [json.loads(line)["id"] for line in (corpus / "catalog.jsonl").read_text().splitlines() if line]
    assert [d.id for d in catalog.documents()] == listed
    in_questions = Catalog.load(corpus / "dataset.json")  # the MuDABench form names a subset of them
    assert {d.id for d in in_questions.documents()} <= set(listed)
    assert all(catalog.get(d.id).doctype == d.doctype for d in in_questions.documents())
    report = build_index(
        catalog, corpus / "pdf", tmp_path / "index", workers=1, embedder="hashing-256", progress=False
    )
    assert report.count("built") == len(listed) and not report.failures
    store = IndexStore.open(tmp_path / "index")
    hits = defaultdict(list)
    for line in (corpus / "truth.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if not row["strings"]:
            continue
        top = store.search(row["doc_id"], row["description"], k=5)
        hits[row["language"]].append(any(s in p.text for p in top for s in row["strings"]))
        assert all(1 <= p.page <= (p.page_end or p.page) for p in top)
    assert set(hits) == {"zh", "en"}
    for language, found in hits.items():
        assert sum(found) / len(found) >= 0.9, (language, sum(found), len(found))


def test_pooled_search_over_one_document_ranks_as_that_documents_own_search(corpus, tmp_path):
    """The flat-RAG baseline and the per-document search fuse dense and BM25 the same way: pooled over a
    single document (BM25 normalized by its best hit, which keeps the order) they give the same passages."""
    catalog = Catalog.load(corpus / "catalog.jsonl")
    build_index(
        catalog, corpus / "pdf", tmp_path / "index", workers=1, embedder="hashing-256", progress=False
    )
    store = IndexStore.open(tmp_path / "index")
    english = [d.id for d in catalog.documents() if d.language == "en"]
    rows = [
        json.loads(line) for line in (corpus / "truth.jsonl").read_text(encoding="utf-8").splitlines() if line
    ]
    queries = [(r["doc_id"], r["description"]) for r in rows if r["doc_id"] in english][:12]
    assert english and queries
    for doc_id, query in queries:
        assert store.index(doc_id).has_dense  # both sides present, so the fusion is what is compared
        own = store.search(doc_id, query, k=5)
        assert len(own) == 5
        assert store.search_pooled(query, k=5, doc_ids=[doc_id]) == own, query
