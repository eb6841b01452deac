"""One tiny corpus per test session of this folder (generated through the CLI), shared read-only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collate.synth import main

TINY = ["--companies", "5", "--years", "2021", "2022", "--pages", "4", "--seed", "7", "-q"]


def build(out: Path, *extra: str) -> Path:
    assert main(["--out", str(out), *TINY, *extra]) == 0
    return out


@pytest.fixture(scope="session")
def build_corpus():
    """Build another tiny corpus (same flags as `corpus`, plus `extra`) into a folder."""
    return build


@pytest.fixture(scope="session")
def corpus(tmp_path_factory) -> Path:
    return build(tmp_path_factory.mktemp("synth") / "tiny")


@pytest.fixture(scope="session")
def catalog(corpus) -> list[dict]:
    return [json.loads(line) for line in (corpus / "catalog.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="session")
def truth(corpus) -> list[dict]:
    return [json.loads(line) for line in (corpus / "truth.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="session")
def dataset(corpus) -> list[dict]:
    return json.loads((corpus / "dataset.json").read_text(encoding="utf-8"))
