"""Analyst: planner -> per-document extractor -> normalizer -> code-writer -> answerer, one dspy.Module.

`build_program(settings, store)` builds it. The index store and the fact store sit in a holder whose
__deepcopy__ returns itself, so DSPy optimizers that copy the program per candidate share them
instead of copying indexes. Saved state (compiled.json) holds only the predictors' demos/instructions.
"""

from __future__ import annotations

import logging
from pathlib import Path

import dspy

from programs.answer import Answerer
from programs.code_writer import CodeWriter
from programs.extractor import DocumentExtractor
from programs.facts import FactStore
from programs.normalizer import Normalizer
from programs.planner import Planner
from programs.run_folder import build_run_log
from programs.settings import Settings
from programs.steps import arun_steps, run_steps
from signatures.types import DocumentFailure

logger = logging.getLogger(__name__)


class Resources:
    """Big shared objects (index, catalog, facts, settings): never copied, never saved."""

    def __init__(self, store, facts: FactStore | None, settings: Settings):
        self.store, self.facts, self.settings = store, facts, settings

    def __deepcopy__(self, memo):
        return self

    def __repr__(self) -> str:  # keeps reprs of the program short
        return f"Resources(store={type(self.store).__name__}, facts={getattr(self.facts, 'path', None)})"


class Analyst(dspy.Module):
    def __init__(self, resources: Resources):
        super().__init__()
        self.resources = resources
        self.planner = Planner(resources)
        self.extractor = DocumentExtractor(resources)
        self.normalizer = Normalizer(resources)
        self.code_writer = CodeWriter(resources)
        self.answerer = Answerer(resources)

    def forward(self, question: str, doc_ids: list[str] | None = None, on_progress=None) -> dspy.Prediction:
        return run_steps(self.stages(question, doc_ids, on_progress))

    async def aforward(self, question: str, doc_ids: list[str] | None = None, on_progress=None) -> dspy.Prediction:
        return await arun_steps(self.stages(question, doc_ids, on_progress))

    def stages(self, question: str, doc_ids: list[str] | None, on_progress):
        """The pipeline once for forward and aforward, each stage's call yielded (see programs.steps)."""
        scope = self.scope(doc_ids)
        self.code_writer.warm_up()  # the sandbox starts while planning and extraction run, off the critical path
        try:
            planned = yield self.planner, {"question": question, "scope": scope}
        except Exception as e:  # without a plan nothing can be read: say so, per document
            return self.unplanned(question, scope, e)
        extracted = yield self.extractor, {"assignments": planned.assignments, "on_done": on_progress}
        documents = readable(planned, extracted)
        normalized = yield self.normalizer, {"fields": planned.plan.fields(), "facts": extracted.facts,
                                             "documents": documents}  # fmt: skip
        if normalized.records:
            analysis = yield self.code_writer, {"question": question, "columns": normalized.schema.columns(),
                                                "records": normalized.records}  # fmt: skip
        else:
            analysis = no_records()
        answered = yield self.answerer, {"question": question, "result": analysis.result,
                                         "records": normalized.records, "facts": extracted.facts,
                                         "failures": extracted.failures, "documents": planned.documents}  # fmt: skip
        return assemble(question, scope, planned, extracted, normalized, analysis, answered)

    def scope(self, doc_ids: list[str] | None) -> list[str] | None:
        """Unknown ids are a caller error: name them instead of silently shrinking the scope."""
        if doc_ids is None:
            return None
        known = {doc.id for doc in self.resources.store.catalog.documents()}
        unknown = [d for d in doc_ids if d not in known]
        if unknown:
            raise ValueError(f"documents not in the index: {unknown[:5]}{' ...' if len(unknown) > 5 else ''}; "
                             "rebuild the index over them or drop them from doc_ids")  # fmt: skip
        return list(doc_ids)

    def unplanned(self, question: str, scope: list[str] | None, error: Exception) -> dspy.Prediction:
        reason = f"planning failed: {type(error).__name__}: {error}"[:500]
        logger.error(reason)
        docs = self.resources.store.catalog.select(None, within=scope)
        missing = [DocumentFailure(doc_id=d.id, stage="plan", reason=reason) for d in docs]
        run_log = build_run_log(question, {}, [], missing)
        return dspy.Prediction(answer=f"No answer: {reason}", records=[], code="", result="", citations=[],
                               missing=missing, facts=[], plan=None, run_log=run_log, warnings=[reason],
                               trace={"plan": {"question": question, "scope": scope, "error": reason}})  # fmt: skip


def readable(planned, extracted) -> dict:
    failed = {f.doc_id for f in extracted.failures}
    return {doc_id: doc for doc_id, doc in planned.documents.items() if doc_id not in failed}


def no_records() -> dspy.Prediction:
    return dspy.Prediction(code="", result="ERROR: no document in scope yielded any value", ok=False, attempts=[])


def assemble(question, scope, planned, extracted, normalized, analysis, answered) -> dspy.Prediction:
    trace = {
        "plan": {"question": question, "scope": scope, "plan": planned.plan.model_dump(),
                 "assignments": {d: [sq.query for sq in sqs] for d, sqs in planned.assignments.items()},
                 "warnings": planned.warnings},
        "extract": {"facts": [f.model_dump() for f in extracted.facts],
                    "failures": [f.model_dump() for f in extracted.failures],
                    "lm_documents": extracted.lm_documents, "passages": extracted.passages},
        "normalize": {"records": normalized.records, "notes": normalized.notes, "nulled": normalized.nulled},
        "code": {"attempts": analysis.attempts, "result": analysis.result},
        "answer": {"inputs": {"question": question, "result": analysis.result,
                              "missing": [f.model_dump() for f in extracted.failures]},
                   "answer": answered.answer, "citations": [c.model_dump() for c in answered.citations]},
    }  # fmt: skip
    return dspy.Prediction(
        answer=answered.answer, records=normalized.records, code=analysis.code, result=analysis.result,
        citations=answered.citations, missing=extracted.failures, facts=extracted.facts, plan=planned.plan,
        run_log=build_run_log(question, planned.assignments, extracted.facts, extracted.failures),
        warnings=planned.warnings, trace=trace,
    )  # fmt: skip


def default_fact_path(settings: Settings, store) -> str | None:
    """settings.fact_store, else <index>/facts.sqlite when the store knows its folder, else in memory."""
    if settings.fact_store:
        return settings.fact_store
    folder = getattr(store, "index_dir", None) or getattr(store, "root", None)
    return str(Path(folder) / "facts.sqlite") if folder else None


def build_program(settings: Settings, store, facts: FactStore | None = None) -> Analyst:
    """The Analyst over `store`; facts from `facts`, else settings.fact_store / <index>/facts.sqlite."""
    if not settings.fact_reuse:
        facts = None
    elif facts is None:
        facts = FactStore(default_fact_path(settings, store))
    return Analyst(Resources(store, facts, settings))
