"""Where a command will write, checked before anything is spent (no LM call, no optimization).

A compile that ran for an hour and then could not save its program lost paid work (issue 22): the
path is checked first, by doing what the save will do (make the folder, create a file in it), so a
read-only disk, a path under a file or a folder given for a file is one line naming the fix.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from signatures.errors import BadInput


def _probe(folder: Path, flag: str, target: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".collate-probe-"):
            pass
    except FileExistsError:
        raise BadInput(
            f"{flag} {target}: a part of that path is a file, not a folder: give another path"
        ) from None
    except OSError as exc:
        raise BadInput(
            f"{flag} {target}: cannot write in {folder} ({exc.strerror or exc}): give a path in a folder "
            "you can write to, on a disk with free space"
        ) from None


def writable_file(path: str | Path, flag: str) -> Path:
    """The file a command will save to, after checking its folder takes a new file."""
    target = Path(path)
    if target.is_dir():
        raise BadInput(
            f"{flag} {target} is a folder: give a file name in it, e.g. {target / 'compiled.json'}"
        )
    if target.exists() and not os.access(target, os.W_OK):
        raise BadInput(f"{flag} {target} exists and cannot be overwritten: give another file name")
    _probe(target.parent, flag, target)
    return target


def writable_folder(path: str | Path, flag: str) -> Path:
    """The folder a command will write into, made if needed and checked to take a new file."""
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise BadInput(f"{flag} {target} is a file: give a folder (it is made if it does not exist)")
    _probe(target, flag, target)
    return target
