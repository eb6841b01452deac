"""Answerer: the execution result -> the final answer, with citations attached by code.

The LM writes the answer in the question's language; citations are the documents (symbol, year,
page, quote from the facts) behind the entities the answer or result names, and the documents
that could not be read are listed for the LM and returned as `missing`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import dspy

from programs.lm.spend import refusal
from signatures.answer import WriteAnswer
from signatures.types import Citation, Document, DocumentFailure, Fact

logger = logging.getLogger(__name__)


def describe_missing(failures: list[DocumentFailure], documents: dict[str, Document]) -> list[str]:
    lines = []
    for f in failures:
        d = documents.get(f.doc_id)
        name = d.label() if d else f.doc_id
        lines.append(f"{name} ({f.doc_id}): {f.stage} failed: {f.reason[:200]}")
    return lines


def cite(answer: str, result: str, records: list[dict], facts: list[Fact], documents: dict[str, Document]):
    """Citations for the documents whose symbol the answer or result names; all records' if none is named."""
    text = f"{answer}\n{result}"
    named = [r["id"] for r in records if str(r.get("symbol", "")) and str(r["symbol"]) in text]
    doc_ids = named or [r["id"] for r in records]
    by_doc: dict[str, list[Fact]] = {}
    for fact in facts:
        if fact.disclosed:
            by_doc.setdefault(fact.doc_id, []).append(fact)
    citations = []
    for doc_id in dict.fromkeys(doc_ids):
        doc = documents.get(doc_id)
        if doc is None:
            continue
        held: list[Fact | None] = [*by_doc.get(doc_id, [])] or [None]  # a document without facts is cited too
        for cited in held:
            citations.append(
                Citation(
                    doc_id=doc_id,
                    symbol=doc.symbol,
                    year=doc.year,
                    page=cited.page if cited else None,
                    quote=cited.quote if cited else None,
                )
            )
    return citations


def fallback_answer(result: str, missing: list[str]) -> str:
    """What the user gets when the answer LM call fails: the computed result, plainly."""
    text = f"Result: {result}"
    if missing:
        text += "\nMissing documents: " + "; ".join(missing)
    return text


@dataclass
class Answer:
    answer: str
    citations: list[Citation] = field(default_factory=list)


class Answerer(dspy.Module):
    def __init__(self, sample_records: int = 8):
        """sample_records: rows of the records shown beside the result."""
        super().__init__()
        self.sample_records = sample_records
        self.answer = dspy.Predict(WriteAnswer)

    def forward(
        self,
        question: str,
        result: str,
        records: list[dict],
        facts: list[Fact],
        failures: list[DocumentFailure],
        documents: dict[str, Document],
    ) -> Answer:
        """The answer in the question's language, falling back to the plain result when the call fails."""
        missing = describe_missing(failures, documents)
        try:
            answer = self.answer(
                question=question,
                result=result,
                sample_records=records[: self.sample_records],
                missing=missing,
            ).answer
        except Exception as e:  # the computed result still reaches the user
            if refusal(e):  # the run's budget is spent: the question fails whole (a resume asks it)
                raise
            logger.warning("answer call failed: %s: %s", type(e).__name__, e)
            answer = fallback_answer(result, missing)
        return Answer(answer=answer, citations=cite(answer, result, records, facts, documents))
