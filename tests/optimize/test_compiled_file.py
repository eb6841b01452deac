"""The compiled program file (programs/compiled.py): one format for the compile that writes it and every reader.

What it must say: which program it is (a short hash of its state: a compile that changed nothing
shows the uncompiled program's hash), which format it is in (another version is refused with the
fix), and where its compile's questions and index were (so `evaluate.run --program compiled.json`
needs nothing else; issue 21 part 6).
"""

from __future__ import annotations

import json

import dspy
import pytest
from mlflow.tracking import MlflowClient

from evaluate import run as evaluate_run
from evaluate import tracking
from optimize.compiler import analyst_without_fact_reuse
from programs import compiled
from programs.lm.settings import Settings
from retrievers.indexing.store import IndexStore
from signatures.errors import BadInput


def _predict_with_a_demo() -> dspy.Module:
    program = dspy.Predict("question -> answer")
    program.demos = [dspy.Example(question="q", answer="a")]
    return program


def test_the_hash_of_a_program_and_of_its_saved_file_agree_and_move_with_its_demos(tmp_path):
    program = _predict_with_a_demo()
    sidecar = compiled.save(program, tmp_path / "p.json", {"optimizer": "bootstrap"})
    assert sidecar == tmp_path / "p.meta.json" and json.loads(sidecar.read_text())["format_version"] == 1
    assert compiled.file_hash(tmp_path / "p.json") == compiled.program_hash(program)
    assert len(compiled.program_hash(program)) == compiled.HASH_CHARS
    saved = json.loads((tmp_path / "p.json").read_text())
    saved["metadata"] = {"dependency_versions": {"dspy": "9.9"}}  # another DSPy saved the same state
    (tmp_path / "p.json").write_text(json.dumps(saved))
    assert compiled.file_hash(tmp_path / "p.json") == compiled.program_hash(program)
    program.demos.append(dspy.Example(question="q2", answer="b"))
    assert compiled.program_hash(program) != compiled.file_hash(tmp_path / "p.json")


def test_an_unchanged_analyst_saved_and_loaded_keeps_the_uncompiled_hash(small_corpus, tmp_path):
    settings = Settings(lm="fake/x")
    uncompiled = analyst_without_fact_reuse(settings, IndexStore.open(small_corpus[1]))
    compiled.save(uncompiled, tmp_path / "same.json", {})
    fresh = compiled.load(
        analyst_without_fact_reuse(settings, IndexStore.open(small_corpus[1])), tmp_path / "same.json"
    )
    assert (
        compiled.program_hash(fresh)
        == compiled.file_hash(tmp_path / "same.json")
        == compiled.program_hash(uncompiled)
    )


def test_a_sidecar_of_another_format_version_is_refused_naming_the_fix(
    small_corpus, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("COLLATE_LM", "openai/never-called")
    out = tmp_path / "old.json"
    compiled.save(_predict_with_a_demo(), out, {})
    meta = json.loads(compiled.sidecar_path(out).read_text())
    compiled.sidecar_path(out).write_text(json.dumps({**meta, "format_version": 99}))
    with pytest.raises(BadInput, match="format version 99.*recompile it with collate compile"):
        compiled.load(_predict_with_a_demo(), out)
    corpus, index = small_corpus
    argv = ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--program", str(out)]
    assert evaluate_run.main([*argv, "--out", str(tmp_path / "run")]) == 2
    assert "recompile it with collate compile" in capsys.readouterr().err


def test_program_alone_evaluates_its_compiles_held_out_questions_on_its_index(
    small_corpus, brain_server, tmp_path, capsys
):
    corpus, index = small_corpus
    out = tmp_path / "compiled.json"
    program = analyst_without_fact_reuse(Settings(lm="fake/x"), IndexStore.open(index))
    recorded = {"dataset": str(corpus / "dataset.json"), "index": str(index), "seed": 0}
    compiled.save(program, out, {"optimizer": "bootstrap", "stage": "program", **recorded})
    args = ["--program", str(out), "--limit", "1", "--no-judge", "--no-progress", "--no-autolog"]
    assert evaluate_run.main([*args, "--out", str(tmp_path / "run")]) == 0, capsys.readouterr().err
    assert f"--dataset {recorded['dataset']}, --index {index}" in capsys.readouterr().err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    run = MlflowClient(tracking.tracking_uri()).get_run(summary["run_id"])
    assert run.data.tags["split"] == "test", "the compile trained on train: its file is evaluated on test"
    assert run.data.tags["dataset"] == recorded["dataset"] and run.data.tags["index"] == str(index)
    assert run.info.run_name == f"compiled:bootstrap {compiled.file_hash(out)} test n=1"

    # A sidecar that recorded no dataset: the flags are named, nothing runs.
    compiled.save(program, tmp_path / "bare.json", {"optimizer": "bootstrap"})
    assert evaluate_run.main(["--program", str(tmp_path / "bare.json"), "--out", str(tmp_path / "r2")]) == 2
    assert "--dataset and --index needed" in capsys.readouterr().err
