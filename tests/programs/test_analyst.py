"""The composed program end to end over a tiny store with DummyLM (dict mode)."""

from __future__ import annotations

import pytest


def test_forward_answers_with_records_citations_and_run_log(make_program, use_lm):
    lm = use_lm()
    pred = make_program()(question="哪家公司资本充足率最高？", doc_ids=None)
    assert pred.answer == "资本充足率最高的是600001。"
    assert [r["id"] for r in pred.records] == [
        "doc-a",
        "doc-b",
        "doc-c",
    ]  # ESG doc excluded by the restriction
    a = pred.records[0]
    assert a["capital_adequacy_ratio"] == 15.44 and a["revenue"] == 32390060000.0 and a["symbol"] == "600001"
    assert pred.records[2]["revenue"] == -1234.0
    assert '"top": "600001"' in pred.result and "```" not in pred.code
    assert {c.doc_id for c in pred.citations} == {"doc-a"} and {c.page for c in pred.citations} == {3, 4}
    assert pred.missing == []
    assert set(pred.run_log["doc_interactions"]) == {"doc-a", "doc-b", "doc-c"}
    assert "15.44%" in pred.run_log["doc_interactions"]["doc-a"][0]["answer"]
    assert len(lm.history) == 1 + 3 + 1 + 1  # plan, one call per document, code, answer


def test_unknown_document_ids_are_named(make_program, use_lm):
    use_lm()
    with pytest.raises(ValueError, match="nope"):
        make_program()(question="q", doc_ids=["doc-a", "nope"])


def test_a_failed_plan_is_answered_with_every_document_missing(make_program, use_lm):
    lm = use_lm(**{"[[ ## catalog ## ]]": {"reasoning": "x", "plan": "not a plan"}})
    pred = make_program()(question="q")
    assert pred.answer.startswith("No answer: planning failed") and pred.records == [] and pred.plan is None
    assert {m.doc_id for m in pred.missing} == {"doc-a", "doc-b", "doc-c", "doc-esg"}
    assert {m.stage for m in pred.missing} == {"plan"}
    assert all("catalog" in h["messages"][-1]["content"] for h in lm.history)  # no stage after planning ran


def test_analyst_and_flat_rag_return_one_result_type(make_program, settings, store, use_lm):
    from programs.flat_rag import build_flat_rag
    from programs.result import ProgramResult

    use_lm(**{"[[ ## passages ## ]]": {"answer": "600001"}})
    flat = build_flat_rag(settings, store)(question="q", doc_ids=["doc-a"])
    analysed = make_program()(question="哪家公司资本充足率最高？")
    assert type(flat) is ProgramResult and type(analysed) is ProgramResult
    assert set(flat.keys()) == set(analysed.keys())  # one shape: no caller needs to know which ran
    assert (
        flat.records == [] and flat.plan is None and flat.retrieved_chunks and not analysed.retrieved_chunks
    )
