"""Issue 33 item 2: with bubblewrap missing (default settings) a run is refused before anything is spent.

Before: every question paid its planning, extraction, code and answer calls, its "answer" was the
sandbox's refusal text, and `collate run` reported 3/3 answered, 0 errors, exit 0, the console never
naming the sandbox. Now the isolation check runs first (exit 2 with the fix, no LM call at all), and a
refusal reached later (the machine changed after the check) fails that question, naming the sandbox.
"""

from __future__ import annotations

import pytest

from collate import ask as collate_ask
from collate import run as collate_run
from evaluate import tracking
from fakes.brain import Brain
from fakes.server import FakeLMServer
from programs.sandbox import isolation, policy

MISSING = "bubblewrap (bwrap) is not installed (apt-get install bubblewrap)"


@pytest.fixture
def no_bwrap(monkeypatch):
    monkeypatch.setattr(isolation, "bwrap_problem", lambda: MISSING)
    monkeypatch.delenv(policy.SANDBOX_ENV, raising=False)


@pytest.fixture
def server(monkeypatch):
    with FakeLMServer(Brain()) as server:
        for name, value in {**server.env(), "COLLATE_CACHE": "false"}.items():
            monkeypatch.setenv(name, value)
        yield server


def _run(small_corpus, out) -> int:
    corpus, index = small_corpus
    return collate_run.main(
        ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out),
         "--limit", "2", "--no-progress", "--no-autolog", "--no-judge"]
    )  # fmt: skip


def test_a_run_without_isolation_is_one_line_and_exit_2_before_any_lm_call(
    small_corpus, no_bwrap, server, tmp_path, capsys
):
    before = {r.info.run_id for r in tracking.runs()}
    capsys.readouterr()
    code = _run(small_corpus, tmp_path / "run")
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0
    assert err.startswith("error: sandbox check failed:") and "bubblewrap" in err
    assert "apt-get install bubblewrap" in err and "COLLATE_SANDBOX=off" in err  # the fix, and the way around
    assert sum(server.calls_by_kind().values()) == 0  # not even the LM's 1-token check
    assert {r.info.run_id for r in tracking.runs()} == before
    assert not (tmp_path / "run" / "answers.jsonl").exists()


def test_ask_without_isolation_is_refused_before_any_lm_call(small_corpus, no_bwrap, server, capsys):
    code = collate_ask.main(["--index", str(small_corpus[1]), "--no-progress", "which bank is largest?"])
    err = capsys.readouterr().err
    assert code == 2 and "sandbox check failed" in err and "COLLATE_SANDBOX=off" in err
    assert sum(server.calls_by_kind().values()) == 0


def test_the_flat_baseline_runs_no_code_and_is_not_refused(small_corpus, no_bwrap, server, capsys):
    collate_ask.main(
        ["--index", str(small_corpus[1]), "--no-progress", "--baseline", "flat", "which bank is largest?"]
    )
    assert "sandbox check failed" not in capsys.readouterr().err


def test_a_refusal_reached_after_the_check_fails_its_questions_and_names_the_sandbox(
    small_corpus, no_bwrap, server, tmp_path, capsys, monkeypatch
):
    monkeypatch.setattr(collate_run, "check_isolation", lambda settings: None)  # bwrap went away after it
    code = _run(small_corpus, tmp_path / "run")
    captured = capsys.readouterr()
    assert code == 1  # every question failed: before, 2/2 "answered", exit 0
    assert "coverage 0/2 answered, 2 failed" in captured.out
    assert "sandbox refused" in captured.err
    kinds = server.calls_by_kind()
    assert (
        kinds["plan"] == 2 and kinds["write_code"] == 0 and kinds["answer"] == 0
    )  # no code asked that could never run, no answer paid


def test_a_compile_without_isolation_is_refused_before_any_lm_call(
    small_corpus, no_bwrap, server, tmp_path, capsys
):
    from collate import compile as collate_compile

    corpus, index = small_corpus
    code = collate_compile.main(
        ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--optimizer", "bootstrap",
         "--out", str(tmp_path / "compiled.json"), "--limit", "2", "--no-autolog"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "sandbox check failed" in err and "COLLATE_SANDBOX=off" in err
    assert sum(server.calls_by_kind().values()) == 0 and not (tmp_path / "compiled.json").exists()
