"""The paper's flat-RAG baseline: one pooled ranking over every document in scope, one LM call.

Chunk budget = k x number of documents, ranked together (store.search_pooled). With
`with_metadata` each passage is labelled with its document's symbol, year and doctype; without it,
only the page, as in the paper's plain setting. Same Prediction shape as the Analyst.
"""

from __future__ import annotations

import logging

import dspy

from programs.steps import arun_steps, run_steps
from signatures.answer import AnswerFromPassages
from signatures.types import Citation, Passage

logger = logging.getLogger(__name__)


class FlatRAG(dspy.Module):
    def __init__(self, resources, with_metadata: bool = True):
        super().__init__()
        self.resources = resources
        self.with_metadata = with_metadata
        self.respond = dspy.Predict(AnswerFromPassages)

    def retrieve(self, question: str, doc_ids: list[str] | None) -> list[Passage]:
        catalog = self.resources.store.catalog
        n_docs = len(catalog.select(None, within=doc_ids))
        budget = max(1, int(self.resources.settings.k) * n_docs)
        return self.resources.store.search_pooled(question, k=budget, doc_ids=doc_ids)

    def label(self, p: Passage) -> str:
        if not self.with_metadata:
            return f"[page {p.page}] {p.text}"
        d = self.resources.store.catalog.get(p.doc_id)
        return f"[{d.symbol} {d.year} {d.doctype}, page {p.page}] {p.text}"

    def forward(self, question: str, doc_ids: list[str] | None = None, on_progress=None) -> dspy.Prediction:
        return run_steps(self.steps(question, doc_ids))

    async def aforward(self, question: str, doc_ids: list[str] | None = None, on_progress=None) -> dspy.Prediction:
        return await arun_steps(self.steps(question, doc_ids))

    def steps(self, question: str, doc_ids: list[str] | None):
        """Retrieve, then one LM call over the labelled passages (yielded: programs.steps)."""
        passages = self.retrieve(question, doc_ids)
        chunks = [self.label(p) for p in passages]
        reply = yield self.respond, {"question": question, "passages": chunks}
        catalog = self.resources.store.catalog
        citations = []
        for p in passages:
            doc = catalog.get(p.doc_id)
            citations.append(Citation(doc_id=p.doc_id, symbol=doc.symbol, year=doc.year, page=p.page,
                                      quote=p.text[:200]))  # fmt: skip
        return dspy.Prediction(answer=reply.answer, records=[], code="", result="", citations=citations, missing=[],
                               facts=[], plan=None, warnings=[], retrieved_chunks=chunks,
                               run_log={"doc_interactions": {}},
                               trace={"retrieve": {"chunks": chunks}, "answer": {"answer": reply.answer}})  # fmt: skip


def build_flat_rag(settings, store, with_metadata: bool = True) -> FlatRAG:
    from programs.analyst import Resources

    return FlatRAG(Resources(store, None, settings), with_metadata=with_metadata)
