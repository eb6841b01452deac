"""A small synthetic corpus + index shared by this folder's end-to-end tests, and a fake LM endpoint."""

from __future__ import annotations

import pytest

from tests.e2e.corpus import build_corpus
from tests.fakes.brain import Brain
from tests.fakes.server import FakeLMServer


@pytest.fixture(scope="session")
def small_corpus(tmp_path_factory):
    """(corpus dir, index dir): 3 companies, 2 fiscal years, 5-page filings (~10 s to build)."""
    return build_corpus(tmp_path_factory.mktemp("evalrun"), "--companies", "3", "--years", "2021", "2022",
                        "--pages", "5", "--seed", "3")


@pytest.fixture
def brain_server(monkeypatch):
    """The rule-based brain behind a real OpenAI-compatible HTTP endpoint, with COLLATE_* pointing at it."""
    with FakeLMServer(Brain()) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("COLLATE_CACHE", "false")
        yield server
