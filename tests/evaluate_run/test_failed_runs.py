"""Issue 21 part 2: a dead LM is not a run, and a failed question is not an answered one.

Before: `collate run` against a closed port exited 0 with "coverage 2/2 answered (1.000)", errors=0
and a FINISHED MLflow run, while its LM line said 2 errors of 2 calls.
"""

from __future__ import annotations

import socket

from mlflow.tracking import MlflowClient

from collate import run as collate_run
from evaluate import tracking
from fakes.brain import Brain
from fakes.chat_format import call_kind
from fakes.server import FakeLMServer, Fault


def _run(small_corpus, out, limit: int = 2) -> int:
    corpus, index = small_corpus
    return collate_run.main(
        ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out),
         "--limit", str(limit), "--no-progress", "--no-autolog", "--no-judge"]
    )  # fmt: skip


def _serve(monkeypatch, *faults: Fault) -> FakeLMServer:
    server = FakeLMServer(Brain(), faults=faults).start()
    for name, value in {**server.env(), "COLLATE_CACHE": "false", "COLLATE_NUM_RETRIES": "0"}.items():
        monkeypatch.setenv(name, value)
    return server


def test_a_closed_port_is_one_line_and_exit_2_with_no_mlflow_run(small_corpus, tmp_path, monkeypatch, capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    monkeypatch.setenv("COLLATE_LM", "openai/fake-brain")
    monkeypatch.setenv("COLLATE_API_BASE", url)
    monkeypatch.setenv("COLLATE_API_KEY", "x")
    before = {r.info.run_id for r in tracking.runs()}
    capsys.readouterr()  # MLflow's own lines about its store
    code = _run(small_corpus, tmp_path / "run")
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert code == 2 and err.count("\n") == 0 and captured.out == ""
    assert (
        err.startswith("error: LM check failed: cannot reach") and url in err and "openai/fake-brain" in err
    )
    assert "COLLATE_API_BASE" in err
    assert {r.info.run_id for r in tracking.runs()} == before and not (
        tmp_path / "run" / "summary.json"
    ).exists()


def test_a_run_whose_every_question_failed_exits_1_counts_them_failed_and_is_a_failed_mlflow_run(
    small_corpus, tmp_path, monkeypatch, capsys
):
    server = _serve(monkeypatch, Fault("500", when=lambda messages: call_kind(messages) != "preflight"))
    try:
        code = _run(small_corpus, tmp_path / "run")
    finally:
        server.stop()
    captured = capsys.readouterr()
    assert code == 1
    assert "coverage 0/2 answered, 2 failed (0.000)" in captured.out and "errors=2" in captured.out
    assert "error: every question failed" in captured.err and "planning failed" in captured.err
    run = tracking.runs()[0]
    assert run.info.status == "FAILED" and "every question failed" in run.data.tags["failure"]
    assert run.data.metrics["answers/failed_answers"] == 2 and run.data.metrics["answers/coverage"] == 0


def test_a_run_where_some_questions_failed_counts_them_failed_and_still_finishes(
    small_corpus, tmp_path, monkeypatch, capsys
):
    # Every document of the second question fails to extract (its first is shared with no other question).
    from evaluate.dataset import load_dataset

    items = load_dataset(small_corpus[0] / "dataset.json")
    first_docs = set(items[0].doc_ids)
    other = next(i for i in items if not set(i.doc_ids) & first_docs)
    dataset = tmp_path / "two.json"
    import json

    rows = {i["question_id"]: i for i in json.loads((small_corpus[0] / "dataset.json").read_text())}
    dataset.write_text(json.dumps([rows[items[0].question_id], rows[other.question_id]], ensure_ascii=False))
    unreadable = Fault(
        "500",
        when=lambda messages: (
            call_kind(messages) == "extract" and any(d in str(messages) for d in other.doc_ids)
        ),
    )
    server = _serve(monkeypatch, unreadable)
    try:
        code = collate_run.main(
            ["--dataset", str(dataset), "--index", str(small_corpus[1]), "--out", str(tmp_path / "run"),
             "--no-progress", "--no-autolog", "--no-judge"]
        )  # fmt: skip
    finally:
        server.stop()
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "coverage 1/2 answered, 1 failed" in captured.out
    assert f"1 of 2 questions failed, counted wrong: {other.question_id}" in captured.err
    rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    failed = rows[1]
    assert failed["question_id"] == other.question_id and failed["error"].startswith(
        "no document could be read"
    )
    assert failed["scores"]["decided_by"] == "failed" and rows[0]["error"] is None
    status = MlflowClient(tracking.tracking_uri()).get_run(tracking.runs()[0].info.run_id).info.status
    assert status == "FINISHED"
