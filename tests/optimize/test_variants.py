"""Issue 12 items 3 and 6: evaluation runs told apart by variant and linked to their compile; trials nested; spans.

One compile (bootstrap) and three evaluations (uncompiled, the compiled file, flat-RAG) through the
command lines, against the fake LM server; then what MLflow's client reads back.
"""

from __future__ import annotations

import json

from mlflow.tracking import MlflowClient

from evaluate import run as evaluate_run
from evaluate import tracking
from evaluate.dataset import dataset_hash, load_dataset
from optimize import compile as compile_cli
from optimize.optimizers import OptimizerOptions
from programs import compiled
from tests.optimize.one_call import compile_with


def _evaluate(small_corpus, out, *extra: str) -> dict:
    corpus, index = small_corpus
    assert (
        evaluate_run.main(
            [
                "--dataset",
                str(corpus / "dataset.json"),
                "--index",
                str(index),
                "--limit",
                "1",
                "--out",
                str(out),
                "--no-progress",
                "--no-judge",
                *extra,
            ]
        )
        == 0
    )
    return json.loads((out / "summary.json").read_text())


def test_compiled_uncompiled_and_flat_rag_are_named_rows_linked_to_their_compile(
    small_corpus, brain_server, tmp_path
):
    corpus, index = small_corpus
    compiled_file = tmp_path / "compiled.json"
    assert (
        compile_cli.main(
            [
                "--dataset",
                str(corpus / "dataset.json"),
                "--index",
                str(index),
                "--out",
                str(compiled_file),
                "--optimizer",
                "bootstrap",
                "--limit",
                "2",
                "--max-demos",
                "1",
                "--threshold",
                "0",
                "--no-autolog",
            ]
        )
        == 0
    )
    meta = json.loads((tmp_path / "compiled.meta.json").read_text())
    client = MlflowClient(tracking.tracking_uri())
    compile_run = client.get_run(meta["mlflow_run_id"])
    assert compile_run.data.tags["dataset_hash"] == meta["dataset_hash"]
    assert compile_run.data.tags["optimizer"] == "bootstrap" and compile_run.data.tags["stage"] == "program"

    runs = {
        "uncompiled": _evaluate(small_corpus, tmp_path / "u", "--no-autolog"),
        "compiled:bootstrap": _evaluate(
            small_corpus, tmp_path / "c", "--program", str(compiled_file)
        ),  # autolog on
        "flat-rag": _evaluate(small_corpus, tmp_path / "f", "--program", "flat-rag", "--no-autolog"),
    }
    evaluated_hash = dataset_hash(load_dataset(corpus / "dataset.json")[:1])
    hashes = {}
    for variant, summary in runs.items():
        run = client.get_run(summary["run_id"])
        tags = run.data.tags
        hashes[variant] = tags["program_hash"]
        # the run name says what ran: variant, program hash, split and n
        assert summary["variant"] == variant and run.info.run_name == f"{variant} {hashes[variant]} all n=1"
        assert (
            tags["variant"] == variant and tags["dataset_hash"] == evaluated_hash and tags["split"] == "all"
        )
        assert tags["kind"] == "evaluation", "the headline view lists evaluation runs only"
        assert tags["mlflow.note.content"].startswith("final "), "the run's description shows no headline"
        (dataset,) = run.inputs.dataset_inputs  # the default runs view's Dataset column: name, digest, split
        # the name carries the split too: the Models page shows only the name beside a model's scores
        assert (dataset.dataset.name, dataset.dataset.digest) == ("dataset.json all", evaluated_hash[:8])
        assert {t.key: t.value for t in dataset.tags}["mlflow.data.context"] == "all"
    assert (
        hashes["compiled:bootstrap"]
        == compiled.file_hash(compiled_file)
        == compile_run.data.tags["program_hash"]
    )
    assert len(set(hashes.values())) == 3, "the compile added demos: three different programs"
    compiled_tags = client.get_run(runs["compiled:bootstrap"]["run_id"]).data.tags
    assert compiled_tags["optimizer"] == "bootstrap" and compiled_tags["stage"] == "program"
    assert compiled_tags["compiled_from"] == compile_run.info.run_id
    assert compiled_tags["compiled_on_dataset"] == meta["dataset_hash"]
    for plain in ("uncompiled", "flat-rag"):
        tags = client.get_run(runs[plain]["run_id"]).data.tags
        assert tags["optimizer"] == "none" and tags["compiled_from"] == ""
    assert client.get_run(runs["flat-rag"]["run_id"]).data.tags["program"] == "flat-rag"

    # The compiled run's question is one trace: each document's extraction (the passages it read, the
    # facts it gave) and each sandbox run (its code) are spans of their own.
    spans = [
        s
        for t in client.search_traces(
            locations=[compile_run.info.experiment_id], run_id=runs["compiled:bootstrap"]["run_id"]
        )
        for s in t.data.spans
    ]
    extractions = [s for s in spans if s.name.startswith("extract ")]
    sandbox_runs = [s for s in spans if s.name.startswith("sandbox run")]
    assert extractions and sandbox_runs, sorted({s.name for s in spans})
    assert {"doc_id", "passages"} <= set(extractions[0].inputs) and "facts" in extractions[0].outputs
    assert "code" in sandbox_runs[0].inputs


def test_optimizer_trials_are_child_runs_of_the_compile(rule_lm, toy):
    train, val = toy["examples"](4), toy["examples"](8)[4:]
    options = OptimizerOptions(
        num_threads=1, extra={"auto": None, "num_candidates": 2}, compile_extra={"num_trials": 3}
    )
    with tracking.start_run("compile mipro (program)", experiment="t-trials") as run:
        with tracking.dspy_autolog():
            compile_with("mipro", toy["metric"], toy["program"](), train, val, options=options)
    client = MlflowClient(tracking.tracking_uri())
    every = client.search_runs([run.experiment_id])
    trials = [r for r in every if r.info.run_id != run.run_id]
    assert trials, "autolog logged no trial run"
    assert all(r.data.tags.get("mlflow.parentRunId") == run.run_id for r in trials), [
        r.info.run_name for r in trials
    ]
