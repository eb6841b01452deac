"""`python -m evaluate.demo`: prepares corpus + index once, then answers with an LM, or offline with the
demo reader when none is set (--no-reader: says how to set one)."""

from __future__ import annotations

import logging
import shutil
import socket
from pathlib import Path

import pytest

from collate import demo
from collate.stage_warnings import stage_warnings_to
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


def test_run_from_another_folder_it_prepares_the_folder_the_user_named(tmp_path, monkeypatch):
    """The steps run in the project's root: a relative --out must still mean the user's folder."""
    calls = []
    monkeypatch.setattr(demo, "run_step", lambda module, *args: calls.append(args))
    monkeypatch.chdir(tmp_path)
    demo.ensure_corpus(Path("demo") / "corpus")
    demo.ensure_index(Path("demo") / "corpus", Path("demo") / "index")
    paths = [
        demo.ROOT / a for args in calls for a in args if not a.startswith("--")
    ]  # as the child reads them
    assert paths == [
        tmp_path / "demo" / "corpus",
        tmp_path / "demo" / "corpus" / "catalog.jsonl",
        tmp_path / "demo" / "corpus" / "pdf",
        tmp_path / "demo" / "index",
    ]


def test_without_an_lm_and_no_reader_it_stops_after_preparing_and_says_how_to_set_one(
    small_corpus, tmp_path, capsys, monkeypatch
):
    out = _prepared_demo_folder(small_corpus, tmp_path)
    steps = _no_rebuild(monkeypatch)
    assert demo.main(["--out", str(out), "--no-reader"]) == 2
    captured = capsys.readouterr()
    assert steps == [], "corpus and index were there: nothing is regenerated"
    assert "already there" in captured.out
    assert "COLLATE_LM" in captured.err and "COLLATE_API_BASE=http://localhost" in captured.err
    assert "COLLATE_API_KEY=" in captured.err  # without it a local server's call fails 'Missing credentials'
    assert "sk-" in captured.err and "collate reader" in captured.err  # the hosted and offline ways


def test_without_an_lm_the_demo_reader_answers_offline_and_is_stopped_after(
    small_corpus, tmp_path, capsys, monkeypatch
):
    out = _prepared_demo_folder(small_corpus, tmp_path)
    _no_rebuild(monkeypatch)
    started = []
    real_start = demo.reader.start_reader

    def start_and_note():
        server = real_start()
        started.append((server, server.port))
        return server

    monkeypatch.setattr(demo.reader, "start_reader", start_and_note)
    before = {r.info.run_id for r in tracking.runs()}
    assert demo.main(["--out", str(out), "--limit", "2"]) == 0
    printed = capsys.readouterr().out
    assert "the demo reader answers" in printed and "not a language model" in printed
    assert "final accuracy" in printed and "process cell" in printed and "mlflow server" in printed
    assert "audit reports: " in printed and list((out / "runs").glob("*/questions/*/audit.html"))
    assert "flat-RAG baseline is skipped" in printed  # its prompt is not one the reader has rules for
    ((server, port),) = started
    assert server.calls > 0  # the answers came over HTTP, the path a model takes
    new = [r for r in tracking.runs() if r.info.run_id not in before]
    assert len(new) == 1 and new[0].data.params.get("lm") == "openai/collate-reader"
    with pytest.raises(OSError):  # stopped at the end: its port no longer answers
        socket.create_connection(("127.0.0.1", port), timeout=2)


def test_missing_parts_are_generated_by_the_project_clis(tmp_path, monkeypatch, capsys):
    steps = []

    def fake_step(module, *args):
        steps.append((module, args))
        target = tmp_path / "demo" / ("corpus" if module == "data.synth" else "index")
        target.mkdir(parents=True, exist_ok=True)

    monkeypatch.setattr(demo, "run_step", fake_step)
    assert demo.main(["--out", str(tmp_path / "demo"), "--no-reader"]) == 2
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
    assert "demo reader" not in printed  # COLLATE_LM is set: that model answers
    new = [r for r in tracking.runs() if r.info.run_id not in before]
    assert len(new) == 2 and all(r.data.metrics["answers/n"] == 2 for r in new)  # the program and flat RAG
    assert "compared: collate final accuracy" in printed and "; flat RAG final accuracy" in printed
    assert len(list((out / "runs").glob("*/agent_output.json"))) == 2


@pytest.mark.slow
def test_the_real_steps_run_once_and_are_skipped_the_second_time(tmp_path, capsys, monkeypatch):
    """The full default corpus + MiniLM index (minutes on 2 cores), then a second run in seconds."""
    out = tmp_path / "demo"
    assert demo.main(["--out", str(out), "--no-reader"]) == 2
    assert demo.corpus_ready(out / "corpus") and demo.index_ready(out / "index")
    steps = _no_rebuild(monkeypatch)
    assert demo.main(["--out", str(out), "--no-reader"]) == 2 and steps == []


def test_lm_flags_and_options_are_passed_on_to_evaluate_run(small_corpus, tmp_path, monkeypatch):
    out = _prepared_demo_folder(small_corpus, tmp_path)
    _no_rebuild(monkeypatch)
    seen, checked = [], []
    monkeypatch.setattr(demo, "preflight", lambda settings, stages: checked.append(settings.api_base))
    monkeypatch.setattr(demo.evaluate_run, "main", lambda argv, lm_checked, resume: seen.append(argv) or 0)
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
    argv, baseline = seen
    assert baseline[baseline.index("--program") + 1] == "flat-rag" and baseline[-4:] == argv[-4:]
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


def test_a_step_s_output_shows_as_it_comes_and_its_tail_names_the_failure(capsys):
    with pytest.raises(demo.StepFailed) as failed:
        demo.run_step("json.tool", "/no/such/file.json")
    assert "/no/such/file.json" in capsys.readouterr().err  # passed through, not swallowed
    assert "python -m json.tool failed (" in str(failed.value) and "/no/such/file.json" in str(failed.value)


def test_stage_warnings_go_to_the_run_folder_counted_and_errors_still_show(tmp_path):
    stream = tmp_path / "terminal.txt"
    with open(stream, "w", encoding="utf-8") as terminal:
        handler = logging.StreamHandler(terminal)
        logging.getLogger().addHandler(handler)
        try:
            with stage_warnings_to(tmp_path / "run" / "warnings.log") as kept:
                for i in range(30):
                    logging.getLogger("programs.stages.normalizer").warning("value_%d set to null: x", i)
                logging.getLogger("programs.stages.extractor").warning("d1: the reply left out a")
                logging.getLogger("programs.analyst").error("planning failed: unreachable")
                logging.getLogger("evaluate.matching.scoring").warning("judge failed on q1")
        finally:
            logging.getLogger().removeHandler(handler)
    shown = stream.read_text(encoding="utf-8")
    assert "set to null" not in shown and "left out" not in shown
    assert "planning failed" in shown and "judge failed" in shown  # errors and other layers still show
    kept_lines = (tmp_path / "run" / "warnings.log").read_text(encoding="utf-8").splitlines()
    assert len(kept_lines) == 31
    assert kept.summary() == (
        f"31 stage warnings (normalizer 30, extractor 1) are in {tmp_path / 'run' / 'warnings.log'}"
    )
    logging.getLogger("programs.stages.normalizer").warning("after")  # the filter is gone again
    assert len((tmp_path / "run" / "warnings.log").read_text(encoding="utf-8").splitlines()) == 31


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
