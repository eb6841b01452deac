"""One build at a time per index folder: an flock on <index>/.build.lock (retrievers.folder_lock).

Two builds writing one index would both rebuild every document and could leave a mix of two
settings under a manifest that names one. The second build refuses at once, naming the holder's
pid. The kernel drops an flock when its holder dies, however it dies, so a killed build never
leaves a lock behind (the file stays; its content is only the last holder's pid, for the message).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from retrievers.folder_lock import folder_lock
from signatures.errors import CollateError

LOCK_FILE = ".build.lock"


class IndexLocked(CollateError, RuntimeError):
    """Another live process is building into the same index folder."""

    exit_code = 75  # collate.errors.Exit.LOCKED: try later


@contextmanager
def build_lock(index_dir: Path) -> Iterator[None]:
    def refused(holder: str) -> IndexLocked:
        return IndexLocked(
            f"another build (pid {holder}) is writing {index_dir}: wait for it to finish, then run this "
            "build again (documents it finished are not redone)"
        )

    with folder_lock(Path(index_dir) / LOCK_FILE, refused):
        yield
