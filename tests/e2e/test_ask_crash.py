"""kill -9 an ask at random points (issue 11): the fact store stays consistent and the next ask resumes.

The ask runs as a user runs it, a separate process talking HTTP to the fake LM server; each kill
lands among the extraction calls: after the server has received a randomly chosen one (the server
answers after a delay), never at a point guessed from the clock. Afterwards SQLite's
own integrity check passes, every stored fact is whole, and the next ask asks only what is missing.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

from fakes.brain import Brain
from fakes.corpus import ROOT
from fakes.server import FakeLMServer
from tests.e2e.test_ask_e2e import doc_ids


def ask_process(tiny, item, server, facts, run_dir):
    env = {**os.environ, **server.env(), "COLLATE_CACHE": "false", "COLLATE_CONCURRENCY": "1"}
    argv = [
        sys.executable,
        "-m",
        "collate.ask",
        "--index",
        str(tiny[1]),
        "--dataset",
        str(tiny[0] / "dataset.json"),
        "--question-id",
        item["question_id"],
        "--fact-store",
        str(facts),
        "--run-dir",
        str(run_dir),
        "--json",
        "--no-progress",
    ]
    return subprocess.Popen(
        argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def stored(facts) -> set[tuple[str, str]]:
    with sqlite3.connect(facts) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute("SELECT doc_id, field, disclosed, model, prompt_version FROM facts").fetchall()
    assert all(model and version for _, _, _, model, version in rows)  # no half-written fact
    return {(d, f) for d, f, *_ in rows}


def finished_documents(kept: set[tuple[str, str]]) -> set[str]:
    return {d for d, _ in kept if all((d, f) in kept for f in {f for _, f in kept})}


def wait_for_extraction_call(server, process, number: int) -> None:
    """Until the server has received extraction call `number` (counted over the server's life), so the
    kill lands among the extraction calls however slowly the machine starts the ask. The deadline only
    guards against a hang."""
    deadline = time.monotonic() + 240
    while server.calls_by_kind()["extract"] < number:
        assert process.poll() is None, (
            f"the ask ended before extraction call {number}: {process.stderr.read()}"
        )
        assert time.monotonic() < deadline, f"no extraction call {number} within 240 s"
        time.sleep(0.01)


def test_kill_9_during_extraction_leaves_a_consistent_store_and_the_next_ask_resumes(tiny, item, tmp_path):
    rng = random.Random(7)
    facts = tmp_path / "facts.sqlite"
    kept: set = set()
    with FakeLMServer(Brain(), latency=0.4) as server:
        for attempt in range(3):
            # A random one of the calls this ask still has to make (one at least per unfinished document).
            unfinished = len(doc_ids(item) - finished_documents(kept))
            if not unfinished:  # an earlier kill landed after the last extraction: none left to interrupt
                break
            call = server.calls_by_kind()["extract"] + 1 + rng.randrange(unfinished)
            process = ask_process(tiny, item, server, facts, tmp_path / f"run{attempt}")
            wait_for_extraction_call(server, process, call)
            time.sleep(rng.uniform(0, 0.5))  # a random point in that call (0.4 s of latency) or just after
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            now = stored(facts) if facts.exists() else set()
            assert kept <= now  # a kill never loses what an earlier run stored
            kept = now
        server.latency = 0.0  # the kills are over: no call of the last ask has a kill to land in
        before = server.calls_by_kind()["extract"]
        process = ask_process(tiny, item, server, facts, tmp_path / "final")
        out, err = process.communicate(timeout=300)
        asked = server.calls_by_kind()["extract"] - before
    assert process.returncode == 0, err
    assert '"answer"' in out
    assert asked <= len(doc_ids(item)) - len(finished_documents(kept))  # stored documents are not asked again
    assert {d for d, _ in stored(facts)} == doc_ids(item)
