"""End to end: `python -m collate.ask` over a tiny synthetic corpus, through a real HTTP fake LM.

The fake server on 127.0.0.1 answers with the rule-based brain; COLLATE_* point the program at it,
exactly as a user points it at a real endpoint. Faults (429, 500, malformed replies) are injected on
the wire, and every run must end with an answer or a clear failure, with no document lost.
"""

from __future__ import annotations

import json

from collate import ask
from fakes.brain import Brain
from fakes.chat_format import call_kind
from fakes.corpus import dataset_items
from fakes.server import FakeLMServer, Fault, last_message_contains


def run_ask(tiny, item, server, monkeypatch, capsys, tmp_path, *extra, stderr: list | None = None):
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("COLLATE_CACHE", "false")
    run_dir = tmp_path / "run"
    code = ask.main(
        [
            "--index",
            str(tiny[1]),
            "--dataset",
            str(tiny[0] / "dataset.json"),
            "--question-id",
            item["question_id"],
            "--run-dir",
            str(run_dir),
            "--json",
            "--no-progress",
            "--fact-store",
            str(tmp_path / "facts.sqlite"),
            *extra,
        ]
    )
    captured = capsys.readouterr()
    if stderr is not None:
        stderr.append(captured.err)
    out = captured.out
    return code, (json.loads(out) if code in (0, 1) else None), run_dir  # 1: no answer, --json says why


def doc_ids(item) -> set[str]:
    return {row["id"] for row in item["metadata"]}


def test_a_dataset_question_is_answered_with_records_citations_and_a_run_log(
    tiny, item, monkeypatch, capsys, tmp_path
):
    with FakeLMServer(Brain()) as server:
        code, out, run_dir = run_ask(tiny, item, server, monkeypatch, capsys, tmp_path)
        kinds = server.calls_by_kind()
    assert code == 0
    assert set(out) == {
        "answer",
        "coverage_line",
        "coverage",
        "records",
        "code",
        "result",
        "citations",
        "missing",
        "usage",
        "cost",
        "error",
    }
    assert out["answer"].strip() and out["missing"] == [] and out["error"] is None
    assert {r["id"] for r in out["records"]} == doc_ids(item)  # one record per document in scope
    assert all({"id", "symbol", "year", "doctype"} <= set(r) for r in out["records"])
    assert out["citations"] and all(
        isinstance(c["page"], int) and c["page"] >= 1 for c in out["citations"] if c["page"]
    )
    assert any(c["page"] for c in out["citations"])
    assert kinds["plan"] >= 1 and kinds["extract"] == len(doc_ids(item)) and kinds["answer"] == 1
    assert kinds["preflight"] == 1
    run_log = json.loads((run_dir / "run_log.json").read_text(encoding="utf-8"))
    assert set(run_log["doc_interactions"]) == doc_ids(item)
    assert all(run_log["doc_interactions"][d] for d in doc_ids(item))
    assert (run_dir / "trace").is_dir()


def test_an_honest_reader_s_facts_verify_and_the_audit_report_shows_each_quote_on_its_page(
    tiny, item, monkeypatch, capsys, tmp_path
):
    report, err = tmp_path / "audit.html", []
    with FakeLMServer(Brain()) as server:
        code, out, _ = run_ask(
            tiny, item, server, monkeypatch, capsys, tmp_path, "--report", str(report), stderr=err
        )
        kinds = server.calls_by_kind()
    assert code == 0 and kinds["extract"] == len(doc_ids(item))  # nothing failed the check: no repair call
    assert f"audit report: {report.resolve()}" in err[0]  # says where it wrote
    coverage = out["coverage"]
    assert coverage["documents_in_scope"] == len(doc_ids(item)) and coverage["unverified"] == []
    assert out["coverage_line"].startswith(("依据：", "Based on "))
    html = report.read_text(encoding="utf-8")
    assert out["answer"].splitlines()[0][:20] in html and out["coverage_line"] in html
    assert (
        html.count('src="data:image/png;base64,') >= 1 and 'class="hl"' in html
    )  # pages rendered, quotes boxed
    assert "http://" not in html and "https://" not in html  # opens offline


def test_the_same_question_again_reuses_every_fact(tiny, item, monkeypatch, capsys, tmp_path):
    with FakeLMServer(Brain()) as server:
        first, _, _ = run_ask(tiny, item, server, monkeypatch, capsys, tmp_path)
        asked = server.calls_by_kind()["extract"]
        server.reset_counts()
        again, out, _ = run_ask(tiny, item, server, monkeypatch, capsys, tmp_path)
        assert (first, again) == (0, 0)
        assert asked == len(doc_ids(item)) and server.calls_by_kind()["extract"] == 0
        assert {r["id"] for r in out["records"]} == doc_ids(item)


def test_rate_limits_and_server_errors_are_retried_and_no_document_is_lost(
    tiny, item, monkeypatch, capsys, tmp_path
):
    # Per-document rules, so no call meets more faults than dspy.LM's 3 retries absorb.
    first, second = sorted(doc_ids(item))[:2]
    faults = [
        Fault("429", when=last_message_contains(first), times=2),
        Fault("500", when=last_message_contains(second), times=2),
        Fault("429", when=lambda messages: call_kind(messages) != "preflight", times=1),  # a stage's call
    ]
    with FakeLMServer(Brain(), faults=faults) as server:
        code, out, _ = run_ask(tiny, item, server, monkeypatch, capsys, tmp_path)
        served = server.faults_served()
    assert served == {"429": 3, "500": 2}
    assert code == 0 and out["missing"] == []
    assert {r["id"] for r in out["records"]} == doc_ids(item)


