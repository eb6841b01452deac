"""`python -m evaluate.run` carries the run's LM calls, LM errors and parse failures per stage into
summary.json, the console summary and the MLflow run's metrics (read back from the test's MLflow
store with MLflow's own client), and they are this run's only: a watch an earlier configure() left
counting in the same process does not leak its figures in.
"""

from __future__ import annotations

import json

from mlflow.tracking import MlflowClient

from collate import run as evaluate_run
from evaluate import tracking
from evaluate.dataset import load_dataset
from evaluate.runs import evaluation
from evaluate.runs.job import RunJob
from fakes.brain import Brain
from fakes.chat_format import call_kind
from fakes.server import FakeLMServer, Fault
from programs.analyst import build_program
from programs.lm.progress import current_watch
from programs.lm.settings import Settings, configure
from retrievers.indexing.store import IndexStore

STAGE_KINDS = {"planner": "plan", "extractor": "extract", "coder": "write_code", "answer": "answer"}


def serve(monkeypatch, *faults: Fault) -> FakeLMServer:
    server = FakeLMServer(Brain(), faults=faults).start()
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("COLLATE_CACHE", "false")
    return server


def unparseable_answer_once() -> Fault:
    return Fault("malformed", when=lambda messages: call_kind(messages) == "answer", times=1)


def metrics_of(run_id: str) -> dict[str, float]:
    return MlflowClient(tracking.tracking_uri()).get_run(run_id).data.metrics


def test_an_unparseable_answer_is_the_answer_stage_s_parse_failure_in_summary_console_and_mlflow(
    small_corpus, monkeypatch, tmp_path, capsys
):
    corpus, index = small_corpus
    out = tmp_path / "run"
    server = serve(monkeypatch, unparseable_answer_once())
    try:
        code = evaluate_run.main(
            [
                "--dataset",
                str(corpus / "dataset.json"),
                "--index",
                str(index),
                "--out",
                str(out),
                "--limit",
                "2",
                "--no-progress",
                "--no-judge",
            ]
        )
        sent, total, served = server.calls_by_kind(), server.calls, server.faults_served()
    finally:
        server.stop()
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert served == {"malformed": 1}
    assert sent.pop("preflight") == 1  # the command's LM check: one call, no stage's, counted apart
    total -= 1

    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    stages = summary["lm_stages"]
    assert (summary["lm_parse_failures"], summary["lm_errors"], summary["lm_calls"]) == (1, 0, total)
    assert stages["answer"]["parse_failures"] == 1
    assert all(c["parse_failures"] == c["lm_errors"] == 0 for s, c in stages.items() if s != "answer")
    for stage, kind in STAGE_KINDS.items():
        assert stages[stage]["calls"] == sent[kind] >= 1, (stage, stages, sent)

    answers = sent["answer"]
    assert f"parse failures 1: answer 1 parse failure and 1 re-ask of {answers} calls" in printed.out
    assert f"LM calls {total} (planner {sent['plan']}, extractor {sent['extract']}" in printed.out

    metrics = metrics_of(summary["run_id"])
    assert metrics["lm/parse_failures_answer"] == 1 and metrics["lm/parse_failures"] == 1
    assert metrics["lm/parse_failures_planner"] == metrics["lm/errors_answer"] == metrics["lm/errors"] == 0
    assert metrics["lm/calls"] == total and metrics["lm/calls_answer"] == answers
    assert metrics["lm/calls_extractor"] == sent["extract"] and metrics["lm/seconds_extractor"] > 0


def test_a_run_counts_its_own_calls_not_those_an_earlier_configure_s_watch_already_counted(
    small_corpus, monkeypatch, tmp_path
):
    corpus, index = small_corpus
    items = load_dataset(corpus / "dataset.json")
    server = serve(monkeypatch, unparseable_answer_once())
    try:
        settings = Settings.from_env({"fact_store": str(tmp_path / "facts.sqlite")})
        program = build_program(settings, IndexStore.open(index))
        configure(settings, program)
        # An earlier question in this process, through the same watch: its parse failure is counted there.
        program(question=items[2].question, doc_ids=items[2].doc_ids)
        assert server.faults_served() == {"malformed": 1}
        assert current_watch().summary()["answer"]["parse_failures"] == 1
        server.reset_counts()

        result = evaluation.evaluate_program(
            program,
            items[:2],
            RunJob(
                variant="after-a-faulty-question",
                out_dir=tmp_path / "run",
                autolog=False,
                progress=False,
            ),
            settings=settings,
        )
        sent, total = server.calls_by_kind(), server.calls
    finally:
        server.stop()
    summary, stages = result.summary, result.summary["lm_stages"]
    assert (summary["lm_parse_failures"], summary["lm_errors"], summary["lm_calls"]) == (0, 0, total)
    assert stages["answer"] == {**stages["answer"], "calls": sent["answer"], "parse_failures": 0}
    assert "parse failures 0" in evaluation.format_summary(summary)
    assert "parse failure of" not in evaluation.format_summary(summary)

    metrics = metrics_of(result.run_id)
    assert metrics["lm/parse_failures"] == metrics["lm/parse_failures_answer"] == 0
    assert metrics["lm/calls"] == total and metrics["lm/calls_answer"] == sent["answer"] == 2


def test_a_summary_without_lm_figures_has_no_lm_line_and_stages_flatten_to_metric_names():
    assert evaluation.lm_line({"variant": "v", "errors": 0}) == ""  # e.g. a summary.json from before
    stages = {"planner": {"calls": 3, "lm_errors": 1, "parse_failures": 0, "seconds": 2.5}}
    metrics = evaluation.flat_metrics({"lm_calls": 3, "lm_stages": stages})
    assert metrics == {
        "lm_calls": 3,
        "lm_calls_planner": 3,
        "lm_errors_planner": 1,
        "lm_parse_failures_planner": 0,
        "lm_seconds_planner": 2.5,
    }
    line = evaluation.lm_line({"lm_calls": 3, "lm_errors": 1, "lm_stages": stages})
    assert line == "LM calls 3 (planner 3), errors 1, parse failures 0: planner 1 LM error of 3 calls"
