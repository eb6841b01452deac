"""Normalizer: raw facts -> records of one typed schema per question.

Deterministic rules (programs/stages/units.py) first; the LM predictor only for what they cannot parse, in
batches. Every value is validated against a pydantic model built once per plan from its FieldSpecs;
an invalid LM value is re-asked once, then set to null with a reason. Document identity (id, symbol,
year, doctype) is attached by code.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Annotated, Any

import dspy
from pydantic import StringConstraints, TypeAdapter, ValidationError, create_model

from programs.lm.spend import refusal
from programs.stages.units import parse_value, with_page_scale
from signatures.normalizer import NormalizedValue, NormalizeRecords, RawValue
from signatures.types import Document, Fact, FieldSpec

logger = logging.getLogger(__name__)

IsoDate = Annotated[str, StringConstraints(pattern=r"^\d{4}-\d{2}-\d{2}$")]
PYTHON_TYPES: dict[str, Any] = {
    "number": float,
    "integer": int,
    "percent": float,
    "string": str,
    "boolean": bool,
    "date": IsoDate,
    "list": list[str],
}
IDENTITY: dict[str, Any] = {
    "id": (str, ...),
    "symbol": (str, ...),
    "year": (int, ...),
    "doctype": (str, ...),
}  # IDENTITY_FIELDS, typed


class RecordSchema:
    """The question's record type, built once from the plan's fields, plus per-field validators."""

    def __init__(self, fields: list[FieldSpec]):
        self.fields = {f.name: f for f in fields}
        columns: dict[str, Any] = {f.name: (PYTHON_TYPES[f.type] | None, None) for f in fields}
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
        row = doc.identity()
        row.update({name: values.get(name) for name in self.fields})
        return self.model.model_validate(row).model_dump(mode="json")

    def columns(self) -> str:
        """What the code-writer is told about df's columns."""
        lines = ["id (str), symbol (str), year (int, fiscal year), doctype (str)"]
        lines += [f"{f.name} ({f.type}, {f.unit}): {f.description}" for f in self.fields.values()]
        return "\n".join(lines)


@dataclass(frozen=True)
class Slot:
    """One value of one document: where a raw value goes once it is normalized."""

    doc_id: str
    field: str

    @property
    def key(self) -> str:
        """How the LM sees it (RawValue.key / NormalizedValue.key) and how notes name it."""
        return f"{self.doc_id}:{self.field}"


Pending = tuple[Slot, RawValue]  # a value the rules could not parse, on its way to the LM


@dataclass
class Normalized:
    """The question's records (identity attached by code), their schema, and what happened to each value."""

    records: list[dict]
    schema: RecordSchema
    notes: dict[str, str] = field(default_factory=dict)  # "doc:field" -> how it was normalized or why not
    nulled: list[str] = field(default_factory=list)  # "doc:field" of values left null


class Normalizer(dspy.Module):
    def __init__(self, batch_size: int = 40):
        """batch_size: raw values per LM call."""
        super().__init__()
        self.batch_size = batch_size
        self.normalize = dspy.Predict(NormalizeRecords)

    def forward(
        self, fields: list[FieldSpec], facts: list[Fact], documents: dict[str, Document]
    ) -> Normalized:
        """Rules first, then the LM for what they could not parse: one ask, then one re-ask of what
        came back invalid; a failed batch leaves its values null with a reason."""
        schema, values, pending, notes = self.by_rules(fields, facts)
        for _round in range(2):
            replies: list[list[NormalizedValue] | Exception] = []
            for batch in self.batches(pending):
                try:
                    reply = self.normalize(
                        field_specs=specs_for(schema, batch), items=[raw for _, raw in batch]
                    )
                    replies.append(reply["values"])
                except Exception as e:
                    replies.append(e)
            pending = self.apply(schema, values, pending, notes, replies)
        return self.finish(schema, values, pending, notes, documents)

    def by_rules(self, fields: list[FieldSpec], facts: list[Fact]):
        """The schema, the values the rules could parse (document id -> field -> value), the values
        left for the LM as (slot, raw) pairs, and notes."""
        schema = RecordSchema(fields)
        values: dict[str, dict[str, Any]] = {}
        pending: list[Pending] = []
        notes: dict[str, str] = {}
        for fact in facts:
            spec = schema.fields.get(fact.field)
            if spec is None:
                continue
            row = values.setdefault(fact.doc_id, {})
            if not fact.disclosed:
                row[fact.field] = None
                continue
            slot = Slot(fact.doc_id, fact.field)
            parsed = with_page_scale(
                parse_value(fact.value, fact.unit, spec), spec, fact.scale, fact.scale_source
            )
            ok, value, error = (
                schema.check(fact.field, parsed.value) if parsed.ok else (False, None, parsed.reason)
            )
            if ok:
                row[fact.field] = value
                if parsed.reason:
                    notes[slot.key] = parsed.reason
            else:
                raw = RawValue(
                    key=slot.key, field=fact.field, value=fact.value, unit=fact.unit, quote=fact.quote
                )
                pending.append((slot, raw))
        return schema, values, pending, notes

    def batches(self, pending: list[Pending]) -> list[list[Pending]]:
        return [pending[i : i + self.batch_size] for i in range(0, len(pending), self.batch_size)]

    def apply(self, schema, values, pending: list[Pending], notes, replies) -> list[Pending]:
        """Validated LM values go into the rows; what is still invalid is returned for a re-ask."""
        still = []
        for batch, reply in zip(self.batches(pending), replies, strict=True):
            if refusal(reply):  # the run's budget is spent: the question fails whole (a resume asks it)
                raise reply
            if isinstance(reply, Exception):
                for slot, _ in batch:
                    notes[slot.key] = f"normalizer call failed: {type(reply).__name__}: {reply}"[:300]
                still.extend(batch)
                continue
            got = {v.key: v.value for v in reply or []}
            for slot, raw in batch:
                if slot.key not in got:
                    notes[slot.key] = "normalizer left it out"
                    still.append((slot, raw))
                    continue
                spec = schema.fields[slot.field]
                ok, value, error = schema.check(slot.field, through_rules(spec, got[slot.key]))
                if ok:
                    values.setdefault(slot.doc_id, {})[slot.field] = value
                    notes[slot.key] = "normalized by LM"
                else:
                    notes[slot.key] = f"invalid {spec.type}: {got[slot.key]!r} ({error})"
                    still.append((slot, raw))
        return still

    def finish(
        self, schema, values, pending: list[Pending], notes, documents: dict[str, Document]
    ) -> Normalized:
        for slot, _ in pending:
            logger.warning("%s set to null: %s", slot.key, notes.get(slot.key, "unparseable"))
        records = [
            schema.record(documents[doc_id], row) for doc_id, row in values.items() if doc_id in documents
        ]
        return Normalized(
            records=records, schema=schema, notes=notes, nulled=[slot.key for slot, _ in pending]
        )


def through_rules(spec: FieldSpec, value: Any) -> Any:
    """An LM reply written as text ('是', '1.5亿') gets the same deterministic conversion as a raw value."""
    if isinstance(value, str):
        parsed = parse_value(value, None, spec)
        if parsed.ok:
            return parsed.value
    return value


def specs_for(schema: RecordSchema, batch: list[Pending]) -> list[FieldSpec]:
    return [schema.fields[name] for name in dict.fromkeys(slot.field for slot, _ in batch)]
