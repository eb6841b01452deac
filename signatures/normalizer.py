"""Normalize: raw extracted values the deterministic rules could not parse -> typed canonical values."""

from typing import Any

import dspy

from signatures.types import FieldSpec, Plain


class RawValue(Plain):
    key: str  # "<doc_id>:<field>", echoed back so code can attach the value to its record
    field: str
    value: str | None
    unit: str | None
    quote: str | None


class NormalizedValue(Plain):
    key: str
    value: Any  # number, bool, ISO date string, string or list, per the field's type; null if unknowable


class NormalizeRecords(dspy.Signature):
    """Convert each raw value to its field's type and canonical unit: money to plain CNY or USD units (万元 x1e4, 亿元 x1e8, thousands x1e3, millions x1e6), percents to percent points, per-10-share amounts to per share, dates to YYYY-MM-DD, yes/no to true/false."""

    field_specs: list[FieldSpec] = dspy.InputField()
    items: list[RawValue] = dspy.InputField()
    values: list[NormalizedValue] = dspy.OutputField(desc="one per item, same keys")
