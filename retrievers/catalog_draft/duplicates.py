"""Byte-identical PDFs under two names: indexed twice they answer twice ("GLEN, GLEN", issue 33 item 5).

Compared by size first and SHA-256 only among files of one size, so a folder of distinct filings costs
a stat each. The first file in the order given is the one kept; each other is named with it. Two links
to one file count too: either way the catalog would hold the document twice.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from pathlib import Path


def identical_files(files: list[Path]) -> dict[Path, Path]:
    """Each file whose bytes equal an earlier one's -> that earlier file (the one kept)."""
    by_size: dict[int, list[Path]] = defaultdict(list)
    for path in files:
        try:
            size = path.stat().st_size
        except OSError:  # unreadable or gone: the draft or the build says so for that file
            continue
        if size:  # empty files are reported as empty, not as copies of each other
            by_size[size].append(path)
    same: dict[Path, Path] = {}
    for group in by_size.values():
        if len(group) < 2:
            continue
        kept: dict[str, Path] = {}
        for path in group:
            try:
                digest = _sha256(path)
            except OSError:
                continue
            if digest in kept:
                same[path] = kept[digest]
            else:
                kept[digest] = path
    return same


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
