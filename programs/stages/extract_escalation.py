"""The cascade's escalation inside an extraction: a document code doubts is asked again, whole, of the
strong model (programs/stages/cascade.py says when; this module does it).

Two ways in: at once, when the cheap model's facts fail the check or its reply cannot be read; and in
second waves, when a document says "not disclosed" for a field its doctype's other documents disclose.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import dspy

from programs.lm.errors import lm_error_reason
from programs.stages.cascade import NOT_DISCLOSED, PARSE, DocumentSpend, undisclosed_suspects
from programs.stages.extract_batches import OnDone, run_all
from programs.stages.extract_facts import FactWrites
from programs.stages.extract_repair import repaired
from programs.stages.extraction import Asker, DocumentJob, DocumentOutcome, Gate, Pages, Stop
from programs.stages.verification import checked
from signatures.types import Fact

logger = logging.getLogger(__name__)


class Escalating:
    def __init__(
        self,
        asker: Asker,
        writes: FactWrites,
        page_texts: Callable[[str], Pages],
        repair: bool,
        concurrency: int,
    ):
        """asker: the extractor (its call and its reading of a reply); writes: the fact store's policy;
        page_texts: a document's pages for the check; repair: the strong model gets a repair call too."""
        self.asker, self.writes, self.page_texts = asker, writes, page_texts
        self.repair, self.concurrency = repair, concurrency

    def escalated(
        self, job: DocumentJob, why: str, cheap: list[Fact], gate: Gate, pages: Pages, spend: DocumentSpend
    ) -> DocumentOutcome:
        """The document asked again, whole, of the cascade's strong model, with its own repair call; its
        facts replace the cheap ones. Its calls stay out of an optimizer's trace: the strong predictor is
        not one the program saves. If the strong call fails, the cheap facts stand in this answer (the failing ones
        flagged), but only the disclosed, verified ones are stored: a doubted fact is never reused, so a
        later run asks again. An unreadable cheap reply leaves nothing to stand: the document failed."""
        assert job.strong is not None
        strong, again = job.strong, False
        try:
            with dspy.context(trace=None):
                with gate:
                    pred = self.asker.ask(strong, job, job.missing, spend.strong)
                new = [checked(f, pages) for f in self.asker.read(job, job.missing, pred["values"], strong)]
                failing = [f for f in new if not f.usable]
                if failing and self.repair:
                    new = repaired(self.asker, strong, job, new, failing, gate, pages, spend.strong)
                    again = True
        except Exception as e:
            logger.warning("escalation of %s (%s) failed: %s", job.doc.id, why, lm_error_reason(e)[:300])
            if why == PARSE:
                return self.writes.failed(job, e, spend, escalated=why)
            trusted = [f for f in cheap if f.usable and f.disclosed]
            return self.writes.finish(job, cheap, spend=spend, escalated=why, store=trusted)
        return self.writes.finish(job, new, repaired=again, spend=spend, escalated=why)

    def second_wave(
        self, jobs: list[DocumentJob], outcomes: dict[str, DocumentOutcome], on_done: OnDone
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

            def again(job: DocumentJob, gate: Gate, stop: Stop) -> DocumentOutcome:
                first = outcomes[job.doc.id]
                if stop.is_set():  # interrupted: the doubted facts are not stored (the disclosed ones are)
                    return self.writes.finish(job, first.cheap, spend=first.spend, store=[])
                return self.escalated(
                    job, NOT_DISCLOSED, first.cheap, gate, self.page_texts(job.doc.id), first.spend
                )

            wave, _ = run_all([j for j in jobs if j.doc.id in suspects], again, on_done, self.concurrency)
            current.update(wave)
            redone.update(wave)
        self.writes.release(outcomes, redone)
        return redone
