"""Ctrl-C on `python -m evaluate.run` with tracing and progress bars on (issue 31 item 5): how long to exit?

    .venv/bin/python -m bench.interrupt --demo DIR [--limit 40] [--after 6] [--latency 0.2]

DIR holds the demo corpus and index (DIR/corpus, DIR/index). The rule-based demo reader answers on
127.0.0.1, each call after --latency seconds; `evaluate.run --concurrency 2` (MLflow tracing on, the
default) is sent SIGINT, as a terminal's Ctrl-C, once --after answers are on disk. Printed: seconds from
the signal to the process's end, the answers kept (answers.jsonl) against the answer requests the reader
had answered by then, and whether the last line of stderr is the "interrupted" line alone (no progress
bar drawn over or after it).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    from fakes.brain import Brain
    from fakes.server import FakeLMServer

    p = argparse.ArgumentParser(prog="bench/interrupt.py", description=__doc__.splitlines()[0])
    p.add_argument("--demo", required=True)
    p.add_argument("--limit", type=int, default=40)
    p.add_argument("--after", type=int, default=6, help="answers on disk before the Ctrl-C (default 6)")
    p.add_argument("--latency", type=float, default=0.2)
    args = p.parse_args(argv)
    demo = Path(args.demo)
    with (
        tempfile.TemporaryDirectory(prefix="interrupt-") as tmp,
        FakeLMServer(Brain(), latency=args.latency) as server,
    ):
        out = Path(tmp) / "run"
        env = {
            **os.environ, **server.env(), "COLLATE_CACHE": "false", "PYTHONUNBUFFERED": "1",
            "PYTHONPATH": str(ROOT), "MLFLOW_TRACKING_URI": f"sqlite:///{tmp}/mlflow.db",
        }  # fmt: skip
        proc = subprocess.Popen(
            [sys.executable, "-m", "evaluate.run", "--dataset", str(demo / "corpus" / "dataset.json"),
             "--index", str(demo / "index"), "--out", str(out), "--limit", str(args.limit),
             "--concurrency", "2", "--no-judge"],
            env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
        )  # fmt: skip
        journal = out / "answers.jsonl"
        while proc.poll() is None:
            if journal.is_file() and len(journal.read_bytes().splitlines()) >= args.after:
                break
            time.sleep(0.05)
        answered = server.calls_by_kind(answered_only=True)["answer"]
        os.killpg(proc.pid, signal.SIGINT)
        start = time.monotonic()
        _, err = proc.communicate(timeout=300)
        took = time.monotonic() - start
        kept = len(journal.read_bytes().splitlines()) if journal.is_file() else 0
    text = err.decode(errors="replace")
    last = text.rstrip("\n").rsplit("\n", 1)[-1]
    own_line = last.startswith("interrupted:") and "\r" not in last
    print(
        f"exit {proc.returncode} {took:.1f} s after Ctrl-C; answers kept {kept} "
        f"(answer requests answered when the signal was sent: {answered}); "
        f"interrupted line on its own line: {'yes' if own_line else 'NO'}: {last[-160:]!r}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
