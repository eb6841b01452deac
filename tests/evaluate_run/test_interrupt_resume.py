"""Issue 22 item 4: Ctrl-C in `python -m evaluate.run` keeps what was answered; the same command resumes.

Before: a 23-line traceback, the process waited for the question in flight (and ran every queued one)
before it died, and OUT held no answer at all (results.jsonl is written only at the end).

The interrupted command runs as a subprocess, as a user's terminal would run it, against the rule-based
fake LM served from this test process (the resume runs the same main(argv) in this process). The fake
stalls on the third question's final answer: with one question at a time, the first two are finished
(and on disk) when the stall begins, so the Ctrl-C lands at a known point. The stall outlasts the test's
patience, so an exit that waits for the blocked HTTP call fails the test.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from evaluate import run as run_command
from evaluate import tracking
from evaluate.dataset import load_dataset
from fakes.brain import Brain
from fakes.chat_format import call_kind
from fakes.server import FakeLMServer, message_text

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 5
STALLED = 2  # index of the question whose answer call hangs in the first run
STALL_SECONDS = 120.0  # longer than any wait below: a process that waits for it fails the test


class StallingBrain:
    """The brain, except that the answer call of one question blocks until released (or switched off)."""

    def __init__(self, question: str):
        self.brain = Brain()
        self.question = question
        self.stalling = True
        self.stalled = threading.Event()  # the stalled call has arrived
        self.release = threading.Event()

    def __call__(self, messages: list[dict], model: str) -> str:
        last = message_text(messages[-1]) if messages else ""
        if self.stalling and call_kind(messages) == "answer" and self.question in last:
            self.stalled.set()
            self.release.wait(STALL_SECONDS)
        return self.brain(messages, model)


def _command(small_corpus, out: Path) -> list[str]:
    corpus, index = small_corpus
    return [
        sys.executable, "-m", "evaluate.run", "--dataset", str(corpus / "dataset.json"), "--index",
        str(index), "--out", str(out), "--limit", str(LIMIT), "--concurrency", "1", "--no-progress",
        "--no-autolog", "--no-judge",
    ]  # fmt: skip


def _env(server: FakeLMServer) -> dict[str, str]:
    return {**os.environ, **server.env(), "COLLATE_CACHE": "false", "PYTHONUNBUFFERED": "1"}


def _asked(server: FakeLMServer, kind: str, questions: list[str]) -> list[int]:
    """How many `kind` calls the server received for each question (by its text in the prompt)."""
    with server._lock:
        sent = [r.last_message for r in server.records if r.kind == kind]
    return [sum(question in text for text in sent) for question in questions]


def _journal_ids(out: Path) -> list[str]:
    journal = out / "answers.jsonl"
    if not journal.is_file():
        return []
    return [json.loads(line)["question_id"] for line in journal.read_text(encoding="utf-8").splitlines()]


def test_ctrl_c_keeps_the_answers_in_one_line_and_the_same_command_resumes(
    small_corpus, tmp_path, monkeypatch, capsys
):
    tracking.use_store()  # the store exists: MLflow's "creating tables" lines are not the command's
    items = load_dataset(small_corpus[0] / "dataset.json")[:LIMIT]
    ids, questions = [i.question_id for i in items], [i.question for i in items]
    out = tmp_path / "run"
    responder = StallingBrain(questions[STALLED])
    with FakeLMServer(responder) as server:
        proc = subprocess.Popen(
            _command(small_corpus, out),
            cwd=ROOT,
            env=_env(server),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,  # its own process group: the Ctrl-C goes to it, as a terminal's does
        )
        try:
            assert responder.stalled.wait(240), proc.communicate(timeout=5)  # start-up only: a loaded machine
            os.killpg(proc.pid, signal.SIGINT)  # what the terminal does on Ctrl-C
            interrupted = time.monotonic()
            try:
                _, err = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                raise AssertionError(
                    "Ctrl-C did not stop the run within 30 s: it waits for the LM call in flight"
                ) from None
            took = time.monotonic() - interrupted
        finally:
            responder.release.set()
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        assert proc.returncode == 130, err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert err.strip() == (
            f"interrupted: {STALLED} of {LIMIT} answers kept in {out / 'answers.jsonl'}; "
            "run the same command to resume"
        )
        assert took < 20, f"{took:.1f} s from Ctrl-C to exit"
        assert _journal_ids(out) == ids[:STALLED], "the answers finished before Ctrl-C are on disk, in order"
        assert _asked(server, "plan", questions) == [1] * LIMIT
        assert _asked(server, "answer", questions) == [1, 1, 1, 0, 0], "a queued question ran after Ctrl-C"
        first = [r for r in tracking.runs() if r.data.tags.get("out") == str(out)]
        assert [r.info.status for r in first] == ["FAILED"], "the interrupted MLflow run is left RUNNING"
        assert "interrupted" in first[0].data.tags.get("failure", "")

        # The same command again: the two kept answers are not asked again, the other three are. In this
        # process (the Ctrl-C above is the subprocess this contract needs; a second Python start with
        # dspy, litellm and mlflow costs ~9 s of CPU): the same main(argv), the same environment.
        responder.stalling = False
        server.reset_counts()
        for name, value in _env(server).items():
            monkeypatch.setenv(name, value)
        capsys.readouterr()
        code = run_command.main(_command(small_corpus, out)[3:])
        resumed = capsys.readouterr().err
        assert code == 0, resumed
        assert _asked(server, "plan", questions) == [0, 0, 1, 1, 1]
        assert _asked(server, "answer", questions) == [0, 0, 1, 1, 1]
        assert server.calls_by_kind()["extract"] == 0, (
            "the stopped run's facts are reused, not extracted again"
        )
    assert f"resuming: {STALLED} of {LIMIT} questions already answered" in resumed

    rows = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [row["question_id"] for row in rows] == ids, "every question exactly once, in dataset order"
    assert all(row["answer"] and row["error"] is None for row in rows)
    assert all(row["scores"]["decided_by"] in ("matcher", "undecided") for row in rows)
    assert sorted(_journal_ids(out)) == sorted(ids)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["n"] == LIMIT and summary["resumed"] == STALLED and summary["errors"] == 0
    runs = [r for r in tracking.runs() if r.data.tags.get("out") == str(out)]
    assert sorted(r.info.status for r in runs) == ["FAILED", "FINISHED"]
    finished = next(r for r in runs if r.info.status == "FINISHED")
    assert finished.data.metrics["answers/n"] == LIMIT
