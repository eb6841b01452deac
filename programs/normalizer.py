"""Normalizer: raw facts -> records of one typed schema per question.

Deterministic rules (programs/units.py) first; the LM predictor only for what they cannot parse, in
batches. Every value is validated against a pydantic model built once per plan from its FieldSpecs;
an invalid LM value is re-asked once, then set to null with a reason. Document identity (id, symbol,
year, doctype) is attached by code.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

import dspy
from pydantic import StringConstraints, TypeAdapter, ValidationError, create_model

from programs.steps import arun_steps, run_steps
from programs.units import parse_value
from signatures.normalizer import NormalizedValue, NormalizeRecords, RawValue
from signatures.types import Document, Fact, FieldSpec

logger = logging.getLogger(__name__)

IsoDate = Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}$")]
PYTHON_TYPES: dict[str, Any] = {
    "number": float, "integer": int, "percent": float, "string": str, "boolean": bool, "date": IsoDate,
    "list": list[str],
}  # fmt: skip
IDENTITY = {"id": (str, ...), "symbol": (str, ...), "year": (int, ...), "doctype": (str, ...)}


class RecordSchema:
    """The question's record type, built once from the plan's fields, plus per-field validators."""

    def __init__(self, fields: list[FieldSpec]):
        self.fields = {f.name: f for f in fields}
        columns = {f.name: (PYTHON_TYPES[f.type] | None, None) for f in fields}
        self.model = create_model("Record", **IDENTITY, **columns)
        self._adapters = {f.name: TypeAdapter(PYTHON_TYPES[f.type] | None) for f in fields}

    def check(self, field: str, value: Any) -> tuple[bool, Any, str]:
        """(valid, coerced value, error) for one value of one field."""
        if self.fields[field].type == "date" and isinstance(value, str):
            value = value[:10]
        try:
            return True, self._adapters[field].validate_python(value), ""
        except ValidationError as e:
            return False, None, e.errors()[0]["msg"]

    def record(self, doc: Document, values: dict[str, Any]) -> dict:
        row = {"id": doc.id, "symbol": doc.symbol, "year": doc.year, "doctype": doc.doctype}
        row.update({name: values.get(name) for name in self.fields})
        return self.model.model_validate(row).model_dump(mode="json")

    def columns(self) -> str:
        """What the code-writer is told about df's columns."""
        lines = ["id (str), symbol (str), year (int, fiscal year), doctype (str)"]
        lines += [f"{f.name} ({f.type}, {f.unit}): {f.description}" for f in self.fields.values()]
        return "\n".join(lines)


class Normalizer(dspy.Module):
    def __init__(self, resources):
        super().__init__()
        self.resources = resources
        self.normalize = dspy.Predict(NormalizeRecords)

    def forward(self, fields: list[FieldSpec], facts: list[Fact], documents: dict[str, Document]) -> dspy.Prediction:
        return run_steps(self.steps(fields, facts, documents))

    async def aforward(self, fields: list[FieldSpec], facts: list[Fact], documents: dict[str, Document]):
        return await arun_steps(self.steps(fields, facts, documents))

    def steps(self, fields: list[FieldSpec], facts: list[Fact], documents: dict[str, Document]):
        """Rules first, then the LM for what they could not parse (calls yielded: programs.steps)."""
        schema, values, pending, notes = self.by_rules(fields, facts)
        for _round in range(2):  # the first ask, then one re-ask of what came back invalid
            replies: list[list[NormalizedValue] | Exception] = []
            for batch in self.batches(pending):
                try:
                    reply = yield self.normalize, {"field_specs": specs_for(schema, batch), "items": batch}
                    replies.append(reply["values"])
                except Exception as e:  # a failed batch leaves its values null with a reason
                    replies.append(e)
            pending = self.apply(schema, values, pending, notes, replies)
        return self.finish(schema, values, pending, notes, documents)

    def by_rules(self, fields: list[FieldSpec], facts: list[Fact]):
        schema = RecordSchema(fields)
        values: dict[str, dict[str, Any]] = {}
        pending: list[RawValue] = []
        notes: dict[str, str] = {}
        for fact in facts:
            spec = schema.fields.get(fact.field)
            if spec is None:
                continue
            row = values.setdefault(fact.doc_id, {})
            if not fact.disclosed:
                row[fact.field] = None
                continue
            parsed = parse_value(fact.value, fact.unit, spec)
            ok, value, error = schema.check(fact.field, parsed.value) if parsed.ok else (False, None, parsed.reason)
            if ok:
                row[fact.field] = value
                if parsed.reason:
                    notes[key_of(fact.doc_id, fact.field)] = parsed.reason
            else:
                pending.append(RawValue(key=key_of(fact.doc_id, fact.field), field=fact.field, value=fact.value,
                                        unit=fact.unit, quote=fact.quote))  # fmt: skip
        return schema, values, pending, notes

    def batches(self, pending: list[RawValue]) -> list[list[RawValue]]:
        size = max(1, int(self.resources.settings.normalize_batch))
        return [pending[i : i + size] for i in range(0, len(pending), size)]

    def apply(self, schema, values, pending: list[RawValue], notes, replies) -> list[RawValue]:
        """Validated LM values go into the rows; what is still invalid is returned for a re-ask."""
        still = []
        for batch, reply in zip(self.batches(pending), replies, strict=True):
            if isinstance(reply, Exception):
                for item in batch:
                    notes[item.key] = f"normalizer call failed: {type(reply).__name__}: {reply}"[:300]
                still.extend(batch)
                continue
            got = {v.key: v.value for v in reply or []}
            for item in batch:
                if item.key not in got:
                    notes[item.key] = "normalizer left it out"
                    still.append(item)
                    continue
                ok, value, error = schema.check(item.field, through_rules(schema.fields[item.field], got[item.key]))
                if ok:
                    doc_id = item.key.rsplit(":", 1)[0]
                    values.setdefault(doc_id, {})[item.field] = value
                    notes[item.key] = "normalized by LM"
                else:
                    notes[item.key] = f"invalid {schema.fields[item.field].type}: {got[item.key]!r} ({error})"
                    still.append(item)
        return still

    def finish(self, schema, values, pending, notes, documents: dict[str, Document]) -> dspy.Prediction:
        for item in pending:
            logger.warning("%s set to null: %s", item.key, notes.get(item.key, "unparseable"))
        records = [schema.record(documents[doc_id], row) for doc_id, row in values.items() if doc_id in documents]
        return dspy.Prediction(records=records, schema=schema, notes=notes, nulled=[i.key for i in pending])


def through_rules(spec: FieldSpec, value: Any) -> Any:
    """An LM reply written as text ('是', '1.5亿') gets the same deterministic conversion as a raw value."""
    if isinstance(value, str):
        parsed = parse_value(value, None, spec)
        if parsed.ok:
            return parsed.value
    return value


def key_of(doc_id: str, field: str) -> str:
    return f"{doc_id}:{field}"


def specs_for(schema: RecordSchema, batch: list[RawValue]) -> list[FieldSpec]:
    return [schema.fields[name] for name in dict.fromkeys(item.field for item in batch)]
