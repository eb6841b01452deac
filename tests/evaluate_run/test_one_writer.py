"""Issue 33 item 4: one writer per run folder, as the build's lock.

Before: two identical `evaluate.run --out SAME` started 1 s apart both asked every question (42 LM calls
instead of 21), wrote every journal line twice, logged two MLflow runs, and summary.json was whichever
finished last. Now the second exits 75 at once, naming the other process, before any LM call.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from collate import run as collate_run
from evaluate import tracking
from evaluate.runs.run_lock import LOCK_FILE

ROOT = Path(__file__).resolve().parents[2]
HOLD = (
    "import sys, time; from pathlib import Path; from evaluate.runs.run_lock import run_folder_lock\n"
    "with run_folder_lock(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(600)\n"
)


def _run(small_corpus, out) -> int:
    corpus, index = small_corpus
    return collate_run.main(
        ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out),
         "--limit", "2", "--no-progress", "--no-autolog", "--no-judge"]
    )  # fmt: skip


def _holder(out: Path) -> subprocess.Popen:
    """Another process holding the folder, as a run that is answering would."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(out)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


def test_a_second_run_into_a_held_folder_exits_75_naming_the_other_before_any_call(
    small_corpus, brain_server, tmp_path, capsys
):
    out = tmp_path / "run"
    holder = _holder(out)
    try:
        before = {r.info.run_id for r in tracking.runs()}
        capsys.readouterr()
        code = _run(small_corpus, out)
        err = capsys.readouterr().err.strip()
    finally:
        holder.kill()
        holder.wait()
    assert code == 75 and err.count("\n") == 0  # before: 0, every question asked twice over
    assert err.startswith(f"error: another run (pid {holder.pid}) is writing --out {out}")
    assert brain_server.calls == 0 and {r.info.run_id for r in tracking.runs()} == before
    assert not (out / "answers.jsonl").exists() and not (out / "summary.json").exists()


def test_a_killed_run_holds_nothing_and_the_next_run_takes_the_folder(
    small_corpus, brain_server, tmp_path, capsys
):
    out = tmp_path / "run"
    holder = _holder(out)
    holder.send_signal(signal.SIGKILL)  # kill -9: no cleanup runs, the kernel drops the flock
    holder.wait()
    assert (out / LOCK_FILE).exists()
    started = time.monotonic()
    assert _run(small_corpus, out) == 0
    assert time.monotonic() - started < 600
    assert (out / "summary.json").is_file()
