"""Common LM slips in typed outputs are coerced instead of failing a whole plan or document."""

from __future__ import annotations

import pytest

from signatures.types import ExtractedValue, FieldSpec, Restriction


@pytest.mark.parametrize(
    ("type_", "unit", "expected"),
    [
        ("float", "RMB", ("number", "CNY")),
        ("str", None, ("string", "none")),
        ("percentage", "%", ("percent", "percent")),
        ("int", "股", ("integer", "shares")),
        ("number", "furlongs", ("number", "none")),
        ("number", "USD", ("number", "USD")),
    ],
)
def test_field_spec_synonyms(type_, unit, expected):
    spec = FieldSpec(name="x", description="x", type=type_, unit=unit)
    assert (spec.type, spec.unit) == expected


def test_unknown_type_still_fails_loudly():
    with pytest.raises(ValueError):
        FieldSpec(name="x", description="x", type="matrix")


def test_extracted_numbers_and_pages_become_text_and_ints():
    v = ExtractedValue(field="x", disclosed=True, value=15.44, unit="%", quote=None, page="第12页")
    assert (v.value, v.page) == ("15.44", 12)
    assert ExtractedValue(field="x", disclosed=False, page="n/a").page is None


def test_symbols_written_as_numbers_match_text_symbols():
    assert Restriction(symbols=[600001, "AAPL"]).symbols == ["600001", "AAPL"]
