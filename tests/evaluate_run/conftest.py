"""A small synthetic corpus + index shared by this folder's end-to-end tests, and a fake LM endpoint."""

from __future__ import annotations

import pytest

from tests.e2e.corpus import build_corpus
from tests.fakes.brain import Brain
from tests.fakes.server import FakeLMServer


@pytest.fixture(scope="session")
def small_corpus(tmp_path_factory):
    """(corpus dir, index dir): 3 companies, 2 fiscal years, 5-page filings (~10 s to build)."""
    # A fixed folder under the session's temp root: tests/optimize asks for the same corpus and reuses it.
    folder = tmp_path_factory.getbasetemp() / "small_corpus"
    folder.mkdir(exist_ok=True)
    return build_corpus(folder, "--companies", "3", "--years", "2021", "2022", "--pages", "5", "--seed", "3")


@pytest.fixture
def brain_server(monkeypatch):
    """The rule-based brain behind a real OpenAI-compatible HTTP endpoint, with COLLATE_* pointing at it."""
    with FakeLMServer(Brain()) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("COLLATE_CACHE", "false")
        yield server
