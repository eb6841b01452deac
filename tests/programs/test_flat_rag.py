"""The flat-RAG baseline: one pooled ranking with a budget of k x documents, metadata optional."""

from __future__ import annotations

from programs.flat_rag import build_flat_rag


def test_budget_is_k_times_documents_and_metadata_is_optional(settings, store, use_lm):
    lm = use_lm(**{"[[ ## passages ## ]]": {"answer": "600001"}})
    pred = build_flat_rag(settings.replace(k=1), store, with_metadata=True)(
        question="q", doc_ids=["doc-a", "doc-b"]
    )
    assert pred.answer == "600001" and len(pred.retrieved_chunks) == 2  # k=1 x 2 documents
    assert "[600001 2023 A股年报, page 3]" in lm.history[-1]["messages"][-1]["content"]
    assert {c.doc_id for c in pred.citations} == {"doc-a"}  # TinyStore ranks doc-a's pages first
    assert {(c.symbol, c.year) for c in pred.citations} == {("600001", 2023)}  # identity from the catalog
    assert all(chunk in lm.history[-1]["messages"][-1]["content"] for chunk in pred.retrieved_chunks)
    plain = build_flat_rag(settings.replace(k=1), store, with_metadata=False)(question="q", doc_ids=["doc-a"])
    assert plain.retrieved_chunks == ["[page 3] 资本充足率为15.44%"]
    assert "600001 2023" not in lm.history[-1]["messages"][-1]["content"]