def test_malformed_replies_for_one_document_leave_it_missing_with_a_reason(
    tiny, item, monkeypatch, capsys, tmp_path
):
    broken = sorted(doc_ids(item))[0]
    about_broken, extraction = last_message_contains(broken), last_message_contains("[[ ## passages ## ]]")
    only_its_extraction = Fault(
        "malformed", when=lambda messages: about_broken(messages) and extraction(messages)
    )
    with FakeLMServer(Brain(), faults=[only_its_extraction]) as server:
        code, out, run_dir = run_ask(tiny, item, server, monkeypatch, capsys, tmp_path)
    assert code == 0 and out["answer"].strip()
    assert broken in out["answer"]  # the answer itself says which document is missing
    assert [m["doc_id"] for m in out["missing"]] == [broken]
    assert out["missing"][0]["stage"] == "extract" and "parse" in out["missing"][0]["reason"].lower()
    assert {r["id"] for r in out["records"]} == doc_ids(item) - {broken}
    run_log = json.loads((run_dir / "run_log.json").read_text(encoding="utf-8"))
    assert set(run_log["doc_interactions"]) == doc_ids(item)  # the failed document is reported, not dropped
    assert any("FAILED" in turn["answer"] for turn in run_log["doc_interactions"][broken])


def test_a_server_that_fails_every_call_is_one_line_and_exit_2_before_any_question(
    tiny, item, monkeypatch, capsys, tmp_path
):
    with FakeLMServer(Brain(), faults=[Fault("500")]) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        code, url = (
            ask.main(["--index", str(tiny[1]), "--json", "--no-progress", item["question"]]),
            server.url,
        )
        assert server.calls == 1 and server.calls_by_kind() == {"preflight": 1}  # nothing else spent
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert code == 2 and captured.out == "" and err.count("\n") == 0
    assert err.startswith("error: LM check failed:") and "HTTP 500" in err and url in err


def test_when_every_call_after_the_check_fails_the_question_fails_says_why_and_lists_every_document(
    tiny, item, monkeypatch, capsys, tmp_path
):
    after_the_check = Fault("500", when=lambda messages: call_kind(messages) != "preflight")
    with FakeLMServer(Brain(), faults=[after_the_check]) as server:
        code, out, _ = run_ask(tiny, item, server, monkeypatch, capsys, tmp_path)
        assert server.calls >= 3  # checked, then retried before giving up
    assert code == 1  # failed, not answered: the exit code and --json's error say so
    assert out["error"].startswith("planning failed: LMServerError")
    assert out["answer"].startswith("No answer")
    assert "server" in out["answer"].lower() or "500" in out["answer"]  # the reason, not just "failed"
    assert {m["doc_id"] for m in out["missing"]} == doc_ids(item)
    assert out["records"] == []


def test_the_brain_gets_some_annual_report_questions_right(tiny, monkeypatch, capsys, tmp_path):
    """Not an oracle: it reads only prompts. Scored by the project's deterministic matcher."""
    from evaluate.matching.metrics import final_match

    items = [i for i in dataset_items(tiny[0]) if i["metadata"][0]["doctype"] == "A股年报"][:6]
    assert len(items) >= 4
    verdicts = []
    with FakeLMServer(Brain()) as server:
        for it in items:
            code, out, _ = run_ask(tiny, it, server, monkeypatch, capsys, tmp_path)
            assert code == 0
            verdicts.append(final_match(it["question"], it["final_answer"], out["answer"]).correct)
    right = sum(v is True for v in verdicts)
    print(
        f"brain on {len(items)} annual-report questions: {right} right, {verdicts.count(False)} wrong, "
        f"{verdicts.count(None)} undecided"
    )
    assert right >= 2, verdicts


def test_a_document_whose_calls_hang_times_out_and_is_listed_missing(
    tiny, item, monkeypatch, capsys, tmp_path
):
    stuck = sorted(doc_ids(item))[-1]
    about_stuck, extraction = last_message_contains(stuck), last_message_contains("[[ ## passages ## ]]")
    hang = Fault("hang", when=lambda messages: about_stuck(messages) and extraction(messages))
    monkeypatch.setenv("COLLATE_TIMEOUT", "1")  # seconds per request, then DSPy's retries, then a failure
    monkeypatch.setenv("COLLATE_NUM_RETRIES", "1")
    # The hang outlasts any test (the server's stop() ends it): only the client's timeout ends those calls.
    with FakeLMServer(Brain(), faults=[hang], hang_seconds=600) as server:
        code, out, _ = run_ask(tiny, item, server, monkeypatch, capsys, tmp_path)
        # Read before stop() ends the hangs: a record's `ended` is set when its handler returns.
        still_hanging = [r.ended == 0.0 for r in server.records if r.fault == "hang"]
    assert code == 0 and out["answer"].strip()
    assert [m["doc_id"] for m in out["missing"]] == [stuck]
    assert {r["id"] for r in out["records"]} == doc_ids(item) - {stuck}
    # Bounded by the timeout and retries, not by the hang: the answer came while every hung call still hung.
    assert still_hanging and all(still_hanging)
