"""A small synthetic corpus (2 companies, 2022: one US 10-K and four A-share filings) with its page texts."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest

from data.synth.corpus import generate
from retrievers.documents.page_text import read_page_texts

ROOT = Path(__file__).resolve().parents[2]


def load_bench():
    """bench/fact_check.py as a module: the test and the bench build the same true and fabricated facts."""
    if "bench_fact_check" not in sys.modules:
        spec = importlib.util.spec_from_file_location("bench_fact_check", ROOT / "bench" / "fact_check.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["bench_fact_check"] = module  # dataclasses look their module up while building
        spec.loader.exec_module(module)
    return sys.modules["bench_fact_check"]


def realdocs() -> Path | None:
    """The real filings: $COLLATE_REALDOCS, else <repo>/../shared/realdocs; None when absent."""
    given = os.environ.get("COLLATE_REALDOCS")
    base = Path(given) if given else ROOT.parent / "shared" / "realdocs"
    folder = base / "financebench-dev"
    return folder if (folder / "questions.jsonl").is_file() else None


@pytest.fixture(scope="session")
def synth_corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("factcheck") / "corpus"
    generate(out, companies=2, years=[2022], seed=0)
    return out


@pytest.fixture(scope="session")
def synth_pages(synth_corpus) -> dict[str, dict[int, str]]:
    catalog = [
        json.loads(x) for x in (synth_corpus / "catalog.jsonl").read_text(encoding="utf-8").splitlines() if x
    ]
    return {d["id"]: read_page_texts(synth_corpus / "pdf" / f"{d['id']}.pdf") for d in catalog}
