"""The catalog draft's LM fallback: ask for the fields the rules could not find, keep what the text bears out.

The LM reads, code decides: a symbol is kept only when it has a symbol's shape and stands in the first
pages as a word, a year only when those pages print it, a doctype only when it is one of the allowed
names for the document's language. Rule findings are never replaced, and a row the LM completes is
drafted with confidence "low" so a person checks it. A failed call leaves its row unsettled, noted.
"""

from __future__ import annotations

import re

import dspy

from retrievers.catalog_draft.draft import DraftRow
from retrievers.catalog_draft.finding import Finding
from retrievers.catalog_draft.rules_en import DOCTYPES as US_DOCTYPES
from retrievers.catalog_draft.rules_zh import DOCTYPES as A_SHARE_DOCTYPES
from signatures.catalog import DraftCatalogRow

# Bounds each call's prompt to the cover and the start of the next page, where the identity is printed:
# the drafted first 3 pages run 4,500-12,700 characters in the 22 FinanceBench dev filings (median 9,900).
PROMPT_CHARS = 8000
_SHAPES = {"en": re.compile(r"[A-Z]{1,5}(?:[.-][A-Z]{1,2})?"), "zh": re.compile(r"\d{6}")}
LM_RULE = "lm:checked-against-text"


class CatalogFallback(dspy.Module):
    def __init__(self):
        super().__init__()
        self.draft = dspy.Predict(DraftCatalogRow)

    def forward(self, row: DraftRow) -> dspy.Prediction:
        known = "; ".join(f"{name}: {f.value}" for name, f in row.found.items()) or "nothing"
        return self.draft(
            file_name=row.file.name,
            first_pages=row.text[:PROMPT_CHARS],
            known=known,
            doctypes=list(doctypes_for(row)),
        )


def doctypes_for(row: DraftRow) -> tuple[str, ...]:
    return A_SHARE_DOCTYPES if _language(row) == "zh" else US_DOCTYPES


def fill_unsettled(rows: list[DraftRow], fallback: CatalogFallback | None = None) -> int:
    """Ask the LM about every readable unsettled row; returns how many it settled."""
    fallback = fallback or CatalogFallback()
    settled = 0
    for row in rows:
        if row.settled or row.problem or row.conflict or row.duplicate_of is not None or not row.text.strip():
            continue
        try:
            answer = fallback(row=row)
        except Exception as exc:  # an LM or parse failure costs this row its fallback, never the draft
            row.notes.append(f"the LM fallback failed ({type(exc).__name__}: {str(exc)[:200]})")
            continue
        for name in [*row.missing(), "company"]:
            if name == "company" and "company" in row.found:
                continue
            value, why_not = check(name, getattr(answer, name, ""), row)
            if value is not None:
                row.found[name] = Finding(value, LM_RULE, sure=False)
            elif why_not:
                row.notes.append(f"the LM answered {name} {why_not}")
        settled += row.settled
    return settled


def check(name: str, answer, row: DraftRow) -> tuple[str | int | None, str]:
    """(the value to keep, or None with why not; "" when the LM gave nothing)."""
    text = str(answer or "").strip()
    if not text or text.lower() in ("none", "null", "unknown", "n/a"):
        return None, ""
    if name == "symbol":
        symbol = text.upper() if _language(row) == "en" else text
        if not _SHAPES[_language(row)].fullmatch(symbol):
            return None, f"{text!r}, which is not a symbol's shape"
        if not re.search(rf"(?<![\w.-]){re.escape(symbol)}(?![\w-])", row.text):
            return None, f"{text!r}, which the first pages do not print"
        return symbol, ""
    if name == "year":
        digits = re.fullmatch(r"((?:19|20)\d{2})(?:\.0)?", text)
        if not digits:
            return None, f"{text!r}, which is not a year"
        if digits.group(1) not in row.text:
            return None, f"{text!r}, which the first pages do not print"
        return int(digits.group(1)), ""
    if name == "doctype":
        allowed = {d.casefold(): d for d in doctypes_for(row)}
        if text.casefold() not in allowed:
            return None, f"{text!r}, which is not one of {', '.join(doctypes_for(row))}"
        return allowed[text.casefold()], ""
    if " ".join(text.split()) not in " ".join(row.text.split()):
        return None, f"{text!r}, which the first pages do not print"
    return text, ""


def _language(row: DraftRow) -> str:
    found = row.found.get("language")
    return str(found.value) if found else "en"
