"""evaluate.tracking writes runs the way MLflow's own client reads them back."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import dspy
import pytest
from mlflow.tracking import MlflowClient

from evaluate import tracking


def _client() -> MlflowClient:
    return MlflowClient(tracking.tracking_uri())


def test_default_store_is_sqlite_in_the_current_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("MLFLOW_TRACKING_URI")
    monkeypatch.chdir(tmp_path)
    assert tracking.tracking_uri() == f"sqlite:///{tmp_path / 'mlflow.db'}"


def test_a_run_holds_params_metrics_table_and_artifacts(tmp_path):
    extra = tmp_path / "agent_output.json"
    extra.write_text(json.dumps([{"question_id": "q1", "model_answer": "A"}]))
    with tracking.start_run(
        "unit", params={"lm": "fake/x", "k": 5, "api_key": None, "nested": {"a": 1}}, experiment="t-run"
    ) as run:
        run.log_metrics(
            {"final_accuracy": 0.5, "undecided": None, "decided": 3, "ok": True, "variant": "flat-rag"}
        )
        run.log_table(
            [{"question_id": "q1", "final": 1.0, "records": [{"a": 1}]}, {"question_id": "q2", "x": "y"}]
        )
        run.log_artifact(extra)
        run.log_json({"hello": "世界"}, "notes/hello.json")

    got = _client().get_run(run.run_id)
    assert got.info.status == "FINISHED"
    assert got.data.params == {"lm": "fake/x", "k": "5", "api_key": "", "nested": '{"a": 1}'}
    assert got.data.metrics == {"acc/final": 0.5, "answers/decided": 3.0, "ok": 1.0}
    names = {a.path for a in _client().list_artifacts(run.run_id)}
    assert {"per_question.json", "agent_output.json", "notes"} <= names
    table = json.loads(
        Path(_client().download_artifacts(run.run_id, "per_question.json", str(tmp_path))).read_text()
    )
    assert table["columns"] == ["question_id", "final", "records", "x"]
    assert len(table["data"]) == 2


def test_artifacts_go_next_to_the_sqlite_file_not_into_the_working_folder():
    with tracking.start_run("where", experiment="t-where") as run:
        run.log_json({"a": 1}, "a.json")
    location = _client().get_experiment(run.experiment_id).artifact_location
    db_folder = Path(tracking.tracking_uri()[len("sqlite:///") :]).parent
    assert location.startswith(db_folder.resolve().as_uri())
    assert not Path(os.getcwd(), "mlruns").exists()


def test_a_failing_body_marks_the_run_failed():
    with pytest.raises(ValueError):
        with tracking.start_run("boom", experiment="t-fail") as run:
            raise ValueError("boom")
    assert _client().get_run(run.run_id).info.status == "FAILED"


def test_long_params_are_cut_not_refused():
    with tracking.start_run("long", params={"instructions": "x" * 10_000}, experiment="t-long") as run:
        pass
    value = _client().get_run(run.run_id).data.params["instructions"]
    assert len(value) <= tracking.MAX_PARAM_CHARS and value.endswith("[truncated]")


def test_program_state_is_logged_as_json(tmp_path):
    program = dspy.Predict("question -> answer")
    program.demos = [dspy.Example(question="q", answer="a")]
    with tracking.start_run("prog", experiment="t-prog") as run:
        run.log_program(program)
    path = _client().download_artifacts(run.run_id, "program/state.json", str(tmp_path))
    assert json.loads(Path(path).read_text())["demos"][0]["answer"] == "a"


def test_autolog_traces_module_calls_and_is_switched_off_after():
    from dspy.utils.dummies import DummyLM
    from mlflow.dspy.callback import MlflowCallback

    dspy.configure(lm=DummyLM({"": {"answer": "42"}}))
    program = dspy.Predict("question -> answer")
    with tracking.start_run("traced", experiment="t-trace") as run:
        with tracking.dspy_autolog():
            assert any(isinstance(c, MlflowCallback) for c in dspy.settings.callbacks)
            assert program(question="six times seven?").answer == "42"
    assert not any(isinstance(c, MlflowCallback) for c in dspy.settings.callbacks)
    traces = _client().search_traces(locations=[run.experiment_id])
    assert traces, "autolog wrote no trace"


def test_ui_command_names_the_store_and_a_single_worker():
    command = tracking.ui_command("sqlite:////tmp/x/mlflow.db", port=5123)
    assert "--backend-store-uri sqlite:////tmp/x/mlflow.db" in command
    assert "--workers 1" in command and "MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false" in command
    assert "127.0.0.1:5123" in command
    linked = tracking.ui_command("sqlite:////tmp/x/mlflow.db", port=5123, experiment_id="7")
    # the comparison view, and the Models page as charts (its table shows no score without scrolling)
    assert linked.endswith(
        f"open http://127.0.0.1:5123{tracking.view_path('7')} "
        f"(each program's scores: http://127.0.0.1:5123{tracking.models_path('7')})"
    )
    assert "viewMode=CHART" in tracking.models_path("7")


def test_a_run_opened_inside_another_becomes_its_child():
    with tracking.start_run("outer", experiment="t-nest") as outer:
        with tracking.start_run("inner") as inner:
            pass
    assert _client().get_run(inner.run_id).data.tags["mlflow.parentRunId"] == outer.run_id


def test_metric_names_group_by_what_they_measure_and_the_headline_sorts_first():
    """Issue 21 part 4: final_accuracy sat in an alphabetical scroll box among 60 metrics on the compare page."""
    renamed = {
        "final_accuracy": "acc/final",
        "final_accuracy_answered": "acc/final_answered",
        "full_accuracy": "acc/full",
        "process_macro_cell": "acc/macro",
        "process_micro_cell": "acc/micro",
        "process_macro_row": "acc/process_macro_row",
        "process_verified_micro_cell": "acc/verified_micro",
        "dev_metric": "dev/metric",
        "lm_calls": "lm/calls",
        "lm_parse_failures_extractor": "lm/parse_failures_extractor",
        "total_tokens": "lm/tokens",
        "n": "answers/n",
        "coverage": "answers/coverage",
        "facts_verified_share": "facts/verified_share",
        "budget_exhausted": "budget/exhausted",
        "seconds": "time/seconds",
        "eval": "eval",  # autolog's own: left alone
    }
    assert {k: tracking.metric_name(k) for k in renamed} == renamed
    every = sorted(tracking.metric_name(k) for k in renamed)
    # the compare page lists metrics alphabetically: final, full and process macro/micro come first
    headline = ["acc/final", "acc/final_answered", "acc/full", "acc/macro", "acc/micro"]
    assert every[: len(headline)] == headline


def test_the_headline_view_is_a_saved_view_of_evaluation_runs_best_first_that_fits_1400_px():
    experiment = tracking.use_store("t-view")
    tags = MlflowClient(tracking.tracking_uri()).get_experiment(experiment).tags
    saved = json.loads(tags[f"mlflow.sharedViewState.{tracking.VIEW_KEY}"])
    assert saved["name"] == tracking.VIEW_NAME and isinstance(saved["createdAt"], int)  # listed under Views
    state = json.loads(saved["state"])
    assert state["orderByKey"] == "metrics.`acc/final`" and state["orderByAsc"] is False
    assert state["searchFilter"] == "tags.kind = 'evaluation'"
    columns = state["columnOrder"]
    wanted = ["acc/final", "acc/macro", "acc/micro", "acc/full", "lm/calls", "lm/tokens", "cost/usd"]
    assert [c for c in columns if c.startswith("metrics.")] == [f"metrics.`{m}`" for m in wanted]
    assert [c for c in columns if c.startswith("tags.")] == ["tags.`variant`", "tags.`cost_note`"]
    # runs over other questions are another group, never one ranking (issue 31)
    assert state["groupBy"]["groupByKeys"] == [{"mode": "tag", "groupByData": tracking.COMPARE_ON}]
    assert set(columns) == set(state["columnWidths"])  # MLflow sizes only the columns it is told to order
    # the table's columns plus its checkbox column (73 px) inside 1400 px less the side bar and margins
    assert sum(state["columnWidths"].values()) + 73 <= 1400 - 222 - 30
    assert tags["mlflow.note.content"].count(tracking.view_path(experiment)) == 1
    assert tags["mlflow.note.content"].count(tracking.models_path(experiment)) == 1
    # a second use changes nothing the user may have edited: same view, same description
    tracking.use_store("t-view")
    again = MlflowClient(tracking.tracking_uri()).get_experiment(experiment).tags
    assert (
        again[f"mlflow.sharedViewState.{tracking.VIEW_KEY}"]
        == tags[f"mlflow.sharedViewState.{tracking.VIEW_KEY}"]
    )


def test_the_description_this_module_wrote_before_gains_the_models_link_and_a_users_own_is_kept():
    experiment = tracking.use_store("t-note")
    client = MlflowClient(tracking.tracking_uri())
    older = next(iter(tracking._older_notes(experiment)))
    client.set_experiment_tag(experiment, "mlflow.note.content", older)
    tracking.use_store("t-note")
    assert client.get_experiment(experiment).tags["mlflow.note.content"] == tracking.experiment_note(
        experiment
    )
    client.set_experiment_tag(experiment, "mlflow.note.content", "my own notes")
    tracking.use_store("t-note")
    assert client.get_experiment(experiment).tags["mlflow.note.content"] == "my own notes"


def test_a_run_can_name_the_questions_it_answered_as_its_dataset_input():
    questions = {
        "name": "dataset.json",
        "digest": "4f1e2d3c",
        "context": "test",
        "source": "/data/dataset.json",
    }
    with tracking.start_run("ds", experiment="t-ds", dataset=questions) as run:
        pass
    (logged,) = _client().get_run(run.run_id).inputs.dataset_inputs
    assert (logged.dataset.name, logged.dataset.digest) == ("dataset.json", "4f1e2d3c")
    assert {t.key: t.value for t in logged.tags} == {"mlflow.data.context": "test"}


def test_a_question_s_trace_is_stored_when_logged_not_by_a_queue_polled_once_a_second():
    """MLflow's default exports traces from a background queue whose consumer polls once a second, and
    log_trace waits until the store holds the trace: ~1 s idle a question (bench/trace_logging.py)."""
    experiment = tracking.use_store("t-trace")
    tree = {
        "name": "question",
        "inputs": {"question": "q"},
        "outputs": {"answer": "a"},
        "children": [{"name": "plan"}],
    }
    trace_id = tracking.log_trace(tree, experiment, 1.0)
    assert [s.name for s in _client().get_trace(trace_id).data.spans] == ["question", "plan"]
    queue = [t.name for t in threading.enumerate() if t.name.lower().startswith("mlflowtracelogging")]
    assert not queue, f"traces went through MLflow's async queue ({queue})"
