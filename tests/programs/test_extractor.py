"""One call per document, concurrent; failures recorded not dropped; facts reused and resumed."""

from __future__ import annotations

from programs.facts.store import FactStore


def extraction_calls(lm) -> list[str]:
    """Which documents the LM was asked about (one entry per extraction call)."""
    calls = []
    for entry in lm.history:
        text = entry["messages"][-1]["content"]
        calls += [d for d in ("doc-a", "doc-b", "doc-c") if f"(id {d})" in text]
    return calls


def test_one_call_per_document_with_page_prefixed_deduplicated_passages(make_program, use_lm, store):
    lm = use_lm()
    program = make_program()
    program(question="q")
    assert sorted(extraction_calls(lm)) == ["doc-a", "doc-b", "doc-c"]
    prompt = next(
        e["messages"][-1]["content"] for e in lm.history if "(id doc-a)" in e["messages"][-1]["content"]
    )
    assert prompt.count("[page 3] 资本充足率为15.44%") == 1  # three queries returned it, sent once
    assert {q for d, q in store.searches if d == "doc-a"} == {
        "资本充足率",
        "营业收入",
        "资本充足率和营业收入是多少？",
    }


def test_failed_document_is_recorded_and_the_others_complete(make_program, use_lm):
    use_lm(**{"(id doc-b)": {"values": "this is not json"}})
    pred = make_program()(question="q")
    assert [(m.doc_id, m.stage) for m in pred.missing] == [("doc-b", "extract")]
    assert "AdapterParseError" in pred.missing[0].reason
    assert [r["id"] for r in pred.records] == ["doc-a", "doc-c"]
    assert "doc-b" in pred.run_log["doc_interactions"]  # the failure is in the run log too
    assert "FAILED" in pred.run_log["doc_interactions"]["doc-b"][-1]["answer"]


def test_second_question_reuses_facts_with_zero_extraction_calls(make_program, use_lm, tmp_path):
    facts = FactStore(tmp_path / "facts.sqlite")
    lm = use_lm()
    make_program(facts=facts)(question="q")
    assert len(extraction_calls(lm)) == 3 and len(facts) == 6
    lm2 = use_lm()
    pred = make_program(facts=FactStore(tmp_path / "facts.sqlite"))(question="another question, same fields")
    assert extraction_calls(lm2) == []
    assert len(lm2.history) == 3  # plan, code, answer
    assert pred.records[0]["capital_adequacy_ratio"] == 15.44


def test_a_run_that_died_resumes_asking_only_what_is_missing(make_program, use_lm, tmp_path):
    facts = FactStore(tmp_path / "facts.sqlite")
    use_lm(**{"(id doc-c)": None})  # no reply for doc-c: it fails, as if the run died there
    first = make_program(facts=facts)(question="q")
    assert [m.doc_id for m in first.missing] == ["doc-c"]
    lm = use_lm()
    second = make_program(facts=facts)(question="q")
    assert extraction_calls(lm) == ["doc-c"] and second.missing == []


def test_a_failed_document_is_reported_and_progress_still_counts_it(make_program, use_lm):
    use_lm(**{"(id doc-b)": None})
    seen = []
    program = make_program(concurrency=2)
    pred = program(question="q", on_progress=lambda done, total, o: seen.append((done, total)))
    assert sorted(seen) == [(1, 3), (2, 3), (3, 3)]
    assert [m.doc_id for m in pred.missing] == ["doc-b"] and len(pred.records) == 2


def test_thread_progress_counts_every_document(make_program, use_lm):
    use_lm()
    seen = []
    make_program(concurrency=3)(
        question="q", on_progress=lambda done, total, o: seen.append((done, total, o.doc_id))
    )
    assert [s[:2] for s in seen] == [(1, 3), (2, 3), (3, 3)]
    assert sorted(s[2] for s in seen) == ["doc-a", "doc-b", "doc-c"]


def test_fact_store_is_thread_safe_and_persistent(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    from signatures.types import Fact

    store = FactStore(tmp_path / "f.sqlite")
    facts = [Fact(doc_id=f"d{i}", field="x", description="x", value=str(i)) for i in range(200)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda f: store.put_many([f]), facts))
    reopened = FactStore(tmp_path / "f.sqlite")
    assert len(reopened) == 200 and reopened.get("d7", "x", "x").value == "7"
    assert reopened.get("d7", "x", "another description") is None  # key includes the description


def test_fact_reuse_off_always_asks(make_program, use_lm, settings, store):
    from programs.analyst import build_program

    program = build_program(settings.replace(fact_reuse=False), store)
    assert program.extractor.facts is None
    lm = use_lm()
    program(question="q")
    program(question="q")
    assert len(extraction_calls(lm)) == 6


