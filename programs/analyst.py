"""Analyst: planner -> per-document extractor -> normalizer -> code-writer -> answerer, one dspy.Module.

`build_program(settings, store)` builds it from the one settings block. Each stage is given what it
needs in its constructor; the big shared objects (index store, fact store, warm sandboxes) return
themselves when deep-copied, so DSPy optimizers that copy the program per candidate share them
instead of copying indexes. Saved state (compiled.json) holds only the predictors' demos/instructions.
"""

from __future__ import annotations

import logging

import dspy

from programs.facts.field_match import FieldMatcher
from programs.facts.store import FactStore
from programs.lm.errors import lm_error_reason
from programs.lm.settings import Settings
from programs.lm.spend import BudgetReached, refused_reason
from programs.protocols import DocumentStore
from programs.result import ProgramResult
from programs.run_folder import build_run_log
from programs.stages.answer import Answer, Answerer
from programs.stages.code_writer import Analysis, CodeWriter, no_records
from programs.stages.coverage import UNVERIFIED_COLUMN, Coverage, coverage_of, flag_records
from programs.stages.extraction import Extraction
from programs.stages.extractor import DocumentExtractor
from programs.stages.normalizer import Normalized, Normalizer
from programs.stages.planner import Planned, Planner
from programs.stages.warm_sandbox import WarmSandboxes
from signatures.types import DocumentFailure

logger = logging.getLogger(__name__)


class Analyst(dspy.Module):
    def __init__(
        self,
        planner: Planner,
        extractor: DocumentExtractor,
        normalizer: Normalizer,
        code_writer: CodeWriter,
        answerer: Answerer,
        use_unverified: bool = False,
        wave_size: int | None = None,
    ):
        """use_unverified: let the analysis code use facts that failed the check against their page;
        wave_size: questions a dataset run takes through plan, extraction and answer together
        (programs/batch.py; None: all at once)."""
        super().__init__()
        self.use_unverified = use_unverified
        self.wave_size = wave_size
        self.planner = planner
        self.extractor = extractor
        self.normalizer = normalizer
        self.code_writer = code_writer
        self.answerer = answerer

    @property
    def catalog(self):
        return self.planner.catalog

    def forward(self, question: str, doc_ids: list[str] | None = None, on_progress=None) -> ProgramResult:
        """on_progress(done, total, outcome) as each document's extraction finishes. One question; a
        run over many answers them together (programs.batch), which sends the same calls at any timing."""
        scope = self.scope(doc_ids)
        self.code_writer.warm_up()  # the sandbox starts while planning and extraction run, off the critical path
        planned = self.plan_for(question, scope)
        if isinstance(planned, ProgramResult):  # without a plan nothing can be read
            self.code_writer.sandboxes.discard()
            return planned
        extracted = self.extractor(assignments=planned.assignments, on_done=on_progress)
        return self.conclude(question, scope, planned, extracted)

    def plan_for(self, question: str, scope: list[str] | None) -> Planned | ProgramResult:
        """The question's plan, or, when planning failed, the result that says why, per document."""
        try:
            return self.planner(question=question, scope=scope)
        except Exception as e:
            return self.unplanned(question, scope, e)

    def conclude(
        self, question: str, scope: list[str] | None, planned: Planned, extracted: Extraction
    ) -> ProgramResult:
        """Normalize the question's facts, compute over them and answer: everything after extraction."""
        refused = next((f for f in extracted.failures if refused_reason(f.reason)), None)
        if refused is not None:  # the budget ran out before one of its documents was read: an answer over
            # the rest would be kept as answered and never asked again; failing, a resume asks it whole
            raise BudgetReached(refused.reason.split(": ", 1)[1])
        failed = {f.doc_id for f in extracted.failures}
        readable = {doc_id: doc for doc_id, doc in planned.documents.items() if doc_id not in failed}
        normalized = self.normalizer(fields=planned.plan.fields(), facts=extracted.facts, documents=readable)
        records, for_code = flag_records(normalized.records, extracted.facts, self.use_unverified)
        if normalized.records:
            columns = normalized.schema.columns() + (
                f"\n{UNVERIFIED_COLUMN} (str): fields whose values failed the check and are null here"
                if records is not for_code
                else ""
            )
            analysis = self.code_writer(question=question, columns=columns, records=for_code)
        else:
            self.code_writer.sandboxes.discard()
            analysis = no_records()
        if analysis.refusal:  # nothing was computed: the question fails, and no answer call is paid
            logger.info(analysis.refusal[:300])  # result.error carries it; the caller says it once
            answered = Answer(answer=f"No answer: {analysis.refusal}")
        else:
            answered = self.answerer(
                question=question,
                result=analysis.result,
                records=records,
                facts=extracted.facts,
                failures=extracted.failures,
                documents=planned.documents,
            )
        covered = coverage_of(
            planned.documents, extracted.facts, extracted.failures, self.use_unverified, records=for_code
        )
        result = assemble(
            question, scope, planned, extracted, normalized, analysis, answered, records, covered
        )
        result.error = unreadable(planned, extracted) or (analysis.refusal[:500] or None)
        return result

    def scope(self, doc_ids: list[str] | None) -> list[str] | None:
        """Unknown ids are a caller error: name them instead of silently shrinking the scope."""
        if doc_ids is None:
            return None
        known = {doc.id for doc in self.catalog.documents()}
        unknown = [d for d in doc_ids if d not in known]
        if unknown:
            raise ValueError(
                f"documents not in the index: {unknown[:5]}{' ...' if len(unknown) > 5 else ''}; "
                "rebuild the index over them or drop them from doc_ids"
            )
        return list(doc_ids)

    def unplanned(self, question: str, scope: list[str] | None, error: Exception) -> ProgramResult:
        reason = f"planning failed: {lm_error_reason(error)}"[:500]
        # Said once, by the caller: `collate ask` ends on "error: no answer: <reason>", a run logs
        # "question Q failed: <reason>". Logged here as an error too, the user read it twice (-v shows it).
        logger.info(reason)
        missing = [
            DocumentFailure(doc_id=d.id, stage="plan", reason=reason)
            for d in self.catalog.select(None, within=scope)
        ]
        return ProgramResult(
            answer=f"No answer: {reason}",
            error=reason,
            missing=missing,
            warnings=[reason],
            run_log=build_run_log(question, {}, [], missing),
            trace={"plan": {"question": question, "scope": scope, "error": reason}},
        )


