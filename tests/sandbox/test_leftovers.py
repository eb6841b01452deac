"""Issue 33 item 12: `kill -9` of a run left collate-sandbox-* folders in the temp folder. The next run
removes its own stale ones, by a marker it owns (programs/sandbox/leftovers.py), never another user's
nor one whose run is alive."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from programs.sandbox import leftovers

ROOT = Path(__file__).resolve().parents[2]
WAITING = (
    "from programs.sandbox import prepare\n"
    "import time\n"
    "run = prepare([{'v': 1}])\n"  # a warm sandbox: its folder exists while it waits for code
    "print('ready', flush=True)\n"
    "time.sleep(600)\n"
)
ONE_RUN = (
    "from programs.sandbox import run_code\nprint(run_code('print(len(df))', [{'v': 1}], 20.0).stdout)\n"
)


def _python(code: str, tmp: Path, **kwargs) -> subprocess.Popen:
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, text=True, **kwargs)


def _folders(tmp: Path) -> list[Path]:
    return sorted(tmp.glob(f"{leftovers.PREFIX}*"))


def test_the_folders_a_killed_run_left_are_removed_by_the_next_run(tmp_path):
    killed = _python(WAITING, tmp_path, stdout=subprocess.PIPE)
    try:
        assert killed.stdout is not None and killed.stdout.readline().strip() == "ready"
        for _ in range(100):  # the watcher thread makes the folder just after prepare() returns
            if _folders(tmp_path) and (_folders(tmp_path)[0] / leftovers.MARKER).exists():
                break
            subprocess.run(["sleep", "0.1"])
    finally:
        killed.send_signal(signal.SIGKILL)
        killed.wait()
    left = _folders(tmp_path)
    assert len(left) == 1 and (left[0] / "input").is_dir()  # what kill -9 leaves
    nxt = _python(ONE_RUN, tmp_path, stdout=subprocess.PIPE)
    out, _ = nxt.communicate(timeout=300)
    assert out.strip() == "1"
    assert _folders(tmp_path) == []  # before the fix: the killed run's folder stayed


def _folder(tmp: Path, name: str, marker: bool = True) -> Path:
    folder = tmp / f"{leftovers.PREFIX}{name}"
    (folder / "input").mkdir(parents=True)
    if marker:
        (folder / leftovers.MARKER).write_text("1\n")
    return folder


def test_a_sweep_removes_only_this_user_s_stale_marked_folders(tmp_path):
    stale = _folder(tmp_path, "stale")
    unmarked = _folder(tmp_path, "unmarked", marker=False)  # being made, or not ours to judge
    alive = _folder(tmp_path, "alive")
    holder = os.open(alive / leftovers.MARKER, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)  # its run holds it (another descriptor, as another process would)
    linked = tmp_path / f"{leftovers.PREFIX}linked"
    linked.mkdir()
    (linked / leftovers.MARKER).symlink_to(stale / leftovers.MARKER)
    other = None
    if os.geteuid() == 0:
        other = _folder(tmp_path, "other-user")
        os.chown(other, 65534, 65534)
        os.chown(other / leftovers.MARKER, 65534, 65534)
    unrelated = tmp_path / "collate-other-thing"
    unrelated.mkdir()
    try:
        assert leftovers.sweep(tmp_path) == 1
    finally:
        os.close(holder)
    assert not stale.exists()
    assert unmarked.exists() and alive.exists() and linked.exists() and unrelated.exists()
    assert other is None or other.exists()


def test_a_running_sandbox_s_folder_survives_a_sweep(tmp_path):
    folder = tmp_path / f"{leftovers.PREFIX}live"
    folder.mkdir()
    mark = leftovers.claim(folder)
    try:
        assert (folder / leftovers.MARKER).read_text().strip() == str(os.getpid())
        assert leftovers.sweep(tmp_path) == 0 and folder.exists()
    finally:
        os.close(mark)
    assert leftovers.sweep(tmp_path) == 1 and not folder.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a folder of another user")
def test_another_user_s_folder_is_never_opened(tmp_path):
    other = _folder(tmp_path, "theirs")
    os.chown(other, 65534, 65534)
    assert leftovers.sweep(tmp_path) == 0 and (other / leftovers.MARKER).exists()
