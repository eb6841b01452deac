"""Make the repository root importable however pytest is started (`tests.*` helpers); the fixtures the
end-to-end files share.

The shared fixtures live here, not in one test file imported by the others: under --import-mode=importlib
a session fixture imported into another module is a second definition, built again there (the tiny
corpus was built 4 times a suite, 8.6-12.9 s each under load).
"""

import sys
from pathlib import Path

import pytest

ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from fakes.corpus import build_corpus, dataset_items  # noqa: E402 (after the path is set)


@pytest.fixture(scope="session")
def tiny(tmp_path_factory):
    """(corpus dir, index dir): 2 companies per market, 2 fiscal years, short filings."""
    return build_corpus(
        tmp_path_factory.mktemp("e2e"),
        "--companies",
        "4",
        "--years",
        "2021",
        "2022",
        "--pages",
        "10",
        "--seed",
        "11",
    )


@pytest.fixture
def item(tiny):
    """A dataset item over several documents (the smallest with at least 3, for speed)."""
    items = sorted(
        (i for i in dataset_items(tiny[0]) if len(i["metadata"]) >= 3), key=lambda i: len(i["metadata"])
    )
    assert items, "the synthetic dataset has no item over 3+ documents"
    return items[0]
