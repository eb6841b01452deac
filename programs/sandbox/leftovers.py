"""Sandbox folders a killed run left in the temp folder, found by a marker their run owns and removed.

Each run's folder (<tmp>/collate-sandbox-XXXX: its input, records and runner) is removed when the run
ends, but `kill -9` of the program ends the watcher thread before that, and the folders stayed (issue
33). Each folder now holds a marker file, .collate-owner, flock'ed by the process that made it for as
long as the folder is in use; the kernel drops the lock when that process dies, however it dies. The
first sandbox a process starts sweeps the temp folder once: a folder whose marker it can lock is
stale and is removed. Never touched: a folder or marker another user owns, a folder without a marker
(one being made, or not ours to judge), a marker that is a link, and any folder whose run is alive.
"""

from __future__ import annotations

import fcntl
import functools
import logging
import os
import shutil
import stat
import tempfile
from pathlib import Path

logger = logging.getLogger(__name__)

PREFIX = "collate-sandbox-"
MARKER = ".collate-owner"


def claim(folder: Path) -> int:
    """Mark `folder` as in use by this process; the returned fd holds the mark (close it after removing
    the folder). The marker appears already locked (made under another name, locked, then renamed), so a
    sweep never sees it unlocked while the run is alive."""
    making = folder / f"{MARKER}.{os.getpid()}"
    fd = os.open(making, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a file just made: no one else holds it
        os.write(fd, f"{os.getpid()}\n".encode())
        os.rename(making, folder / MARKER)
    except BaseException:
        os.close(fd)
        raise
    return fd


def sweep(root: Path) -> int:
    """Remove the stale sandbox folders of this user in `root`; how many were removed."""
    removed = 0
    me = os.geteuid()
    for folder in root.glob(f"{PREFIX}*"):
        try:
            if not _stale_and_ours(folder, me):
                continue
            fd = os.open(folder / MARKER, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            continue  # gone meanwhile, or not ours to open
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its run is alive
            shutil.rmtree(folder, ignore_errors=True)
            removed += not folder.exists()
        finally:
            os.close(fd)
    if removed:
        logger.info("removed %d sandbox folder(s) a killed run left in %s", removed, root)
    return removed


def _stale_and_ours(folder: Path, me: int) -> bool:
    """A real folder of this user with a marker file of this user (not a link): one we may judge."""
    info = folder.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != me:
        return False
    marker = (folder / MARKER).lstat()
    return stat.S_ISREG(marker.st_mode) and marker.st_uid == me


@functools.cache
def sweep_once() -> int:
    """sweep() of the temp folder, once per process (the first sandbox a run starts)."""
    return sweep(Path(tempfile.gettempdir()))
