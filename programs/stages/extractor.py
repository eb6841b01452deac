"""DocumentExtractor: ONE predictor, called once per document with all of that document's fields.

Known facts come from the fact store (no LM call when a document's fields are all known). Passages
come from the document's own index: k per field description and per sub-query, deduplicated, each
prefixed "[page N]". Documents run concurrently in one bounded thread pool: retrieval runs ahead, and a
semaphore bounds the LM calls. A document whose call still fails after the LM's own retries becomes a
DocumentFailure, never dropped. With a cascade (COLLATE_LM_EXTRACTOR_ESCALATE), a document whose
facts code doubts is asked again of a strong model (programs/stages/cascade.py says when and why).
"""

from __future__ import annotations

import contextvars
import hashlib
import logging
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field

import dspy
from dspy.utils.exceptions import AdapterParseError

from programs.facts.store import Merge, Reuse
from programs.lm.errors import lm_error_reason
from programs.protocols import DocumentStore
from programs.stages.cascade import (
    CHECK,
    NOT_DISCLOSED,
    PARSE,
    DocumentSpend,
    Escalation,
    Tokens,
    cascade_log,
    undisclosed_suspects,
)
from programs.stages.planner import column_name, fields_of
from programs.stages.spans import PassageRetriever
from programs.stages.verification import checked, feedback_for
from signatures.extractor import ExtractFacts
from signatures.types import Document, DocumentFailure, ExtractedValue, Fact, FieldSpec, SubQuery

logger = logging.getLogger(__name__)

# Threads that retrieve passages ahead of the LM calls (which `settings.concurrency` bounds separately).
RETRIEVAL_THREADS = 64


@dataclass
class DocumentJob:
    """What one document must yield, and what the fact store already knows of it."""

    doc: Document
    subqueries: list[SubQuery]
    fields: list[FieldSpec]
    known: dict[str, Fact]
    missing: list[FieldSpec] = field(default_factory=list)
    passages: list[str] = field(default_factory=list)
    merges: list[Merge] = field(default_factory=list)
    strong: dspy.Predict | None = None  # the cascade's strong predictor for this extraction (Escalation.like)


@dataclass
class DocumentOutcome:
    doc_id: str
    facts: list[Fact]
    failure: DocumentFailure | None = None
    asked_lm: bool = False
    repaired: bool = False  # a second call was made for facts that failed the check
    escalated: str = ""  # why the cascade's strong model was asked (cascade.CHECK, PARSE, NOT_DISCLOSED)
    spend: DocumentSpend = field(default_factory=DocumentSpend)  # tokens by model (cascade runs only)
    # with a cascade: the cheap model's facts of this document, and those of them the store gets only once
    # the second wave passes them (its "not disclosed" ones; the disclosed ones are stored at once)
    cheap: list[Fact] = field(default_factory=list)
    pending: list[Fact] = field(default_factory=list)


@dataclass
class Extraction:
    """Every document's facts in plan order, the documents that failed, and what the LM was shown."""

    facts: list[Fact]
    failures: list[DocumentFailure]
    lm_documents: int  # documents that needed an LM call (the rest came from the fact store)
    passages: dict[str, list[str]]  # document id -> the passages its call was given
    merges: list[Merge] = field(default_factory=list)  # stored facts reused for reworded fields
    repair_calls: int = 0  # second calls for facts that failed the check against their page
    asked: list[str] = field(default_factory=list)  # the documents that needed an LM call, in plan order
    repaired: list[str] = field(default_factory=list)  # the documents asked a second time
    escalated: dict[str, str] = field(default_factory=dict)  # document -> why the strong model was asked
    cascade: dict | None = None  # cascade.cascade_log(...) when a cascade ran, else None


