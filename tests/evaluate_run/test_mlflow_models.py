"""Issue 31 item 4: MLflow the way its users expect in MLflow 3, read back with MLflow's own client.

One LoggedModel per compiled program (its params, its program file, the compile's dev score), linked to
every evaluation run of it, with the run's figures per dataset (so the Models page ranks programs on one
dataset); one trace per question (the question, each document's extraction a child span, the code, the
answer) carrying the gold answer and the verdict as assessments, so the wrong ones can be filtered.
Before: autolog's dozen traces per question (a trace per stage and module call), none with its gold or
verdict; no LoggedModel but autolog's empty "dspy" one per compile and trial.
"""

from __future__ import annotations

import json
from pathlib import Path

import mlflow
from mlflow.tracking import MlflowClient

from collate import run as collate_run
from evaluate import tracking
from optimize import compile as compile_cli

LIMIT = 3


def _client() -> MlflowClient:
    return MlflowClient(tracking.tracking_uri())


def _evaluate(small_corpus, out: Path, *extra: str) -> dict:
    corpus, index = small_corpus
    argv = ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out),
            "--limit", str(LIMIT), "--no-progress", "--no-judge", *extra]  # fmt: skip
    assert collate_run.main(argv) == 0
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


def _models(experiment_id: str) -> list:
    return mlflow.search_logged_models(experiment_ids=[experiment_id], output_format="list")


def test_each_question_is_one_trace_with_its_documents_its_gold_and_its_verdict(
    small_corpus, brain_server, tmp_path
):
    summary = _evaluate(small_corpus, tmp_path / "run")
    run = _client().get_run(summary["run_id"])
    traces = _client().search_traces(
        locations=[run.info.experiment_id], filter_string=f"metadata.`mlflow.sourceRun` = '{run.info.run_id}'"
    )
    results = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert sorted(t.info.tags["question_id"] for t in traces) == sorted(r["question_id"] for r in results)
    for trace in traces:
        spans = trace.data.spans
        root = next(s for s in spans if s.parent_id is None)
        row = next(r for r in results if r["question_id"] == trace.info.tags["question_id"])
        assert root.name == f"question {row['question_id']}" and root.outputs["answer"] == row["answer"]
        stages = {s.name for s in spans if s.parent_id == root.span_id}
        assert {"plan", "extract", "normalize", "code", "answer"} <= stages
        extract = next(s for s in spans if s.name == "extract")
        documents = [s for s in spans if s.parent_id == extract.span_id]
        assert sorted(s.inputs["doc_id"] for s in documents) == sorted(row["doc_ids"])
        facts = [f for s in documents for f in s.outputs["facts"]]
        assert len(facts) == len(row["facts"])
        code = next(s for s in spans if s.name == "code")
        assert any(s.parent_id == code.span_id and s.inputs["code"] == row["code"] for s in spans)
        assessed = {a.name: a for a in trace.info.assessments}
        assert (
            assessed["expected_answer"].value and assessed["decided_by"].value == row["scores"]["decided_by"]
        )
        if row["scores"]["final_correct"] is not None:
            assert assessed["correct"].value is bool(row["scores"]["final_correct"])
            assert assessed["correct"].rationale == row["scores"]["final_reason"]
    # the trace view's filter on the verdict finds exactly the questions scored wrong
    wrong = _client().search_traces(
        locations=[run.info.experiment_id],
        filter_string=f"metadata.`mlflow.sourceRun` = '{run.info.run_id}' AND feedback.correct = 'false'",
    )
    assert sorted(t.info.tags["question_id"] for t in wrong) == sorted(
        r["question_id"] for r in results if r["scores"]["final_correct"] is False
    )


def test_a_compiled_program_is_one_logged_model_that_its_evaluations_link_to(
    small_corpus, brain_server, tmp_path
):
    corpus, index = small_corpus
    out = tmp_path / "compiled.json"
    argv = ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out),
            "--optimizer", "bootstrap", "--limit", "2", "--max-demos", "1", "--threshold", "0"]  # fmt: skip
    assert compile_cli.main(argv) == 0
    meta = json.loads(out.with_suffix(".meta.json").read_text(encoding="utf-8"))
    compile_run = _client().get_run(meta["mlflow_run_id"])
    experiment = compile_run.info.experiment_id
    program_hash = compile_run.data.tags["program_hash"]
    made = [m for m in _models(experiment) if m.source_run_id == compile_run.info.run_id]
    assert [m.name for m in made] == [f"bootstrap-{program_hash}"], "one model, no autolog 'dspy' dummies"
    model = made[0]
    assert model.tags["program_hash"] == program_hash and str(model.status) in (
        "READY",
        "LoggedModelStatus.READY",
    )
    assert model.params["optimizer"] == "bootstrap" and model.params["train_examples"] == "2"
    files = {f.path for f in _client().list_logged_model_artifacts(model.model_id)}
    assert files == {"compiled.json", "compiled.meta.json"}
    dev = [m for m in mlflow.get_logged_model(model.model_id).metrics if m.key == "dev/metric"]
    assert [m.value for m in dev] == [meta["scores"]["dev_metric"]] and dev[0].dataset_name.endswith(" dev")
    assert model.model_id in [o.model_id for o in compile_run.outputs.model_outputs]

    # Two evaluations of it on two question sets: both runs name it as their input, and its figures are
    # kept per dataset, which is how the Models page ranks programs on one dataset.
    first = _evaluate(small_corpus, tmp_path / "all", "--program", str(out), "--no-autolog", "--split", "all")
    second = _evaluate(
        small_corpus, tmp_path / "test", "--program", str(out), "--no-autolog", "--split", "test"
    )
    for summary in (first, second):
        inputs = _client().get_run(summary["run_id"]).inputs.model_inputs
        assert [i.model_id for i in inputs] == [model.model_id]
    scored = mlflow.get_logged_model(model.model_id).metrics
    final = {m.dataset_name: m.value for m in scored if m.key == "acc/final"}
    assert final == {
        "dataset.json all": first["final_accuracy"],
        "dataset.json test": second["final_accuracy"],
    }
    assert not [m for m in scored if m.key.startswith(("budget/", "answers/", "program/"))], "only scores"
    assert [m.name for m in _models(experiment) if m.tags.get("program_hash") == program_hash] == [model.name]
