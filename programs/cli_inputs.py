"""What every command-line entry point shares: the user-error type and opening an index with a fix-naming error."""

from __future__ import annotations

from pathlib import Path


class BadInput(ValueError):
    """A user error: the CLI prints one line on stderr naming the fix and exits 2."""


def open_store(index_dir: str | Path):
    """Open the index folder built by retrievers.build, or say how to build one."""
    path = Path(index_dir)
    if not path.is_dir():
        raise BadInput(f"no index at {path}: build one with python -m retrievers.build --catalog DS.json "
                       f"--pdf-dir PDFS --index {path}")  # fmt: skip
    from retrievers.store import IndexStore  # lazy: loading FAISS/torch is not needed for --help or bad input

    try:
        return IndexStore.open(path)
    except (OSError, ValueError, LookupError) as e:
        raise BadInput(f"cannot open index {path}: {e}; rebuild it with python -m retrievers.build") from None