def test_reply_field_names_are_matched_leniently():
    from programs.stages.extractor import match_values
    from signatures.types import ExtractedValue, FieldSpec

    specs = [
        FieldSpec(name="capital_adequacy_ratio", description="a"),
        FieldSpec(name="revenue", description="b"),
    ]
    mangled = [
        ExtractedValue(field="Capital Adequacy Ratio", disclosed=True, value="1"),
        ExtractedValue(field="Revenue", disclosed=True, value="2"),
    ]
    assert {k: v.value for k, v in match_values(specs, mangled).items()} == {
        "capital_adequacy_ratio": "1",
        "revenue": "2",
    }
    unnamed = [
        ExtractedValue(field="f1", disclosed=True, value="1"),
        ExtractedValue(field="f2", disclosed=True, value="2"),
    ]
    assert {k: v.value for k, v in match_values(specs, unnamed).items()} == {
        "capital_adequacy_ratio": "1",
        "revenue": "2",
    }
    assert match_values(specs, unnamed[:1]) == {}  # counts disagree: nothing guessed


def test_only_lm_calls_are_bounded_and_retrieval_runs_ahead(make_program, use_lm, store, monkeypatch):
    import threading

    import dspy

    from tests.sandbox.processes import wait_for

    use_lm()
    program = make_program(concurrency=1)
    lock, in_flight, peak, retrieved_when_first_call_ends = threading.Lock(), [0], [0], []

    def retrieved() -> int:
        return len({search[0] for search in store.searches})

    def slow_extract(**inputs):
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        # In flight until every document's passages are fetched, however slow the machine: retrieval
        # that waited for the LM gate never gets there (the deadline only guards against a hang).
        wait_for(lambda: retrieved() == 3, 60)
        with lock:
            in_flight[0] -= 1
            retrieved_when_first_call_ends.append(retrieved())
        return dspy.Prediction(values=[])

    monkeypatch.setattr(program.extractor.extract, "forward", slow_extract)
    program.extractor(assignments=program.planner(question="q", scope=None).assignments)
    assert peak[0] == 1  # concurrency=1: never two LM calls at once
    assert (
        retrieved_when_first_call_ends[0] == 3
    )  # every document's passages were fetched during the first call


def test_the_planners_search_terms_reach_retrieval_next_to_the_description(
    make_program, use_lm, store, reply_for
):
    plan = {
        "subqueries": [
            {
                **reply_for.plan["subqueries"][0],
                "fields": [
                    {
                        "name": "capital_adequacy_ratio",
                        "description": "资本充足率",
                        "type": "percent",
                        "unit": "percent",
                        "search_terms": ["资本充足率", "监管资本"],
                    },
                    {
                        "name": "revenue",
                        "description": "营业收入",
                        "type": "number",
                        "unit": "CNY",
                        "search_terms": "营业总收入；利润表",
                    },
                ],
            }
        ]
    }
    use_lm(**{"[[ ## catalog ## ]]": {"reasoning": "terms", "plan": plan}})
    pred = make_program()(question="q")
    searches = {s[1:] for s in store.searches if s[0] == "doc-a"}
    assert {("资本充足率", ("资本充足率", "监管资本")), ("营业收入", ("营业总收入", "利润表"))} <= searches
    assert pred.plan.fields()[1].search_terms == [
        "营业总收入",
        "利润表",
    ]  # one string split, not a failed plan
    assert pred.records[0]["capital_adequacy_ratio"] == 15.44


def test_a_document_the_stopped_run_never_asked_is_no_warning_and_no_call(store, use_lm, caplog):
    """A budget or Ctrl-C stops the pool: the documents still queued fail as not asked. They printed a
    WARNING each on a budget-stopped compile's console and counted as asked in the repair history."""
    import threading

    from programs.stages.extract_facts import FactWrites
    from programs.stages.extractor import DocumentExtractor
    from signatures.types import FieldSpec, SubQuery

    lm = use_lm()
    extractor = DocumentExtractor(store)
    spec = FieldSpec(name="revenue", type="number", unit="CNY", description="营业收入")
    job = extractor.prepare("doc-a", [SubQuery(query="营业收入？", fields=[spec])], extractor.reuse())
    stop = threading.Event()
    stop.set()
    with caplog.at_level("INFO", logger="programs.stages.extract_facts"):
        outcome = extractor.run_job(
            FactWrites(None, cascade=False), None, job, threading.BoundedSemaphore(1), stop
        )
    assert (
        outcome.failure is not None and "interrupted before this document was asked" in outcome.failure.reason
    )
    assert not outcome.asked_lm and extraction_calls(lm) == []
    assert [r.levelname for r in caplog.records] == ["INFO"]
