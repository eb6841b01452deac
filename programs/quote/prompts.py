"""The tokens of one call of each stage, from the prompt the program would send, rendered without sending it.

Each stage's predictor (with its compiled demos, if any) is formatted by the adapter the run would use
(ChatAdapter, or the JSON-schema adapter for local servers: programs.lm.endpoint) with inputs
as close to the real ones as can be known before the plan: the question and the catalog lines the
planner is shown, the passages the questions retrieve from each document's index for the extractor
(programs/quote/passages.py), real document identities in the records. What only the plan can tell (how many fields, their wording) comes from the demo's
measured sizes (programs/quote/sizes.py). A reply's tokens are those of a typical reply formatted the
same way, capped by the stage's max_tokens.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

import dspy
from dspy.adapters.json_adapter import JSONAdapter
from pydantic import BaseModel

from programs.quote import sizes
from programs.quote.passages import Retrieval, retrieved, spread_retrieval
from programs.quote.tokens import TokenCounter
from signatures.normalizer import NormalizedValue, RawValue
from signatures.types import Document, ExtractedValue, FieldSpec, Plan, Restriction, SubQuery

Tokens = tuple[float, float]  # (in, out) of one call
CJK = re.compile(r"[\u3400-\u9fff]")


def language(text: str) -> str:
    return "zh" if CJK.search(text or "") else "en"


def fields_for(lang: str, count: int) -> list[FieldSpec]:
    """`count` representative fields in the filings' language (the table repeats under new names)."""
    table = sizes.FIELDS[lang]
    fields = []
    for i in range(count):
        name, description, kind, unit, _, _ = table[i % len(table)]
        spec = {"name": name if i < len(table) else f"{name}_{i}", "description": description}
        fields.append(FieldSpec.model_validate({**spec, "type": kind, "unit": unit}))
    return fields


def sample_value(spec: FieldSpec, lang: str) -> tuple[str, str]:
    """(value as printed, unit as printed) of a representative field."""
    for name, _, _, _, value, unit in sizes.FIELDS[lang]:
        if spec.name.startswith(name):
            return value, unit
    return "15.88%", "%"


def interpolated(tokens_at: Callable[[int], Tokens], count: float) -> Tokens:
    """Tokens at a fractional count (1.55 fields): linear between the whole counts either side."""
    low = max(0, math.floor(count))
    a = tokens_at(low)
    if count == low:
        return a
    b = tokens_at(low + 1)
    share = count - low
    return a[0] + share * (b[0] - a[0]), a[1] + share * (b[1] - a[1])


