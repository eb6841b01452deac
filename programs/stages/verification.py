"""Each extracted fact held against its document by code (factcheck.check), and what to tell the
extractor when it fails: the LM reads, code decides whether what it read is on the page.

A fact whose quote is on another page than cited is kept with the page corrected; one whose quote is
not in the document, or does not print the value, is asked again once with the reason, and if it
still fails it is kept, flagged, and left out of the computation by default.
"""

from __future__ import annotations

import re

from factcheck.check import PAGE_CORRECTED, VALUE_NOT_IN_QUOTE, VERIFIED, check
from signatures.types import Fact

# Fields whose value the reader counts off the quoted lines ("3 female executives" from a table of
# names): the number is not printed, so only the quote can be checked. Seen on the synthetic
# executive tables, where every such count failed as value_not_in_quote while its quote was on the page.
# Only while the quote prints no count of its own: "人数 154" given as 194 is a misread count, not a
# counted one (found by a proxy corrupting a cheap extractor's replies); an age in a row of names is no count.
COUNTED_UNITS = ("count", "people")
PRINTED_COUNT = re.compile(
    r"(?:人数|人员|员工|职工|总数|合计|共计?|number of [a-z ]{0,30}?|headcount|employees|total)[^\d\n]{0,6}\d"
    r"|\d[\d,]*\s*(?:人|名|次|家|位|people|persons|employees|members)",
    re.I,
)


def checked(fact: Fact, pages: dict[int, str] | None) -> Fact:
    """The fact with its verdict (and its page corrected when the quote is elsewhere); unchanged
    when the document's pages are not known (nothing to check against)."""
    if pages is None:
        return fact
    verdict = check(fact, pages)
    status, reason = verdict.status, verdict.reason
    if (
        status == VALUE_NOT_IN_QUOTE
        and fact.field_unit in COUNTED_UNITS
        and not PRINTED_COUNT.search(verdict.matched)
    ):
        status = VERIFIED if verdict.page == fact.page else PAGE_CORRECTED
        reason = f"a count read off the quoted lines (not printed as a number); the quote is on page {verdict.page}"
    update: dict[str, str | int | float | None] = {
        "verdict": status,
        "verdict_reason": reason,
        "scale": verdict.scale,
        "scale_source": verdict.scale_source,
    }
    if status == PAGE_CORRECTED:
        update["page"] = verdict.page
    return fact.model_copy(update=update)


def feedback_for(failing: list[Fact]) -> str:
    """One line per failed field, what the check found: the repair call's feedback."""
    return "\n".join(f"{f.field}: {f.verdict_reason}" for f in failing)
