"""Plan: question + catalog summary -> per-document sub-queries with metadata restrictions."""

import dspy

from signatures.types import FieldSpec, Plan


class PlanQuestion(dspy.Signature):
    """Plan per-document sub-queries that extract every raw value the question's computation needs, restricted to the documents that hold them (exact doctype, year and symbol values from the catalog; leave a restriction empty to mean all), with short field descriptions in the filings' language."""

    question: str = dspy.InputField()
    catalog: str = dspy.InputField(
        desc="the documents in scope: doctypes, fiscal years and symbols with counts; use these exact values in restrictions"
    )
    feedback: str = dspy.InputField(desc="problems found in a previous plan, empty on the first try")
    known_fields: list[FieldSpec] = dspy.InputField(
        desc="fields already extracted from these documents; to ask for one of them again, reuse its exact "
        "name, description, type and unit (its values are then not read again)"
    )
    plan: Plan = dspy.OutputField(
        desc="sub-queries; each field names one raw value to read from a document (not a derived result), "
        "with type and canonical unit (money in CNY or USD units, percents as percent points)"
    )
