"""DocumentExtractor: ONE predictor, called once per document with all of that document's fields.

Known facts come from the fact store (no LM call when a document's fields are all known). Passages
come from the document's own index: k per field description and per sub-query, deduplicated, each
prefixed "[page N]". Documents run concurrently in one bounded thread pool (extract_batches.py). A
document whose call still fails after the LM's own retries becomes a DocumentFailure, never dropped.
Facts that fail the check against their pages are asked once more (extract_repair.py); with a cascade
(COLLATE_LM_EXTRACTOR_ESCALATE) a document whose facts code doubts is asked again of a strong model
(extract_escalation.py; programs/stages/cascade.py says when and why). What is stored, and when, is
extract_facts.py's policy.
"""

from __future__ import annotations

import functools
import hashlib
import logging

import dspy
from dspy.utils.exceptions import AdapterParseError

from programs.facts.field_match import FieldMatcher
from programs.facts.store import FactStore, Reuse
from programs.lm.spend import BudgetReached, refusal
from programs.protocols import DocumentStore
from programs.stages.cascade import CHECK, PARSE, DocumentSpend, Escalation, Tokens
from programs.stages.extract_batches import OnDone, extend_trace, run_all
from programs.stages.extract_escalation import Escalating
from programs.stages.extract_facts import FactWrites
from programs.stages.extract_repair import repaired
from programs.stages.extraction import DocumentJob, DocumentOutcome, Extraction, Gate, Pages, Stop, collect
from programs.stages.planner import column_name, fields_of
from programs.stages.spans import PassageRetriever
from programs.stages.verification import checked
from signatures.extractor import ExtractFacts
from signatures.types import ExtractedValue, Fact, FieldSpec, SubQuery

logger = logging.getLogger(__name__)


class NotAsked(InterruptedError):
    """The run stopped (its budget, Ctrl-C) before this document's call was sent."""