class DocumentExtractor(dspy.Module):
    def __init__(
        self,
        store: DocumentStore,
        facts=None,
        k: int = 5,
        concurrency: int = 16,
        matcher=None,
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

    def forward(self, assignments: dict[str, list[SubQuery]], on_done=None) -> Extraction:
        """on_done(done, total, outcome) is called as each document finishes (progress displays)."""
        strong = self.escalation.like(self.extract) if self.escalation is not None else None
        reuse = self.reuse(strong)
        jobs = [self.prepare(doc_id, sqs, reuse, strong) for doc_id, sqs in assignments.items()]
        outcomes, traces = self.run_all(jobs, self.run_job, on_done)
        if self.escalation is not None:
            outcomes.update(self.second_wave(jobs, outcomes, on_done))
        if dspy.settings.trace is not None:  # plan order, not the order threads finished in
            for job in jobs:
                # an escalated document's cheap call is not what it answered: no demo is made of it
                if not outcomes[job.doc.id].escalated:
                    dspy.settings.trace.extend(traces[job.doc.id])
        if self.escalation is None:
            return collect(jobs, outcomes)
        cheap = getattr(self.extract.lm or dspy.settings.lm, "price", None)
        return collect(jobs, outcomes, (cheap, getattr(self.escalation.predictor.lm, "price", None)))

    def reuse(self, strong: dspy.Predict | None = None) -> Reuse:
        """Which stored facts this extraction may reuse: its own model's and prompt's, and with a cascade
        also the strong model's (the same prompt): never a fact of a model outside the cascade."""
        also: tuple[tuple[str, str], ...] = ()
        if self.escalation is not None and strong is not None:
            also = ((self.escalation.model, prompt_version(strong)),)
        return Reuse(self.model_name(), prompt_version(self.extract), self.any_model, self.matcher, also)

    def run_all(
        self, jobs: list[DocumentJob], task, on_done
    ) -> tuple[dict[str, DocumentOutcome], dict[str, list]]:
        """task(job, gate, stop) for every job in one bounded pool; outcomes and DSPy traces by document id
        (the caller adds the traces to the optimizer's, in plan order)."""
        outcomes: dict[str, DocumentOutcome] = {}
        # Only the LM calls are bounded by `concurrency`; retrieval for the next documents runs while the
        # current wave of calls is in flight, so a wave starts as soon as the previous one returns.
        gate = threading.BoundedSemaphore(self.concurrency)
        stop = (
            threading.Event()
        )  # set on Ctrl-C: calls in flight finish (their facts are kept), no new ones start
        pool = ThreadPoolExecutor(
            max_workers=max(1, min(len(jobs), RETRIEVAL_THREADS)), thread_name_prefix="extract"
        )
        try:
            # Each task runs in a copy of the caller's context: DSPy settings (LM, usage tracker) live there.
            futures = [
                pool.submit(contextvars.copy_context().run, self.traced_job, job, gate, stop, task)
                for job in jobs
            ]
            traces = {}
            for future in as_completed(futures):
                outcome, traces[outcome.doc_id] = future.result()
                outcomes[outcome.doc_id] = outcome
                if on_done:
                    on_done(len(outcomes), len(jobs), outcome)
        except BaseException:
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown()
        return outcomes, traces

    def traced_job(self, job: DocumentJob, gate, stop, task=None) -> tuple[DocumentOutcome, list]:
        """task (run_job by default) with its own trace: an optimizer bootstraps its extractor demo from the
        trace, and threads appending to one list in finishing order made that demo, and so every later
        extraction prompt, depend on timing (an identical compile rerun missed the cache on 6 extraction calls)."""
        task = task or self.run_job
        if dspy.settings.trace is None:
            return task(job, gate, stop), []
        with dspy.context(trace=[]):
            outcome = task(job, gate, stop)
            return outcome, list(dspy.settings.trace)

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

    def run_job(self, job: DocumentJob, gate: threading.Semaphore, stop: threading.Event) -> DocumentOutcome:
        if not job.missing:
            return DocumentOutcome(job.doc.id, [job.known[f.name] for f in job.fields])
        spend = DocumentSpend()
        try:
            job.passages = self.passages(job)
            with gate:
                if stop.is_set():
                    raise InterruptedError("the run was interrupted before this document was asked")
                pred = self.ask(self.extract, job, job.missing, spend.cheap)
            pages = self.page_texts(job.doc.id)
            new = [
                checked(f, pages) for f in self.read(job, job.missing, pred["values"])
            ]  # not pred.values(): a method
            failing = [f for f in new if not f.usable]
            if failing and self.escalation is not None:
                return self.escalated(job, CHECK, new, gate, pages, spend)
            if failing and self.repair:
                return self.finish(job, self.repaired(job, new, failing, gate, pages), repaired=True)
            # with a cascade, a "not disclosed" may still go to the strong model in the second wave
            hold = self.escalation is not None and any(not f.disclosed for f in new)
            return self.finish(job, new, spend=spend, hold=hold)
        except AdapterParseError as e:
            if self.escalation is None:
                return self.failed(job, e)
            return self.escalated(job, PARSE, [], gate, self.page_texts(job.doc.id), spend)
        except Exception as e:  # one document never sinks the run
            return self.failed(job, e, spend)

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

    def escalated(
        self, job: DocumentJob, why: str, cheap: list[Fact], gate, pages, spend: DocumentSpend
    ) -> DocumentOutcome:
        """The document asked again, whole, of the cascade's strong model, with its own repair call; its
        facts replace the cheap ones. Its calls stay out of an optimizer's trace: the strong predictor is
        not one the program saves. If the strong call fails, the cheap facts stand in this answer (the failing ones
        flagged), but only the disclosed, verified ones are stored: a doubted fact is never reused, so a
        later run asks again. An unreadable cheap reply leaves nothing to stand: the document failed."""
        assert job.strong is not None
        strong, repaired = job.strong, False
        try:
            with dspy.context(trace=None):
                with gate:
                    pred = self.ask(strong, job, job.missing, spend.strong)
                new = [checked(f, pages) for f in self.read(job, job.missing, pred["values"], strong)]
                failing = [f for f in new if not f.usable]
                if failing and self.repair:
                    new, repaired = self.repaired(job, new, failing, gate, pages, strong, spend.strong), True
        except Exception as e:
            logger.warning("escalation of %s (%s) failed: %s", job.doc.id, why, lm_error_reason(e)[:300])
            if why == PARSE:
                return self.failed(job, e, spend, escalated=why)
            trusted = [f for f in cheap if f.usable and f.disclosed]
            return self.finish(job, cheap, spend=spend, escalated=why, store=trusted)
        return self.finish(job, new, repaired=repaired, spend=spend, escalated=why)

    def second_wave(
        self, jobs: list[DocumentJob], outcomes: dict[str, DocumentOutcome], on_done
    ) -> dict[str, DocumentOutcome]:
        """The documents whose "not disclosed" their doctype's other documents contradict
        (cascade.undisclosed_suspects), asked of the strong model; the facts the rule let pass are stored.

        Repeated while a wave's strong answers turn the evidence against another document: a peer the
        cheap model had also left undisclosed hid it (seen on the demo: 3 of 5 peers disclosing before
        the wave, 5 of 5 after). Each document escalates at most once, so this ends."""
        docs, current, redone = [j.doc for j in jobs], dict(outcomes), {}
        while True:
            asked = {
                d
                for d, o in current.items()
                if o.asked_lm and not o.escalated and not o.failure and d not in redone
            }
            suspects = undisclosed_suspects(docs, {d: o.facts for d, o in current.items()}, asked)
            if not suspects:
                break
            for doc_id, fields in suspects.items():
                logger.info(
                    "escalating %s: %s not disclosed, unlike its doctype's other documents", doc_id, fields
                )

            def again(job: DocumentJob, gate, stop) -> DocumentOutcome:
                first = outcomes[job.doc.id]
                if stop.is_set():  # interrupted: the doubted facts are not stored (the disclosed ones are)
                    return self.finish(job, first.cheap, spend=first.spend, store=[])
                return self.escalated(
                    job, NOT_DISCLOSED, first.cheap, gate, self.page_texts(job.doc.id), first.spend
                )

            wave, _ = self.run_all([j for j in jobs if j.doc.id in suspects], again, on_done)
            current.update(wave)
            redone.update(wave)
        for doc_id, outcome in outcomes.items():
            if doc_id not in redone and outcome.pending and self.facts is not None:
                self.facts.put_many(outcome.pending)
        return redone

    def repaired(
        self,
        job: DocumentJob,
        new: list[Fact],
        failing: list[Fact],
        gate,
        pages,
        predictor: dspy.Predict | None = None,
        tokens: Tokens | None = None,
    ) -> list[Fact]:
        """One more call (of `predictor`, the extractor's own by default) for the fields whose facts failed
        the check, told why; a field the repair fails to answer keeps its first (flagged) fact."""
        predictor = predictor or self.extract
        specs = [s for s in job.missing if s.name in {f.field for f in failing}]
        try:
            with gate:
                pred = self.ask(predictor, job, specs, tokens or Tokens(), feedback_for(failing))
        except Exception as e:  # the first reply still stands, flagged
            logger.warning("repair call failed for %s: %s: %s", job.doc.id, type(e).__name__, e)
            return new
        again = {f.field: checked(f, pages) for f in self.read(job, specs, pred["values"], predictor)}
        return [again.get(f.field, f) if not f.usable else f for f in new]

    def page_texts(self, doc_id: str) -> dict[int, str] | None:
        """The document's pages as the index read them, for the check; None when the store cannot say."""
        reader = getattr(self.store, "page_texts", None)
        return reader(doc_id) if reader is not None else None

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

    def finish(
        self,
        job: DocumentJob,
        new: list[Fact],
        repaired: bool = False,
        spend: DocumentSpend | None = None,
        escalated: str = "",
        hold: bool = False,
        store: list[Fact] | None = None,
    ) -> DocumentOutcome:
        """Store the new facts (`store` of them when given; with `hold`, the "not disclosed" ones wait for the
        cascade's second wave, which may doubt them: the rest are stored now, so a stopped run keeps them)
        and give every field of the document one, reused, new or not disclosed."""
        kept = new if store is None else store
        held = [f for f in kept if not f.disclosed] if hold else []
        now = [f for f in kept if f.disclosed] if hold else kept
        if self.facts is not None and now:
            self.facts.put_many(now)
        got = {f.field: f for f in new} | job.known
        unanswered = [s.name for s in job.missing if s.name not in got]
        if unanswered:
            logger.warning("%s: the reply left out %s", job.doc.id, unanswered)
        facts = [
            got.get(s.name)
            or Fact(doc_id=job.doc.id, field=s.name, description=s.description, disclosed=False)
            for s in job.fields
        ]
        return DocumentOutcome(
            job.doc.id,
            facts,
            asked_lm=True,
            repaired=repaired,
            escalated=escalated,
            spend=spend or DocumentSpend(),
            cheap=list(new) if self.escalation is not None and not escalated else [],
            pending=held,
        )

    def failed(
        self, job: DocumentJob, error: Exception, spend: DocumentSpend | None = None, escalated: str = ""
    ) -> DocumentOutcome:
        reason = lm_error_reason(error)[:500]
        logger.warning("extraction failed for %s: %s", job.doc.id, reason)
        return DocumentOutcome(
            job.doc.id,
            list(job.known.values()),
            DocumentFailure(doc_id=job.doc.id, stage="extract", reason=reason),
            asked_lm=True,
            escalated=escalated,
            spend=spend or DocumentSpend(),
        )

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


def collect(jobs: list[DocumentJob], outcomes: dict[str, DocumentOutcome], prices=None) -> Extraction:
    """Outcomes in plan order (threads finish in any order). prices: (cheap, strong) when a cascade ran."""
    ordered = [outcomes[j.doc.id] for j in jobs]
    escalated = {o.doc_id: o.escalated for o in ordered if o.escalated}
    cascade = None
    if prices is not None:
        cheap, strong = prices
        asked = [o for o in ordered if o.asked_lm]
        cascade = cascade_log(
            len(asked),
            escalated,
            {o.doc_id: o.spend.usd(cheap, strong) for o in asked},
            {o.doc_id: o.spend.usd_strong_only(strong, bool(o.escalated)) for o in asked},
        )
    return Extraction(
        facts=[f for o in ordered for f in o.facts],
        failures=[o.failure for o in ordered if o.failure],
        lm_documents=sum(o.asked_lm for o in ordered),
        passages={j.doc.id: j.passages for j in jobs},
        merges=[m for j in jobs for m in j.merges],
        repair_calls=sum(o.repaired for o in ordered),
        asked=[o.doc_id for o in ordered if o.asked_lm],
        repaired=[o.doc_id for o in ordered if o.repaired],
        escalated=escalated,
        cascade=cascade,
    )
