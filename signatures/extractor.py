"""Extract: one document's passages + the fields it must yield -> value, unit, quote, page per field."""

import dspy

from signatures.types import ExtractedValue, FieldSpec


class ExtractFacts(dspy.Signature):
    """Read the passages of one filing and report, for each requested field, the value exactly as the filing states it, with its unit, a short verbatim quote and the page, or disclosed=false when the passages do not state it."""

    document: str = dspy.InputField(desc="which filing: symbol, fiscal year, document type")
    questions: list[str] = dspy.InputField(desc="what the analyst asks of this document")
    field_specs: list[FieldSpec] = dspy.InputField()
    passages: list[str] = dspy.InputField(desc="retrieved passages, each prefixed with [page N]")
    feedback: str = dspy.InputField(
        desc="what a check of an earlier reply against the filing found wrong, per field; empty on the first try"
    )
    values: list[ExtractedValue] = dspy.OutputField(desc="one entry per requested field, same order")
