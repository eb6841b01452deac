"""Checksums of a document's index files, kept in its meta.json, so a damaged index is rebuilt, not kept.

A build skips a document whose PDF and settings are unchanged (retrievers.building.jobs.cached_result).
It used to trust the index files themselves: a chunks.jsonl or BM25 file damaged on disk (meta.json
intact) made every search of the document fail with "rebuild it", and the rebuild said "unchanged".
The build now records a sha256 of every file of the folder at save (`seal`) and checks them before it
calls a document unchanged (`damaged_files`).

Cost, measured on the 22 real filings' index (3,482 pages: 29.6 MB of index files, 38.6 MB of PDFs;
bench/index_checksums.py): verifying takes 0.07-0.13 s, 0.5-0.8x the cache check it joins, which already
hashes every PDF in full; ~2-3 s for MuDABench's 80,000 pages, against minutes to rebuild one large
filing. sha256 is in the standard library; xxhash would be faster but is no dependency here, and at this
cost not worth adding one.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

CHECKSUMS = "checksums"  # the meta.json key: {path relative to the folder: sha256}
META_FILE = "meta.json"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_checksums(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder` but meta.json (which holds them), by relative path."""
    return {
        p.relative_to(folder).as_posix(): sha256_of(p)
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.relative_to(folder).as_posix() not in (META_FILE, META_FILE + ".tmp")
    }


def seal(folder: Path, meta: dict) -> dict:
    """Record the checksums of the folder's files in its meta.json (written aside, then renamed over it,
    so a reader never sees half a meta.json); returns the meta written."""
    sealed = {**meta, CHECKSUMS: file_checksums(folder)}
    tmp = folder / (META_FILE + ".tmp")
    try:
        tmp.write_text(json.dumps(sealed, ensure_ascii=False, indent=1), encoding="utf-8")
        os.replace(tmp, folder / META_FILE)
    finally:
        tmp.unlink(missing_ok=True)
    return sealed


def damaged_files(folder: Path, recorded: dict[str, str]) -> list[str]:
    """The recorded files that are missing or whose bytes changed since the folder was sealed."""
    damaged = []
    for name, digest in recorded.items():
        path = folder / name
        try:
            if sha256_of(path) != digest:
                damaged.append(name)
        except OSError:  # removed, or unreadable: either way the index cannot be used
            damaged.append(name)
    return damaged
