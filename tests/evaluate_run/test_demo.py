"""`python -m evaluate.demo`: prepares corpus + index once, then answers with an LM or says how to set one."""

from __future__ import annotations

import shutil

import pytest

from collate import demo
from evaluate import tracking


def _prepared_demo_folder(small_corpus, tmp_path):
    """A demo folder whose corpus and index already exist (copied from the session's small corpus)."""
    out = tmp_path / "demo"
    shutil.copytree(small_corpus[0], out / "corpus")
    shutil.copytree(small_corpus[1], out / "index")
    return out


def _no_rebuild(monkeypatch):
    calls = []
    monkeypatch.setattr(demo, "run_step", lambda module, *args: calls.append(module))
    return calls


def test_without_an_lm_it_stops_after_preparing_and_says_how_to_set_one(
    small_corpus, tmp_path, capsys, monkeypatch
):
    out = _prepared_demo_folder(small_corpus, tmp_path)
    steps = _no_rebuild(monkeypatch)
    assert demo.main(["--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert steps == [], "corpus and index were there: nothing is regenerated"
    assert "already there" in captured.out
    assert "COLLATE_LM" in captured.err and "COLLATE_API_BASE=http://localhost" in captured.err
    assert "sk-" in captured.err  # the hosted example


def test_missing_parts_are_generated_by_the_project_clis(tmp_path, monkeypatch, capsys):
    steps = []

    def fake_step(module, *args):
        steps.append((module, args))
        target = tmp_path / "demo" / ("corpus" if module == "data.synth" else "index")
        target.mkdir(parents=True, exist_ok=True)

    monkeypatch.setattr(demo, "run_step", fake_step)
    assert demo.main(["--out", str(tmp_path / "demo")]) == 2
    assert [m for m, _ in steps] == ["data.synth", "retrievers.build"]
    assert steps[0][1] == ("--out", str(tmp_path / "demo" / "corpus"))
    assert "--pdf-dir" in steps[1][1] and str(tmp_path / "demo" / "index") in steps[1][1]


def test_a_failing_step_is_reported_not_raised(tmp_path, monkeypatch, capsys):
    def broken(module, *args):
        raise demo.StepFailed(f"python -m {module} failed (1): disk full")

    monkeypatch.setattr(demo, "run_step", broken)
    assert demo.main(["--out", str(tmp_path / "demo")]) == 1
    assert "disk full" in capsys.readouterr().err


def test_with_an_lm_it_answers_scores_and_points_at_mlflow(
    small_corpus, brain_server, tmp_path, capsys, monkeypatch
):
    out = _prepared_demo_folder(small_corpus, tmp_path)
    _no_rebuild(monkeypatch)
    before = {r.info.run_id for r in tracking.runs()}
    assert demo.main(["--out", str(out), "--limit", "2"]) == 0
    printed = capsys.readouterr().out
    assert "final accuracy" in printed and tracking.tracking_uri() in printed and "mlflow server" in printed
    new = [r for r in tracking.runs() if r.info.run_id not in before]
    assert len(new) == 1 and new[0].data.metrics["n"] == 2
    assert list((out / "runs").glob("*/agent_output.json"))


@pytest.mark.slow
def test_the_real_steps_run_once_and_are_skipped_the_second_time(tmp_path, capsys, monkeypatch):
    """The full default corpus + MiniLM index (minutes on 2 cores), then a second run in seconds."""
    out = tmp_path / "demo"
    assert demo.main(["--out", str(out)]) == 2
    assert demo.corpus_ready(out / "corpus") and demo.index_ready(out / "index")
    steps = _no_rebuild(monkeypatch)
    assert demo.main(["--out", str(out)]) == 2 and steps == []


def test_lm_flags_and_options_are_passed_on_to_evaluate_run(small_corpus, tmp_path, monkeypatch):
    out = _prepared_demo_folder(small_corpus, tmp_path)
    _no_rebuild(monkeypatch)
    seen, checked = [], []
    monkeypatch.setattr(demo, "preflight", lambda settings, stages: checked.append(settings.api_base))
    monkeypatch.setattr(demo.evaluate_run, "main", lambda argv, lm_checked: seen.append(argv) or 0)
    assert (
        demo.main(
            [
                "--out",
                str(out),
                "--limit",
                "0",
                "--concurrency",
                "3",
                "--lm",
                "openai/m",
                "--api-base",
                "http://127.0.0.1:9/v1",
            ]
        )
        == 0
    )
    (argv,) = seen
    assert (
        argv[argv.index("--lm") + 1] == "openai/m"
        and argv[argv.index("--api-base") + 1] == "http://127.0.0.1:9/v1"
    )
    assert "--api-key" not in argv, "a flag not given is not passed on (the environment's value stays)"
    assert (
        "--limit" not in argv and argv[argv.index("--concurrency") + 1] == "3"
    )  # --limit 0 = every question
    assert argv[argv.index("--dataset") + 1] == str(out / "corpus" / "dataset.json")
    assert checked == ["http://127.0.0.1:9/v1"]  # the LM was checked once, here, not again by the run


def test_a_dead_lm_is_one_line_and_exit_2_before_anything_is_prepared(tmp_path, monkeypatch, capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    steps = _no_rebuild(monkeypatch)
    code = demo.main(
        ["--out", str(tmp_path / "demo"), "--lm", "openai/m", "--api-base", closed, "--api-key", "x"]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and steps == [] and err.count("\n") == 0
    assert (
        err.startswith("error: LM check failed: cannot reach") and closed in err and "COLLATE_API_BASE" in err
    )
