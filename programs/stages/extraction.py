"""What an extraction is made of: a document's job, its outcome, and the Extraction the stage returns.

Shared by the extractor (programs/stages/extractor.py) and the parts it was split into by concern:
batching (extract_batches.py), repair (extract_repair.py), the cascade's escalation
(extract_escalation.py) and the fact store's write policy (extract_facts.py).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import dspy

from programs.facts.store import Merge
from programs.stages.cascade import DocumentSpend, Tokens, cascade_log
from signatures.types import Document, DocumentFailure, ExtractedValue, Fact, FieldSpec, SubQuery

Gate = threading.BoundedSemaphore  # bounds the LM calls in flight (settings.concurrency)
Stop = threading.Event  # set on Ctrl-C: calls in flight finish, no new one starts
Pages = dict[int, str] | None  # a document's page texts, for the check; None: nothing to check against


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


# One document's work in the pool: (job, gate, stop) -> its outcome.
Task = Callable[[DocumentJob, Gate, Stop], DocumentOutcome]


class Asker(Protocol):
    """What repair and escalation need of the extractor: one call, and its reply read as facts."""

    def ask(
        self,
        predictor: dspy.Predict,
        job: DocumentJob,
        specs: list[FieldSpec],
        tokens: Tokens,
        feedback: str = "",
    ) -> Any: ...

    def read(
        self,
        job: DocumentJob,
        specs: list[FieldSpec],
        values: list[ExtractedValue],
        predictor: dspy.Predict | None = None,
    ) -> list[Fact]: ...


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
