"""One build at a time per index folder: an flock on <index>/.build.lock.

Two builds writing one index would both rebuild every document and could leave a mix of two
settings under a manifest that names one. The second build refuses at once, naming the holder's
pid. The kernel drops an flock when its holder dies, however it dies, so a killed build never
leaves a lock behind (the file stays; its content is only the last holder's pid, for the message).
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK_FILE = ".build.lock"
_held: set[int] = set()


class IndexLocked(RuntimeError):
    """Another live process is building into the same index folder."""


def _close_held_in_child() -> None:
    # A forked worker shares the parent's lock; it must not keep holding it if the parent is killed.
    for fd in list(_held):
        try:
            os.close(fd)
        except OSError:
            pass
    _held.clear()


os.register_at_fork(after_in_child=_close_held_in_child)


@contextmanager
def build_lock(index_dir: Path) -> Iterator[None]:
    path = Path(index_dir) / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise IndexLocked(
            f"another build (pid {holder}) is writing {index_dir}: wait for it to finish, then run this "
            "build again (documents it finished are not redone)"
        ) from None
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
        os.close(fd)  # releases the lock; the file stays (removing it would race with a waiting build)
