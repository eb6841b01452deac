"""The fact store's write policy for an extraction: what is stored when, and what each field gets.

A fact the cascade may still doubt ("not disclosed" while the second wave may ask the strong model) waits;
everything else is stored as soon as its document is done, so a stopped run keeps it. A document the
escalation could not settle stores only the disclosed, verified facts: a doubted fact is never reused.
"""

from __future__ import annotations

import logging

from programs.facts.store import FactStore
from programs.lm.errors import lm_error_reason
from programs.stages.cascade import DocumentSpend
from programs.stages.extraction import DocumentJob, DocumentOutcome
from signatures.types import DocumentFailure, Fact

logger = logging.getLogger(__name__)


class FactWrites:
    def __init__(self, facts: FactStore | None, cascade: bool):
        """facts: the store (None: keep nothing); cascade: a cascade runs (the cheap facts are kept aside)."""
        self.facts, self.cascade = facts, cascade

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
        self.keep(now)
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
            cheap=list(new) if self.cascade and not escalated else [],
            pending=held,
        )

    def keep(self, facts: list[Fact]) -> None:
        """Store these facts now, whatever becomes of their document (a failure stores nothing else)."""
        if self.facts is not None and facts:
            self.facts.put_many(facts)

    def failed(
        self,
        job: DocumentJob,
        error: Exception,
        spend: DocumentSpend | None = None,
        escalated: str = "",
        asked: bool = True,
    ) -> DocumentOutcome:
        """The document failed: its stored facts stand, the rest are its failure (nothing is stored).
        asked=False: the run stopped (a budget, Ctrl-C) before it was asked; the stop is reported once by
        the run, so this is no warning (a budget-stopped compile printed one per document left)."""
        reason = lm_error_reason(error)[:500]
        if asked:
            logger.warning("extraction failed for %s: %s", job.doc.id, reason)
        else:
            logger.info("extraction not asked for %s: %s", job.doc.id, reason)
        return DocumentOutcome(
            job.doc.id,
            list(job.known.values()),
            DocumentFailure(doc_id=job.doc.id, stage="extract", reason=reason),
            asked_lm=asked,
            escalated=escalated,
            spend=spend or DocumentSpend(),
        )

    def release(self, outcomes: dict[str, DocumentOutcome], redone: dict[str, DocumentOutcome]) -> None:
        """After the second wave: the held facts of the documents it did not ask again are stored."""
        for doc_id, outcome in outcomes.items():
            if doc_id not in redone and outcome.pending and self.facts is not None:
                self.facts.put_many(outcome.pending)
