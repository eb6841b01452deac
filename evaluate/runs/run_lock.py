"""One writer per run folder: an flock on <out>/.run.lock, held from before run.json is read until the
run has written its summary (retrievers.folder_lock, the build's lock).

Why (issue 33): two identical `evaluate.run --out SAME` started a second apart both asked every
question (42 LM calls instead of 21), wrote every journal line twice, logged two MLflow runs, and
summary.json was whichever finished last. The second now stops at once, before any LM call or MLflow
run, naming the first's pid (exit 75, as a build into a held index). A killed run holds nothing: the
kernel drops its flock, and the next run resumes the folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from retrievers.folder_lock import folder_lock
from signatures.errors import CollateError

LOCK_FILE = ".run.lock"
LOCKED = 75  # collate.errors.Exit.LOCKED (EX_TEMPFAIL)


class RunFolderLocked(CollateError):
    """Another live process is running into the same --out folder."""

    exit_code = LOCKED


@contextmanager
def run_folder_lock(out_dir: Path) -> Iterator[None]:
    """Hold out_dir (made if missing) for this run; RunFolderLocked naming the holder when another has it."""

    def refused(holder: str) -> RunFolderLocked:
        return RunFolderLocked(
            f"another run (pid {holder}) is writing --out {out_dir}: wait for it to finish (the same command "
            "then resumes it and asks only what it left), or give a new --out"
        )

    out_dir.mkdir(parents=True, exist_ok=True)
    with folder_lock(out_dir / LOCK_FILE, refused):
        yield