class StagePrompts:
    def __init__(self, program, store, adapter, counter: TokenCounter, settings, k: int, demos: int = 0):
        """program: an Analyst (its predictors and demos are what is formatted); store: the index;
        demos: few-shot demos an optimizer will have added to each predictor (each one like the call)."""
        self.program, self.store, self.adapter, self.counter = program, store, adapter, counter
        self.settings, self.k, self.demos = settings, k, demos
        self._chunks: dict[str, list[str]] = {}
        self._retrieved: dict[tuple[str, tuple[str, ...], int], Retrieval] = {}

    # ---- formatting ----------------------------------------------------------------------
    def call(self, predictor: dspy.Predict, stage: str, inputs: dict, outputs: dict) -> Tokens:
        signature = predictor.signature
        demos = list(predictor.demos or []) + [{**inputs, **outputs}] * self.demos
        messages = self.adapter.format(signature, demos, inputs)
        prompt = "".join(str(m.get("content") or "") for m in messages)
        reply = reply_text(self.adapter, signature, outputs)
        cap = self.settings.max_tokens_for(stage)
        return float(self.counter.count(prompt)), float(min(cap, self.counter.count(reply)))

    # ---- stages --------------------------------------------------------------------------
    def planner(self, question: str, scope: list[str] | None, docs: list[Document]) -> Tokens:
        lang = language(question)
        catalog = self.program.catalog

        def at(count: int) -> Tokens:
            fields = fields_for(lang, count)
            subquery = SubQuery(
                query=sizes.SUBQUERY[lang].format(fields[0].description.rstrip("。.") if fields else ""),
                restriction=Restriction(
                    doctypes=sorted({d.doctype for d in docs})[:1] or None,
                    years=sorted({d.year for d in docs})[:2] or None,
                ),
                fields=fields,
            )
            reasoning = sizes.REASONING[lang].format(fields[0].description if fields else "")
            inputs = {
                "question": question,
                "catalog": catalog.summary(within=scope),
                "feedback": "",
                "known_fields": [],
            }
            outputs = {"reasoning": reasoning, "plan": Plan(subqueries=[subquery])}
            return self.call(self.program.planner.plan, "planner", inputs, outputs)

        return interpolated(at, sizes.FIELDS_PER_QUESTION)

    def extractor(
        self,
        doc: Document,
        readers: int,
        questions: tuple[str, ...] = (),
        beyond: float = sizes.PASSAGES_BEYOND_QUESTIONS,
    ) -> Tokens:
        """One call for `doc`, asked for the fields of the `readers` questions that read it (`questions`: their
        text, when known). Its passages: what those questions retrieve from the document as its sub-queries
        would, and `beyond` more per field for the fields' own searches (programs/quote/passages.py)."""
        lang = doc.language if doc.language in sizes.FIELDS else "zh"
        chunks = self.chunks(doc.id)
        fields_at = max(1.0, sizes.FIELDS_PER_READ * readers)
        depth = self.k * math.ceil(fields_at)  # at most k beyond per field (the range's top)
        found = self.retrieved(doc.id, questions, depth) if questions else None
        if found is None or not found.own:
            found = spread_retrieval(chunks, self.k)

        def at(count: int) -> Tokens:
            fields = fields_for(lang, max(1, count))
            # the sub-queries: the questions themselves when known, else one per reader in the demo's wording
            queries = list(dict.fromkeys(questions)) or [
                sizes.SUBQUERY[lang].format(fields[i % len(fields)].description.rstrip("。."))
                for i in range(max(1, readers * sizes.SUBQUERIES_PER_QUESTION))
            ]
            values = [self.extracted(spec, lang, chunks) for spec in fields]

            def shown(more: int) -> Tokens:
                inputs = {
                    "document": f"{doc.symbol} fiscal year {doc.year} {doc.doctype} (id {doc.id})",
                    "questions": list(dict.fromkeys(queries)),
                    "field_specs": fields,
                    "passages": found.shown(more),
                    "feedback": "",
                }
                return self.call(self.program.extractor.extract, "extractor", inputs, {"values": values})

            return interpolated(shown, beyond * len(fields))

        return interpolated(at, fields_at)

    def extracted(self, spec: FieldSpec, lang: str, chunks: list[str]) -> ExtractedValue:
        value, unit = sample_value(spec, lang)
        quote = (chunks[len(chunks) // 2].split("] ", 1)[-1] if chunks else spec.description)[
            : sizes.REPLY_QUOTE_CHARS
        ]
        return ExtractedValue(field=spec.name, disclosed=True, value=value, unit=unit, quote=quote, page=12)

    def normalizer(self, question: str, values: int) -> Tokens:
        """One call for a batch of the question's raw values the rules could not parse."""
        lang = language(question)
        fields = fields_for(lang, max(1, round(sizes.FIELDS_PER_QUESTION)))
        items = []
        for i in range(max(1, min(values, self.settings.normalize_batch))):
            spec = fields[i % len(fields)]
            value, unit = sample_value(spec, lang)
            items.append(
                RawValue(key=f"doc-{i}:{spec.name}", field=spec.name, value=value, unit=unit, quote=value)
            )
        outputs = {"values": [NormalizedValue(key=item.key, value=15.88) for item in items]}
        inputs = {"field_specs": fields, "items": items}
        return self.call(self.program.normalizer.normalize, "normalizer", inputs, outputs)

    def coder(self, question: str, docs: list[Document]) -> Tokens:
        lang = language(question)

        def at(count: int) -> Tokens:
            fields = fields_for(lang, count)
            columns = "\n".join(
                ["id (str), symbol (str), year (int, fiscal year), doctype (str)"]
                + [f"{f.name} ({f.type}, {f.unit}): {f.description}" for f in fields]
            )
            inputs = {
                "question": question,
                "columns": columns,
                "sample_records": self.records(docs, fields, lang),
            }
            code = "\n".join([sizes.CODE_LINE] * 20)[: sizes.CODE_CHARS]
            return self.call(self.program.code_writer.write_code, "coder", inputs, {"code": code})

        return interpolated(at, sizes.FIELDS_PER_QUESTION)

    def answer(self, question: str, docs: list[Document]) -> Tokens:
        lang = language(question)

        def at(count: int) -> Tokens:
            fields = fields_for(lang, count)
            result = ('{"symbols": ["601536", "000955", "000822"], "values": {"601536": 45.92}}' * 4)[
                : sizes.RESULT_CHARS
            ]
            inputs = {
                "question": question,
                "result": result,
                "sample_records": self.records(docs, fields, lang),
                "missing": [],
            }
            answer = sizes.ANSWER[lang][: sizes.ANSWER_CHARS]
            return self.call(self.program.answerer.answer, "answer", inputs, {"answer": answer})

        return interpolated(at, sizes.FIELDS_PER_QUESTION)

    # ---- inputs from the index -----------------------------------------------------------
    def records(self, docs: list[Document], fields: list[FieldSpec], lang: str) -> list[dict]:
        """The sample rows the code-writer and the answerer are shown: real identities, typical values."""
        shown = docs[: self.settings.sample_records]
        return [{**d.identity(), **{f.name: 15.88 for f in fields}} for d in shown]

    def retrieved(self, doc_id: str, questions: tuple[str, ...], depth: int) -> Retrieval:
        """What the questions retrieve from the document (passages.retrieved), kept per document and questions."""
        key = (doc_id, questions, depth)
        if key not in self._retrieved:
            self._retrieved[key] = retrieved(self.store, doc_id, questions, self.k, depth)
        return self._retrieved[key]

    def chunks(self, doc_id: str) -> list[str]:
        """The document's chunks as the extractor shows passages ("[page N] text"), read from the index."""
        if doc_id not in self._chunks:
            self._chunks[doc_id] = document_chunks(self.store, doc_id)
        return self._chunks[doc_id]


def reply_text(adapter, signature, outputs: dict) -> str:
    """A reply as the model writes it: compact JSON under a JSON adapter (what the demo reader sends and
    structured decoding returns; DSPy's own formatting of a demo reply is indented, 1.6 times longer),
    the adapter's text format otherwise."""
    if isinstance(adapter, JSONAdapter):
        return json.dumps(plain(outputs), ensure_ascii=False)
    return adapter.format_assistant_message_content(signature, outputs)


def plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def document_chunks(store, doc_id: str) -> list[str]:
    """Every chunk of a document, or its pages when the store cannot give chunks; [] when unreadable."""
    try:
        index = getattr(store, "index", None)
        if index is not None:
            return [f"[page {c.page}] {c.text}" for c in index(doc_id).chunks]
        return [f"[page {page}] {text}" for page, text in sorted(store.page_texts(doc_id).items())]
    except Exception:  # an unindexed document: the quote still counts its call, without passages
        return []
