"""A second call for the facts that failed the check against their pages, told why.

Why: a quote not found or a value not in its quote is often the model's slip, not the filing's silence;
asked once more with the reason (verification.feedback_for), it usually finds the line. A field the
repair fails to answer keeps its first (flagged) fact.
"""

from __future__ import annotations

import logging

import dspy

from programs.lm.spend import refusal
from programs.stages.cascade import Tokens
from programs.stages.extraction import Asker, DocumentJob, Gate, Pages
from programs.stages.verification import checked, feedback_for
from signatures.types import Fact

logger = logging.getLogger(__name__)


def repaired(
    asker: Asker,
    predictor: dspy.Predict,
    job: DocumentJob,
    new: list[Fact],
    failing: list[Fact],
    gate: Gate,
    pages: Pages,
    tokens: Tokens | None = None,
) -> list[Fact]:
    """One more call of `predictor` for the fields whose facts failed the check; the rest stand."""
    specs = [s for s in job.missing if s.name in {f.field for f in failing}]
    try:
        with gate:
            pred = asker.ask(predictor, job, specs, tokens or Tokens(), feedback_for(failing))
    except Exception as e:  # the first reply still stands, flagged
        if refusal(e):  # the run's budget is spent: the caller keeps what passed and fails the document
            raise
        logger.warning("repair call failed for %s: %s: %s", job.doc.id, type(e).__name__, e)
        return new
    again = {f.field: checked(f, pages) for f in asker.read(job, specs, pred["values"], predictor)}
    return [again.get(f.field, f) if not f.usable else f for f in new]
