"""Shared fixtures for the program tests: a tiny catalog + store and DummyLM (dict mode) replies."""

from __future__ import annotations

import dspy
import pytest
from dspy.utils.dummies import DummyLM

from programs.analyst import build_program
from programs.facts.store import FactStore
from programs.lm.settings import Settings
from retrievers.catalog import Catalog
from signatures.types import Document, Passage

DOCS = [
    Document(id="doc-a", symbol="600001", year=2023, doctype="A股年报"),
    Document(id="doc-b", symbol="600002", year=2023, doctype="A股年报"),
    Document(id="doc-c", symbol="600003", year=2023, doctype="A股年报"),
    Document(id="doc-esg", symbol="600001", year=2023, doctype="A股ESG报告"),
]
PAGES = {
    "doc-a": [(3, "资本充足率为15.44%"), (4, "营业收入 3,239,006 万元")],
    "doc-b": [(7, "资本充足率 12.10%"), (8, "营业收入 1.5亿元")],
    "doc-c": [(2, "资本充足率 13.00%"), (5, "营业收入 (1,234) 元")],
    "doc-esg": [(1, "ESG")],
}


class TinyStore:
    """Same interface as retrievers.indexing.store.IndexStore: .catalog, .search, .search_pooled."""

    def __init__(self):
        self.catalog = Catalog(DOCS)
        self.searches: list[tuple[str, str]] = []

    def __deepcopy__(self, memo):
        return self  # as IndexStore: shared by every copy of a program

    def search(self, doc_id: str, query: str, k: int = 5, terms: list[str] | None = None) -> list[Passage]:
        self.searches.append((doc_id, query) if not terms else (doc_id, query, tuple(terms)))
        return [Passage(doc_id=doc_id, page=p, text=t) for p, t in PAGES[doc_id]][:k]

    def search_pooled(self, query: str, k: int, doc_ids=None) -> list[Passage]:
        ids = doc_ids or list(PAGES)
        return [Passage(doc_id=d, page=p, text=t) for d in ids for p, t in PAGES[d]][:k]

    def page_texts(self, doc_id: str) -> None:
        return None  # its passages are not pages: no fact is checked against them


PLAN = {
    "subqueries": [
        {
            "query": "资本充足率和营业收入是多少？",
            "restriction": {"doctypes": ["A股年报"], "years": [2023]},
            "fields": [
                {
                    "name": "capital_adequacy_ratio",
                    "description": "资本充足率",
                    "type": "percent",
                    "unit": "percent",
                },
                {"name": "revenue", "description": "营业收入", "type": "number", "unit": "CNY"},
            ],
        }
    ]
}


def extraction(car: str, revenue: str, page: int = 3) -> dict:
    return {
        "values": [
            {
                "field": "capital_adequacy_ratio",
                "disclosed": True,
                "value": car,
                "unit": "%",
                "quote": f"资本充足率{car}",
                "page": page,
            },
            {
                "field": "revenue",
                "disclosed": True,
                "value": revenue,
                "unit": None,
                "quote": f"营业收入{revenue}",
                "page": page + 1,
            },
        ]
    }


CODE = "import json\nrow = df.sort_values('capital_adequacy_ratio', ascending=False).iloc[0]\nprint(json.dumps({'top': row['symbol']}))"


def replies(**overrides) -> dict:
    """DummyLM dict-mode answers keyed by a substring that identifies the stage or the document."""
    answers = {
        "[[ ## error ## ]]": {"fixed_code": CODE},
        "[[ ## catalog ## ]]": {"reasoning": "one sub-query", "plan": PLAN},
        "(id doc-a)": extraction("15.44%", "3,239,006 万元"),
        "(id doc-b)": extraction("12.10%", "1.5亿元", page=7),
        "(id doc-c)": extraction("13.00%", "(1,234)", page=2),
        "[[ ## items ## ]]": {"values": []},
        "[[ ## columns ## ]]": {"code": "```python\n" + CODE + "\n```"},
        "[[ ## result ## ]]": {"answer": "资本充足率最高的是600001。"},
    }
    merged = {
        **overrides,
        **{k: v for k, v in answers.items() if k not in overrides},
    }  # overrides match first
    return {k: v for k, v in merged.items() if v is not None}


@pytest.fixture
def store():
    return TinyStore()


@pytest.fixture
def settings():
    return Settings(lm="dummy/test", concurrency=4, k=3)


@pytest.fixture
def make_program(store, settings):
    def make(facts: FactStore | None = None, **changes):
        return build_program(settings.replace(**changes), store, facts=facts or FactStore(None))

    return make


def configure_dummy(**overrides) -> DummyLM:
    lm = DummyLM(replies(**overrides))
    dspy.configure(lm=lm)
    return lm


@pytest.fixture
def use_lm():
    """use_lm(**overrides) configures a dict-mode DummyLM (a None override drops that key)."""
    return configure_dummy


@pytest.fixture
def reply_for():
    """Helpers tests need to build replies: extraction(car, revenue, page), the PLAN and working CODE."""
    from types import SimpleNamespace

    return SimpleNamespace(extraction=extraction, plan=PLAN, code=CODE, replies=replies)
