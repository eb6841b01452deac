"""Each extracted fact held against its document by code (retrievers.factcheck), and what to tell the
extractor when it fails: the LM reads, code decides whether what it read is on the page.

A fact whose quote is on another page than cited is kept with the page corrected; one whose quote is
not in the document, or does not print the value, is asked again once with the reason, and if it
still fails it is kept, flagged, and left out of the computation by default.
"""

from __future__ import annotations

from retrievers.factcheck import PAGE_CORRECTED, check
from signatures.types import Fact


def checked(fact: Fact, pages: dict[int, str] | None) -> Fact:
    """The fact with its verdict (and its page corrected when the quote is elsewhere); unchanged
    when the document's pages are not known (nothing to check against)."""
    if pages is None:
        return fact
    verdict = check(fact, pages)
    update = {"verdict": verdict.status, "verdict_reason": verdict.reason}
    if verdict.status == PAGE_CORRECTED:
        update["page"] = verdict.page
    return fact.model_copy(update=update)


def feedback_for(failing: list[Fact]) -> str:
    """One line per failed field, what the check found: the repair call's feedback."""
    return "\n".join(f"{f.field}: {f.verdict_reason}" for f in failing)
