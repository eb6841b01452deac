"""The paper's flat-RAG baseline: one pooled ranking over every document in scope, one LM call.

Chunk budget = k x number of documents, ranked together (store.search_pooled). With
`with_metadata` each passage is labelled with its document's symbol, year and doctype; without it,
only the page, as in the paper's plain setting. Returns the Analyst's ProgramResult.
"""

from __future__ import annotations

import dspy

from programs.protocols import DocumentStore
from programs.result import ProgramResult
from signatures.answer import AnswerFromPassages
from signatures.types import Citation, Passage


class FlatRAG(dspy.Module):
    def __init__(self, store: DocumentStore, k: int = 5, with_metadata: bool = True):
        """store: the index (catalog + pooled search); k passages per document in scope."""
        super().__init__()
        self.store, self.k, self.with_metadata = store, k, with_metadata
        self.respond = dspy.Predict(AnswerFromPassages)

    def forward(self, question: str, doc_ids: list[str] | None = None, on_progress=None) -> ProgramResult:
        """Retrieve, then one LM call over the labelled passages. on_progress is accepted for the
        Analyst's call shape and unused: there are no per-document steps to report."""
        catalog = self.store.catalog
        n_docs = len(catalog.select(None, within=doc_ids))
        passages = self.store.search_pooled(question, k=max(1, self.k * n_docs), doc_ids=doc_ids)
        documents = {p.doc_id: catalog.get(p.doc_id) for p in passages}
        chunks = [self.label(p, documents[p.doc_id]) for p in passages]
        answer = self.respond(question=question, passages=chunks).answer
        citations = [
            Citation(
                doc_id=p.doc_id,
                symbol=documents[p.doc_id].symbol,
                year=documents[p.doc_id].year,
                page=p.page,
                quote=p.text[:200],
            )
            for p in passages
        ]
        return ProgramResult(
            answer=answer,
            citations=citations,
            retrieved_chunks=chunks,
            trace={"retrieve": {"chunks": chunks}, "answer": {"answer": answer}},
        )

    def label(self, p: Passage, doc) -> str:
        if not self.with_metadata:
            return f"[page {p.page}] {p.text}"
        return f"[{doc.label()}, page {p.page}] {p.text}"


def build_flat_rag(settings, store: DocumentStore, with_metadata: bool = True) -> FlatRAG:
    return FlatRAG(store, k=settings.k, with_metadata=with_metadata)
