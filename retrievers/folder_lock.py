"""One writer per folder: an flock on a file in it, refused at once when another live process holds it.

Used by the index build (<index>/.build.lock, retrievers.building.lock) and by a run folder
(<out>/.run.lock, evaluate.runs.run_lock). The kernel drops an flock when its holder dies, however it
dies (kill -9 included), so a dead writer never leaves a lock behind; the file stays, holding only the
last holder's pid for the message. A forked child closes its copy, so it never keeps the lock alive
after its parent is killed.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

_held: set[int] = set()


def _close_held_in_child() -> None:
    for fd in list(_held):
        try:
            os.close(fd)
        except OSError:
            pass
    _held.clear()


os.register_at_fork(after_in_child=_close_held_in_child)


@contextmanager
def folder_lock(path: Path, refused: Callable[[str], BaseException]) -> Iterator[None]:
    """Hold an exclusive flock on `path` (made if missing) while the block runs; when another process
    holds it, raise refused(its pid, as it wrote it) at once."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise refused(holder) from None
    except BaseException:
        os.close(fd)
        raise
    _held.add(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        _held.discard(fd)
        os.close(fd)  # releases the lock; the file stays (removing it would race with a waiting writer)
