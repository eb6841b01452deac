"""Every patch of DSPy's or MLflow's internals (programs/lm/patches.py) held to the installed library.

A new DSPy or MLflow that moves or changes what a patch reaches into fails here, naming the patch,
instead of in the middle of a user's run (budgets that stop refusing, retries that wait a day, schemas
no longer sent, a capped compile that saves nothing)."""

from __future__ import annotations

import importlib
import inspect

import dspy
import pytest

from programs.lm import patches


def _target(module: str, path: str):
    found = importlib.import_module(module)
    for part in path.split("."):
        found = getattr(found, part)
    return found


@pytest.mark.parametrize("name", sorted(patches.TARGETS))
def test_every_target_is_in_the_installed_library(name):
    module, path = patches.TARGETS[name]
    assert _target(module, path) is not None, f"{name}: {module}.{path} is gone"


@pytest.mark.parametrize("library", sorted(patches.SUPPORTED))
def test_the_installed_versions_are_the_ones_the_patches_were_written_for(library):
    version = patches.installed(library)
    assert version.startswith(patches.SUPPORTED[library]), (
        f"{library} {version}: re-check every patch of programs/lm/patches.py against it, then widen SUPPORTED"
    )
    assert patches.missing_targets(library) == []


def test_the_signatures_the_patches_call_with():
    from dspy.clients import execution

    assert list(inspect.signature(execution._engine).parameters) == ["lm", "call", "asynchronous"]
    assert list(inspect.signature(execution.execute).parameters) == ["lm", "call"]
    assert list(inspect.signature(execution.aexecute).parameters) == ["lm", "call"]
    assert list(inspect.signature(execution._delay).parameters)[:2] in (
        ["exc", "attempt"],
        ["error", "attempt"],
    )
    assert list(inspect.signature(dspy.JSONAdapter._prepare_response_format).parameters) == [
        "self", "lm", "lm_kwargs", "signature"
    ]  # fmt: skip
    assert list(inspect.signature(dspy.Evaluate.__call__).parameters)[:4] == [
        "self",
        "program",
        "metric",
        "devset",
    ]
    import dspy.teleprompt.simba as simba

    assert list(inspect.signature(simba.wrap_program).parameters) == ["program", "metric"]


def test_the_patched_names_are_the_ones_dspy_calls():
    """A patch replaces a module attribute: DSPy must look it up there at call time, not hold its own copy."""
    from dspy.clients import execution
    from dspy.teleprompt import simba

    source = inspect.getsource(execution)
    assert "_engine(" in source and "_delay(" in source
    assert "wrap_program(" in inspect.getsource(simba.SIMBA.compile)
    assert "_prepare_response_format(" in inspect.getsource(dspy.JSONAdapter)


def test_request_hooks_hear_every_request_and_every_cache_hit(tmp_path):
    from fakes.engine import BrainEngine

    heard: list[str] = []
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=True)  # conftest turns it off again
    lm = dspy.LM("fake/patches", engine=BrainEngine(lambda messages, model: "ok"), cache=True)
    with patches.request_hooks(lambda lm: heard.append("request"), lambda: heard.append("cache hit")):
        lm(messages=[{"role": "user", "content": "the patches test, once"}])
        lm(messages=[{"role": "user", "content": "the patches test, once"}])
    lm(messages=[{"role": "user", "content": "the patches test, after"}])
    assert heard == ["request", "cache hit"]


def test_scoring_hooks_hear_a_completed_evaluation():
    heard = []

    class Echo(dspy.Module):
        def forward(self, question):
            return dspy.Prediction(answer=question)

    devset = [dspy.Example(question=q, answer=q).with_inputs("question") for q in ("a", "b")]
    metric = lambda example, prediction, trace=None: example.answer == prediction.answer  # noqa: E731
    with patches.scoring_hooks(lambda p, score, dev: heard.append((score, len(dev))), lambda p, s: None):
        dspy.Evaluate(devset=devset, metric=metric, num_threads=1, display_progress=False)(Echo())
    dspy.Evaluate(devset=devset, metric=metric, num_threads=1, display_progress=False)(Echo())
    assert heard == [(1.0, 2)]


def test_a_version_whose_targets_are_gone_is_refused_with_the_pin(monkeypatch):
    monkeypatch.setattr(patches, "installed", lambda library: "9.0.0")
    monkeypatch.setattr(patches, "missing_targets", lambda library: ["budgets: the cached path"])
    monkeypatch.setattr(patches, "_checked", {})
    with pytest.raises(RuntimeError, match=r"dspy 9.0.0 moved what collate patches .*install dspy 3.4.x"):
        patches.check("dspy")
