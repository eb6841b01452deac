"""`python -m optimize.compile` end to end on the synthetic corpus with the rule-based brain.

Checks the saved program (whole Analyst, pinned predictor names), its sidecar, the LM call cap, and
the compile's MLflow run (params, metrics, artifacts, autolog's child runs) through MLflow's client.
"""

from __future__ import annotations

import json
from pathlib import Path

import dspy
import pytest
from mlflow.tracking import MlflowClient

from evaluate import run as evaluate_run
from evaluate import tracking
from evaluate.dataset import dataset_hash, load_dataset
from optimize import compile as compile_cli
from optimize.compile import CompileJob, analyst_without_fact_reuse, run_compile
from programs.runtime.settings import Settings
from retrievers.store import IndexStore
from tests.fakes.engine import brain_lm

PREDICTORS = ["planner.plan", "extractor.extract", "normalizer.normalize", "code_writer.write_code",
              "code_writer.fix_code", "answerer.answer"]  # fmt: skip


def _compile(small_corpus, out: Path, *extra: str) -> int:
    corpus, index = small_corpus
    return compile_cli.main(["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out),
                             *extra])  # fmt: skip


def test_bootstrap_compile_saves_a_loadable_program_a_sidecar_and_one_mlflow_run(
    small_corpus, brain_server, tmp_path, capsys
):
    out = tmp_path / "compiled.json"
    assert _compile(small_corpus, out, "--optimizer", "bootstrap", "--limit", "2", "--max-demos", "1",
                    "--threshold", "0") == 0, capsys.readouterr().err
    assert "saved" in capsys.readouterr().out

    state = json.loads(out.read_text())
    assert [k for k in state if k != "metadata"] == PREDICTORS
    assert sum(len(state[p]["demos"]) for p in PREDICTORS) > 0, "bootstrap kept no demo at threshold 0"

    meta = json.loads((tmp_path / "compiled.meta.json").read_text())
    items = load_dataset(small_corpus[0] / "dataset.json")
    assert meta["format_version"] == 1 and meta["optimizer"] == "bootstrap" and meta["stage"] == "program"
    assert meta["dataset_hash"] == dataset_hash(items)
    assert meta["settings"]["lm"] == "openai/fake-brain" and meta["settings"]["api_key"] == "***"
    assert meta["train_examples"] == 2 and meta["predictors"] == PREDICTORS
    assert 0 <= meta["scores"]["dev_metric"] <= 1 and meta["budget"]["lm_calls"] > 0

    client = MlflowClient(tracking.tracking_uri())
    run = client.get_run(meta["mlflow_run_id"])
    assert run.info.status == "FINISHED" and run.data.tags["kind"] == "compile"
    assert run.data.params["optimizer"] == "bootstrap" and run.data.params["lm"] == "openai/fake-brain"
    assert run.data.params["dataset_hash"] == meta["dataset_hash"], "the run and the sidecar name one dataset"
    assert {"lm_calls", "dev_metric", "budget_exhausted"} <= set(run.data.metrics)
    artifacts = {a.path for a in client.list_artifacts(run.info.run_id)}
    assert {"compiled.json", "compiled.meta.json", "program"} <= artifacts, artifacts
    # mlflow.dspy.autolog(log_compiles=True) hooked the optimizer: its best program and trainset are in the run.
    assert {"best_model.json", "trainset.json"} <= artifacts

    # The compiled file is what evaluate.run takes.
    assert evaluate_run.main(["--dataset", str(small_corpus[0] / "dataset.json"), "--index", str(small_corpus[1]),
                              "--program", str(out), "--limit", "1", "--out", str(tmp_path / "eval"),
                              "--no-progress", "--no-autolog"]) == 0  # fmt: skip


def test_max_calls_caps_the_compile_and_still_saves(small_corpus, brain_server, tmp_path):
    out = tmp_path / "capped.json"
    assert _compile(small_corpus, out, "--optimizer", "bootstrap", "--limit", "3", "--max-calls", "5",
                    "--no-autolog") == 0
    meta = json.loads((tmp_path / "capped.meta.json").read_text())
    assert meta["budget"]["lm_calls"] == 5 and meta["budget"]["refused_calls"] > 0
    assert meta["budget"]["budget_exhausted"] and "budget" in meta["stopped_early"]
    assert brain_server.calls <= 5, "the fake endpoint saw more calls than the cap"
    assert out.is_file()


def test_extractor_stage_tunes_only_the_extractor(small_corpus, tmp_path):
    dspy.configure(lm=brain_lm())
    settings = Settings(lm="fake/brain")
    program = analyst_without_fact_reuse(settings, IndexStore.open(small_corpus[1]))
    items = load_dataset(small_corpus[0] / "dataset.json")
    result = run_compile(program, items, settings, CompileJob("bootstrap", stage="extractor", limit=3, threshold=0.0),
                         tmp_path / "x.json", autolog=False)  # fmt: skip
    state = json.loads((tmp_path / "x.json").read_text())
    assert len(state["extractor.extract"]["demos"]) > 0
    assert all(not state[p]["demos"] for p in PREDICTORS if p != "extractor.extract")
    demo = state["extractor.extract"]["demos"][0]
    assert {"document", "field_specs", "passages", "values"} <= set(demo)
    assert result.meta["scores"]["metric"] == "cell_accuracy"


def test_no_lm_and_bad_arguments_exit_2_with_the_fix(small_corpus, tmp_path, capsys, monkeypatch):
    assert _compile(small_corpus, tmp_path / "c.json", "--optimizer", "bootstrap") == 2
    assert "COLLATE_LM" in capsys.readouterr().err
    monkeypatch.setenv("COLLATE_LM", "openai/never-called")
    assert _compile(small_corpus, tmp_path / "c.json", "--optimizer", "adam") == 2
    assert "invalid choice" in capsys.readouterr().err
    assert _compile(small_corpus, tmp_path / "c.json", "--optimizer", "bootstrap", "--max-calls", "0") == 2
    assert "--max-calls" in capsys.readouterr().err
    assert compile_cli.main(["--dataset", str(tmp_path / "none.json"), "--index", str(small_corpus[1]),
                             "--optimizer", "mipro", "--out", str(tmp_path / "c.json")]) == 2
    assert "no such dataset" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("optimizer", ["mipro", "gepa", "simba"])
def test_other_optimizers_compile_the_extractor(small_corpus, tmp_path, optimizer):
    dspy.configure(lm=brain_lm())
    settings = Settings(lm="fake/brain")
    program = analyst_without_fact_reuse(settings, IndexStore.open(small_corpus[1]))
    items = load_dataset(small_corpus[0] / "dataset.json")
    result = run_compile(program, items, settings, CompileJob(optimizer, stage="extractor", limit=4, max_calls=200),
                         tmp_path / "x.json", autolog=False)  # fmt: skip
    assert (tmp_path / "x.json").is_file() and result.meta["optimizer"] == optimizer
    assert result.meta["budget"]["lm_calls"] <= 200