class DocumentExtractor(dspy.Module):
    def __init__(
        self,
        store: DocumentStore,
        facts: FactStore | None = None,
        k: int = 5,
        concurrency: int = 16,
        matcher: FieldMatcher | None = None,
        any_model: bool = False,
        repair: bool = True,
        escalate: bool = False,
    ):
        """store: the index (catalog + per-document search); facts: a FactStore to reuse and keep facts
        in, or None to always ask; k passages per query; concurrency: LM calls in flight at once;
        matcher: a FieldMatcher to reuse facts of reworded fields (None: exact descriptions only);
        any_model: reuse facts another model or extractor prompt produced; repair: ask a document once
        more for the facts that failed the check against its pages; escalate: run the cascade (its strong
        model's LM is attached by configure())."""
        super().__init__()
        self.store, self.facts, self.k, self.concurrency = store, facts, k, concurrency
        self.matcher, self.any_model, self.repair = matcher, any_model, repair
        self.extract = dspy.Predict(ExtractFacts)
        self.escalation = Escalation() if escalate else None
        self.retrieve = PassageRetriever(store)  # a module so traces show each search (no predictor)

    def forward(self, assignments: dict[str, list[SubQuery]], on_done: OnDone = None) -> Extraction:
        """on_done(done, total, outcome) is called as each document finishes (progress displays)."""
        strong = self.escalation.like(self.extract) if self.escalation is not None else None
        reuse = self.reuse(strong)
        jobs = [self.prepare(doc_id, sqs, reuse, strong) for doc_id, sqs in assignments.items()]
        writes = FactWrites(self.facts, cascade=self.escalation is not None)
        escalating = (
            Escalating(self, writes, self.page_texts, self.repair, self.concurrency)
            if self.escalation is not None
            else None
        )
        task = functools.partial(self.run_job, writes, escalating)
        outcomes, traces = run_all(jobs, task, on_done, self.concurrency)
        if escalating is not None:
            outcomes.update(escalating.second_wave(jobs, outcomes, on_done))
        if dspy.settings.trace is not None:  # plan order, not the order threads finished in
            for job in jobs:
                # an escalated document's cheap call is not what it answered: no demo is made of it
                if not outcomes[job.doc.id].escalated:
                    extend_trace(traces[job.doc.id])
        if self.escalation is None:
            extraction = collect(jobs, outcomes)
        else:
            cheap = getattr(self.extract.lm or dspy.settings.lm, "price", None)
            extraction = collect(
                jobs, outcomes, (cheap, getattr(self.escalation.predictor.lm, "price", None))
            )
        if self.facts is not None:  # how often this model's facts needed a repair: what later quotes expect
            self.facts.record_extractions(self.model_name(), extraction.asked, extraction.repaired)
        return extraction

    def reuse(self, strong: dspy.Predict | None = None) -> Reuse:
        """Which stored facts this extraction may reuse: its own model's and prompt's, and with a cascade
        also the strong model's (the same prompt): never a fact of a model outside the cascade."""
        also: tuple[tuple[str, str], ...] = ()
        if self.escalation is not None and strong is not None:
            also = ((self.escalation.model, prompt_version(strong)),)
        return Reuse(self.model_name(), prompt_version(self.extract), self.any_model, self.matcher, also)

    def prepare(
        self, doc_id: str, subqueries: list[SubQuery], reuse: Reuse, strong: dspy.Predict | None = None
    ) -> DocumentJob:
        doc = self.store.catalog.get(doc_id)
        fields = fields_of(subqueries)
        # only facts read from the content the index holds now (a replaced, rebuilt filing is read again)
        content = doc.content_hash or ""
        known, merges = (
            self.facts.lookup(doc_id, fields, reuse, content) if self.facts is not None else ({}, [])
        )
        missing = [f for f in fields if f.name not in known]
        return DocumentJob(doc, subqueries, fields, known, missing, merges=merges, strong=strong)

    def run_job(
        self, writes: FactWrites, escalating: Escalating | None, job: DocumentJob, gate: Gate, stop: Stop
    ) -> DocumentOutcome:
        """One document: ask, check against its pages, then repair, escalate or store as the policy says."""
        if not job.missing:
            return DocumentOutcome(job.doc.id, [job.known[f.name] for f in job.fields])
        spend = DocumentSpend()
        try:
            job.passages = self.passages(job)
            with gate:
                if stop.is_set():
                    raise NotAsked("the run was interrupted before this document was asked")
                pred = self.ask(self.extract, job, job.missing, spend.cheap)
            pages = self.page_texts(job.doc.id)
            new = [
                checked(f, pages) for f in self.read(job, job.missing, pred["values"])
            ]  # not pred.values(): a method
            failing = [f for f in new if not f.usable]
            if failing and escalating is not None:
                return escalating.escalated(job, CHECK, new, gate, pages, spend)
            if failing and self.repair:
                try:
                    fixed = repaired(self, self.extract, job, new, failing, gate, pages)
                except BudgetReached as e:  # the repair was refused: what passed the check is kept (paid
                    # for), the document fails, and a resume asks only its other fields, repair included
                    writes.keep([f for f in new if f.usable])
                    return writes.failed(job, e, spend, asked=False)
                return writes.finish(job, fixed, repaired=True)
            # with a cascade, a "not disclosed" may still go to the strong model in the second wave
            hold = escalating is not None and any(not f.disclosed for f in new)
            return writes.finish(job, new, spend=spend, hold=hold)
        except NotAsked as e:
            return writes.failed(job, e, spend, asked=False)
        except AdapterParseError as e:
            if escalating is None:
                return writes.failed(job, e)
            return escalating.escalated(job, PARSE, [], gate, self.page_texts(job.doc.id), spend)
        except Exception as e:  # one document never sinks the run; a refused one was never asked
            return writes.failed(job, e, spend, asked=not refusal(e))

    def ask(
        self,
        predictor: dspy.Predict,
        job: DocumentJob,
        specs: list[FieldSpec],
        tokens: Tokens,
        feedback: str = "",
    ):
        """One extraction call; with a cascade its tokens are added to `tokens` (what the document cost)."""
        if self.escalation is None:
            return predictor(**self.inputs(job, specs, feedback))
        with dspy.track_usage() as usage:  # nested: the run's own tracker still gets every call
            try:
                return predictor(**self.inputs(job, specs, feedback))
            finally:
                tokens.add(usage.get_total_tokens())

    def page_texts(self, doc_id: str) -> Pages:
        """The document's pages as the index read them, for the check; None when the store cannot say."""
        return self.store.page_texts(doc_id)

    def passages(self, job: DocumentJob) -> list[str]:
        """k passages per missing field (its description, helped by the words the filing would print for
        it: the planner's search terms) and per sub-query, deduplicated, best first."""
        queries = [(f.description or f.name, f.search_terms) for f in job.missing] + [
            (sq.query, []) for sq in job.subqueries
        ]
        seen, texts = set(), []
        for query, terms in queries:
            for p in self.retrieve(document=job.doc.id, query=query, k=self.k, terms=terms).passages:
                key = (p.page, p.text)
                if key not in seen:
                    seen.add(key)
                    texts.append(f"[page {p.page}] {p.text}")
        return texts

    def inputs(self, job: DocumentJob, specs: list[FieldSpec], feedback: str = "") -> dict:
        d = job.doc
        return dict(
            document=f"{d.symbol} fiscal year {d.year} {d.doctype} (id {d.id})",
            questions=[sq.query for sq in job.subqueries],
            field_specs=specs,
            passages=job.passages,
            feedback=feedback,
        )

    def read(
        self,
        job: DocumentJob,
        specs: list[FieldSpec],
        values: list[ExtractedValue],
        predictor: dspy.Predict | None = None,
    ) -> list[Fact]:
        """The reply's entries as facts of this document, with their provenance (the model of `predictor`,
        the extractor's own by default, that answered); unanswered fields left out."""
        predictor = predictor or self.extract
        by_name = match_values(specs, values or [])
        model, version = self.model_name(predictor), prompt_version(predictor)
        new = []
        for spec in specs:
            v = by_name.get(spec.name)
            if v is None:
                continue  # not answered: left unknown, so a later run asks again
            disclosed = bool(v.disclosed and v.value not in (None, ""))
            new.append(
                Fact(
                    doc_id=job.doc.id,
                    field=spec.name,
                    description=spec.description,
                    disclosed=disclosed,
                    value=v.value if disclosed else None,
                    unit=v.unit if disclosed else None,
                    quote=v.quote,
                    page=v.page,
                    model=model,
                    prompt_version=version,
                    field_type=spec.type,
                    field_unit=spec.unit,
                    content_hash=job.doc.content_hash or "",
                )
            )
        return new

    def model_name(self, predictor: dspy.Predict | None = None) -> str:
        lm = (predictor or self.extract).lm or dspy.settings.lm
        return str(getattr(lm, "model", "") or "")


def match_values(specs: list[FieldSpec], values: list[ExtractedValue]) -> dict[str, ExtractedValue]:
    """Reply entries by field name; a mangled name ('Capital Adequacy Ratio') matches by its snake_case
    form, and when nothing matches but the counts agree, by position (the signature asks for the same order)."""
    by_name = {column_name(v.field): v for v in values}
    matched = {s.name: by_name[s.name] for s in specs if s.name in by_name}
    if not matched and len(values) == len(specs):
        matched = {s.name: v for s, v in zip(specs, values, strict=True)}
    return matched


def prompt_version(predictor: dspy.Predict) -> str:
    """Short hash of what shapes the extraction prompt: instructions, fields and demos."""
    sig = predictor.signature
    text = sig.instructions + "|" + ",".join(sig.fields) + "|" + str(len(predictor.demos))
    return hashlib.sha256(text.encode()).hexdigest()[:12]
