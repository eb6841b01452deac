"""Answerer: a failed answer call still gives the user the computed result and the missing documents."""

from __future__ import annotations

from programs.stages.answer import Answerer
from signatures.types import DocumentFailure


class DownLM:
    """Stands in for the answer predictor: the call raises."""

    def __call__(self, **inputs):
        raise RuntimeError("answer LM down")


def test_a_failed_answer_call_falls_back_to_the_result_and_the_missing_documents(settings, store):
    answerer = Answerer(sample_records=settings.sample_records)
    answerer.answer = DownLM()
    doc_a = next(d for d in store.catalog.documents() if d.id == "doc-a")
    records = [{"id": "doc-a", "symbol": doc_a.symbol, "year": doc_a.year}]
    failures = [DocumentFailure(doc_id="doc-x", stage="extract", reason="timed out")]
    pred = answerer(
        **{
            "question": "q",
            "result": f"top: {doc_a.symbol}",
            "records": records,
            "facts": [],
            "failures": failures,
            "documents": {"doc-a": doc_a},
        }
    )
    assert (
        pred.answer
        == f"Result: top: {doc_a.symbol}\nMissing documents: doc-x (doc-x): extract failed: timed out"
    )
    assert [(c.doc_id, c.symbol) for c in pred.citations] == [
        ("doc-a", doc_a.symbol)
    ]  # cited by code, LM or not
