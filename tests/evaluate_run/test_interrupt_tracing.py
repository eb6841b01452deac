"""Issue 31 item 5: Ctrl-C on `python -m evaluate.run` with tracing and progress bars on (the defaults).

Before: the process took ~11 s to end (the queued MLflow traces were exported first), the progress bar
ran on meanwhile (6 to 18 of 40), an answer that came back while stopping was thrown away, and the
"interrupted" line was printed at the end of the bar's line. Now no new LM request is sent after the
Ctrl-C, an answer already in flight that comes back within the grace is kept, the bars are closed
first and the process ends at once after.

The command runs as a subprocess against the rule-based fake served from this test process. With two
questions at a time, the answer calls of questions 1 and 2 stall: question 2's is let go just after
the Ctrl-C (an answer arriving while stopping), question 1's never comes back in time.
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

from evaluate import tracking
from evaluate.dataset import load_dataset
from fakes.brain import Brain
from fakes.chat_format import call_kind
from fakes.server import FakeLMServer, message_text

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 5
NEVER, LATE = 1, 2  # questions whose answer call stalls: until the test ends / until just after Ctrl-C
STALL_SECONDS = 120.0


class Stalling:
    def __init__(self, questions: list[str]):
        self.brain = Brain()
        self.questions = questions
        self.arrived = {NEVER: threading.Event(), LATE: threading.Event()}
        self.release = {NEVER: threading.Event(), LATE: threading.Event()}

    def __call__(self, messages: list[dict], model: str) -> str:
        if call_kind(messages) == "answer":
            last = message_text(messages[-1])
            for number in (NEVER, LATE):
                if self.questions[number] in last:
                    self.arrived[number].set()
                    self.release[number].wait(STALL_SECONDS)
        return self.brain(messages, model)


def test_ctrl_c_with_tracing_ends_at_once_keeps_a_late_answer_and_prints_on_its_own_line(
    small_corpus, tmp_path
):
    tracking.use_store()  # the store exists: MLflow's "creating tables" lines are not the command's
    corpus, index = small_corpus
    items = load_dataset(corpus / "dataset.json")[:LIMIT]
    ids, questions = [i.question_id for i in items], [i.question for i in items]
    out = tmp_path / "run"
    responder = Stalling(questions)
    with FakeLMServer(responder) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "evaluate.run", "--dataset", str(corpus / "dataset.json"), "--index",
             str(index), "--out", str(out), "--limit", str(LIMIT), "--concurrency", "2", "--no-judge"],
            cwd=ROOT,
            env={**os.environ, **server.env(), "COLLATE_CACHE": "false", "PYTHONUNBUFFERED": "1"},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )  # fmt: skip
        try:
            for number in (NEVER, LATE):
                assert responder.arrived[number].wait(240), proc.communicate(timeout=5)
            os.killpg(proc.pid, signal.SIGINT)
            interrupted = time.monotonic()
            time.sleep(0.2)
            responder.release[LATE].set()  # its answer comes back while the run is stopping
            _, err = proc.communicate(timeout=60)
            took = time.monotonic() - interrupted
        finally:
            for event in responder.release.values():
                event.set()
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        sent_answers = [
            sum(q in r.last_message for r in server.records if r.kind == "answer") for q in questions
        ]
    assert proc.returncode == 130, err
    kept = [json.loads(line)["question_id"] for line in (out / "answers.jsonl").read_text().splitlines()]
    assert kept == [ids[0], ids[LATE]], err
    assert sent_answers[3:] == [0, 0], "a question's request was sent after Ctrl-C"
    line = (
        f"interrupted: 2 of {LIMIT} answers kept in {out / 'answers.jsonl'}; run the same command to resume"
    )
    assert "questions:" in err and "documents:" in err, "the progress bars were on"
    assert err.endswith("\n" + line + "\n"), (
        f"not on a line of its own, or a bar drawn after it: {err[-400:]!r}"
    )
    assert "Traceback" not in err
    # 2 s on an idle machine (bench/README.md); the bound here leaves room for a loaded one
    assert took < 8, f"{took:.1f} s from Ctrl-C to exit"
    runs = [r for r in tracking.runs() if r.data.tags.get("out") == str(out)]
    assert [r.info.status for r in runs] == ["FAILED"]
