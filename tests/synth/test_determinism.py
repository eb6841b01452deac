"""Same seed -> the same bytes in every file; another seed -> another corpus."""

from __future__ import annotations

import hashlib
from pathlib import Path


def _fingerprint(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_same_seed_gives_identical_bytes(corpus, build_corpus, tmp_path):
    again = build_corpus(tmp_path / "again")
    first, second = _fingerprint(corpus), _fingerprint(again)
    assert len(first) > 20
    assert first == second


def test_different_seed_gives_a_different_corpus(corpus, build_corpus, tmp_path):
    other = build_corpus(tmp_path / "other", "--seed", "8")
    assert (other / "dataset.json").read_bytes() != (corpus / "dataset.json").read_bytes()
    assert not set(_fingerprint(other)) & {k for k in _fingerprint(corpus) if k.startswith("pdf/")}