def unreadable(planned: Planned, extracted: Extraction) -> str | None:
    """Why the question failed when not one of its documents could be read (every one's extraction
    failed, e.g. the LM was unreachable), else None: an answer over nothing is not an answer."""
    failed = {f.doc_id for f in extracted.failures}
    if not planned.documents or not set(planned.documents) <= failed:
        return None
    first = extracted.failures[0]
    return f"no document could be read ({len(failed)} failed; first: {first.doc_id}: {first.reason})"[:500]


def assemble(
    question,
    scope,
    planned: Planned,
    extracted: Extraction,
    normalized: Normalized,
    analysis: Analysis,
    answered: Answer,
    records: list[dict],
    covered: Coverage,
) -> ProgramResult:
    trace = {
        "plan": {
            "question": question,
            "scope": scope,
            "plan": planned.plan.model_dump(),
            "assignments": {d: [sq.query for sq in sqs] for d, sqs in planned.assignments.items()},
            "warnings": planned.warnings,
        },
        "extract": {
            "facts": [f.model_dump() for f in extracted.facts],
            "failures": [f.model_dump() for f in extracted.failures],
            "lm_documents": extracted.lm_documents,
            "passages": extracted.passages,
            "merges": [vars(m) for m in extracted.merges],
            "repair_calls": extracted.repair_calls,
            "escalated": extracted.escalated,  # document -> why the cascade's strong model was asked
        },
        "normalize": {"records": normalized.records, "notes": normalized.notes, "nulled": normalized.nulled},
        "code": {"attempts": analysis.attempts, "result": analysis.result},
        "answer": {
            "inputs": {
                "question": question,
                "result": analysis.result,
                "missing": [f.model_dump() for f in extracted.failures],
            },
            "answer": answered.answer,
            "citations": [c.model_dump() for c in answered.citations],
        },
    }
    run_log = build_run_log(question, planned.assignments, extracted.facts, extracted.failures)
    if extracted.cascade is not None:  # per document: escalated or not, dollars paid and strong-only
        run_log["cascade"] = trace["extract"]["cascade"] = extracted.cascade
    return ProgramResult(
        answer=answered.answer,
        records=records,
        code=analysis.code,
        result=analysis.result,
        citations=answered.citations,
        missing=extracted.failures,
        facts=extracted.facts,
        plan=planned.plan,
        run_log=run_log,
        warnings=planned.warnings,
        trace=trace,
        coverage=covered.to_dict(),
        coverage_line=covered.line(question),
    )


def build_program(settings: Settings, store: DocumentStore, facts: FactStore | None = None) -> Analyst:
    """The Analyst over `store`. Facts: `facts` if given, else the store settings.fact_path(store)
    names; none at all when settings.fact_reuse is off (every run asks the LM)."""
    if not settings.fact_reuse:
        facts = None
    elif facts is None:
        facts = FactStore(settings.fact_path(store))
    return Analyst(
        planner=Planner(store.catalog, facts),
        extractor=DocumentExtractor(
            store,
            facts,
            k=settings.k,
            concurrency=settings.concurrency,
            matcher=FieldMatcher() if settings.fuzzy_reuse else None,
            any_model=settings.reuse_facts_from_any_model,
            repair=settings.repair_facts,
            escalate=bool(settings.lm_extractor_escalate),
        ),
        normalizer=Normalizer(batch_size=settings.normalize_batch),
        code_writer=CodeWriter(
            WarmSandboxes(settings.sandbox_limits()),
            rounds=settings.code_rounds,
            timeout=settings.sandbox_timeout,
            sample_records=settings.sample_records,
        ),
        answerer=Answerer(sample_records=settings.sample_records),
        use_unverified=settings.use_unverified,
        wave_size=settings.wave_size,
    )
