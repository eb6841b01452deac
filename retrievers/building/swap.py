"""Replace a document's index folder in one step: written aside, then swapped in.

A build writes each document's new index under <index>/.staging/ and only then puts it in place,
so a document's folder always holds either its previous complete index or its new complete one,
whatever happens in between (an exception, Ctrl-C, kill -9). On Linux the swap is one
renameat2(RENAME_EXCHANGE) call; elsewhere the old folder is renamed aside first, and `recover`
puts it back if the process died between the two renames. (Safe against a process dying, which is
what happens; a power cut would also need an fsync of every file, not done.)
"""

from __future__ import annotations

import ctypes
import os
import shutil
from pathlib import Path

STAGING_DIR = ".staging"
_NEW, _OLD = ".new", ".old"
_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def staging_folder(target: Path) -> Path:
    """Where to write the new contents of `target` (<index>/docs/NAME): <index>/.staging/NAME.PID.new.

    Same file system as the target (a rename cannot cross one); the pid keeps two processes apart.
    """
    return target.parent.parent / STAGING_DIR / f"{target.name}.{os.getpid()}{_NEW}"


def swap_in(new: Path, target: Path) -> None:
    """Make the complete folder `new` the folder at `target`, then remove the old one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.exists():
        os.rename(new, target)
        return
    if _exchange(new, target):
        shutil.rmtree(new, ignore_errors=True)  # `new` now holds the old index
        return
    old = new.with_name(new.name[: -len(_NEW)] + _OLD)
    os.rename(target, old)
    os.rename(new, target)  # dying just before this leaves `old`, which recover() puts back
    shutil.rmtree(old, ignore_errors=True)


def recover(index_dir: Path, docs_dir: Path) -> None:
    """Clean up after a build that died: put back an old folder whose swap was cut short, drop the rest.

    Call it only while holding the index's build lock: another build's staging must not be touched.
    """
    staging = index_dir / STAGING_DIR
    if not staging.is_dir():
        return
    for entry in staging.iterdir():
        if entry.name.endswith(_OLD):
            target = docs_dir / entry.name[: -len(_OLD)].rsplit(".", 1)[0]
            if not target.exists():
                os.rename(entry, target)
                continue
        if entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2); False when this system cannot."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    errno = ctypes.get_errno()
    if errno in (22, 38, 95):  # EINVAL, ENOSYS, EOPNOTSUPP: this file system or kernel cannot exchange
        return False
    raise OSError(errno, os.strerror(errno), str(b))
