"""The typed vocabulary every stage speaks: documents, passages, plans, facts, records, citations.

Pure data (pydantic). No I/O, no LM. Every other package imports from here, never the reverse.
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field, field_validator

# What a field holds. The normalizer converts to these; the code-writer relies on them.
FieldType = Literal["number", "integer", "percent", "string", "boolean", "date", "list"]

# Canonical units after normalization. Money is always in plain currency units (元 / USD),
# percents always in percent points (15.44, not 0.1544), dates ISO (YYYY-MM-DD).
Unit = Literal["CNY", "USD", "percent", "ratio", "shares", "people", "count", "date", "none"]

Language = Literal["zh", "en"]


TYPE_SYNONYMS = {
    "float": "number",
    "double": "number",
    "decimal": "number",
    "numeric": "number",
    "money": "number",
    "currency": "number",
    "amount": "number",
    "int": "integer",
    "str": "string",
    "text": "string",
    "bool": "boolean",
    "percentage": "percent",
    "pct": "percent",
    "array": "list",
    "datetime": "date",
}
UNITS = set(get_args(Unit))
UNIT_SYNONYMS = {
    "rmb": "CNY",
    "cny": "CNY",
    "元": "CNY",
    "人民币": "CNY",
    "yuan": "CNY",
    "usd": "USD",
    "$": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "us$": "USD",
    "%": "percent",
    "pct": "percent",
    "percentage": "percent",
    "百分比": "percent",
    "股": "shares",
    "share": "shares",
    "人": "people",
    "persons": "people",
    "employees": "people",
    "个": "count",
    "number": "count",
    "times": "ratio",
    "倍": "ratio",
    "": "none",
}


class Plain(BaseModel):
    """A pydantic model whose pickle is a function of its values alone.

    Why: DSPy's BootstrapFewShot picks among one predictor's traces of an example (the extractor's, one
    per document) with a random.Random seeded by a hash of the pickled demos (dspy 3.4,
    teleprompt/bootstrap.py). A pydantic pickle holds `__pydantic_fields_set__`, a set of names whose
    order follows the process's string hash seed, so two compiles of one dataset saved different demos
    (3 of 4 extractor demos on the demo corpus) unless PYTHONHASHSEED was pinned. Pickled here as a
    sorted list, read back as the set pydantic keeps."""

    def __getstate__(self) -> dict[Any, Any]:
        state = dict(super().__getstate__())
        state["__pydantic_fields_set__"] = sorted(state.get("__pydantic_fields_set__") or ())
        return state

    def __setstate__(self, state: dict[Any, Any]) -> None:
        state = dict(state)
        state["__pydantic_fields_set__"] = set(state.get("__pydantic_fields_set__") or ())
        super().__setstate__(state)


# What identifies a document to the program, the code-writer and the scorer: the only metadata of a
# MuDABench item a system may see, and the columns code attaches to every record.
IDENTITY_FIELDS = ("id", "symbol", "year", "doctype")


class Document(Plain):
    """One file of the collection, as the catalog knows it. Only metadata a system may see."""

    id: str
    symbol: str
    year: int = Field(description="fiscal year")
    doctype: str
    language: Language = "zh"
    path: str | None = None
    pages: int | None = None
    content_hash: str | None = None

    def identity(self) -> dict[str, Any]:
        """{id, symbol, year, doctype}: what code attaches to this document's record."""
        return {name: getattr(self, name) for name in IDENTITY_FIELDS}

    def label(self) -> str:
        """How a person names it: '600001 2023 A股年报'."""
        return f"{self.symbol} {self.year} {self.doctype}"


class Passage(Plain):
    """A retrieved chunk of one document; `page` is 1-based and becomes a citation."""

    doc_id: str
    page: int
    text: str
    score: float = 0.0
    page_end: int | None = None


class Restriction(Plain):
    """Metadata filter applied by code against the catalog (never by the LM). None = no filter."""

    doctypes: list[str] | None = None
    years: list[int] | None = None
    symbols: list[str] | None = None

    @field_validator("symbols", mode="before")
    @classmethod
    def _symbols_as_text(cls, value):
        """LMs often write A-share codes as numbers (600001): symbols are text in the catalog."""
        if isinstance(value, (list, tuple)):
            return [str(v) for v in value]
        return value


class FieldSpec(Plain):
    """One value every document in scope must yield, with the canonical type and unit it is stored in."""

    name: str = Field(description="snake_case column name, e.g. capital_adequacy_ratio")
    description: str = Field(description="what to look for in the filing, in the filing's language")
    type: FieldType = "number"
    unit: Unit = "none"
    search_terms: list[str] = Field(
        default_factory=list,
        description="words the filing itself would print near the value, in its language: the line item's "
        "usual names and the statement or section it sits in (e.g. 'Purchases of property and equipment', "
        "'Consolidated Statements of Cash Flows')",
    )

    @field_validator("search_terms", mode="before")
    @classmethod
    def _terms_as_list(cls, value):
        """None or one string where a list is asked for: keep what was meant instead of failing the plan."""
        if value is None:
            return []
        if isinstance(value, str):
            return [t.strip() for t in re.split(r"[;；\n]", value) if t.strip()]
        return [str(v) for v in value]

    @field_validator("type", mode="before")
    @classmethod
    def _type_synonym(cls, value):
        """LMs write 'float', 'str', 'percentage'...: map common synonyms instead of failing the whole plan."""
        return TYPE_SYNONYMS.get(str(value).strip().lower(), value) if isinstance(value, str) else value

    @field_validator("unit", mode="before")
    @classmethod
    def _unit_synonym(cls, value):
        """'RMB', '元', '%', 'dollars' -> the canonical unit; an unknown unit becomes 'none', not an error."""
        if value is None:
            return "none"
        key = str(value).strip().lower()
        return key if key in UNITS else UNIT_SYNONYMS.get(key, "none")


class SubQuery(Plain):
    """A per-document question template and the documents it applies to."""

    query: str = Field(description="question to ask each matching document")
    restriction: Restriction = Field(default_factory=Restriction)
    fields: list[FieldSpec]


class Plan(Plain):
    subqueries: list[SubQuery]

    def fields(self) -> list[FieldSpec]:
        """All fields of the plan, first definition of each name wins (the record schema)."""
        seen: dict[str, FieldSpec] = {}
        for sq in self.subqueries:
            for f in sq.fields:
                seen.setdefault(f.name, f)
        return list(seen.values())


class ExtractedValue(Plain):
    """What the extractor says about one field in one document (raw, before normalization)."""

    field: str
    disclosed: bool = Field(description="false when the document does not state it")
    value: str | None = Field(
        default=None, description="the value as written, e.g. '15.44%' or '3,239,006 万元'"
    )
    unit: str | None = Field(default=None, description="unit as written, e.g. 万元, USD thousands, %")
    quote: str | None = Field(default=None, description="short verbatim quote that states the value")
    page: int | None = Field(default=None, description="1-based page of the quote")

    @field_validator("value", "unit", "quote", mode="before")
    @classmethod
    def _as_text(cls, value):
        """LMs often write numbers (15.44) where text is asked for; keep them, as text."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return str(value)
        if isinstance(value, (list, tuple)):
            return "、".join(str(v) for v in value)
        return value

    @field_validator("page", mode="before")
    @classmethod
    def _page_number(cls, value):
        """'第3页' / 'p. 3' / '3' -> 3; no digits -> None (a missing page never fails the document)."""
        if isinstance(value, str):
            digits = re.search(r"\d+", value)
            return int(digits.group()) if digits else None
        return value


class Fact(Plain):
    """An extracted value with its provenance; what the fact store keeps and reuses."""

    doc_id: str
    field: str
    description: str = ""
    disclosed: bool = True
    value: str | None = None
    unit: str | None = None
    quote: str | None = None
    page: int | None = None
    model: str = ""
    prompt_version: str = ""
    field_type: str = ""  # the FieldSpec's type and canonical unit it was asked as: what reuse matches on
    field_unit: str = ""
    # What code found when it held the quote against the document (factcheck.check): verified,
    # page_corrected, value_not_in_quote, quote_not_found, not_disclosed; "" = not checked.
    verdict: str = ""
    verdict_reason: str = ""
    # The content it was read from: the document's content hash (Document.content_hash, "" when the catalog
    # has none). A fact is reused only for the same content: a replaced, rebuilt filing is read again.
    content_hash: str = ""
    # An amount's scale as code read it off the page (factcheck.scale): what the normalizer multiplies
    # the value (with its own scale words) by; None when not read. scale_source says where it was read
    # ('page 62: "(in millions except per share amounts)"') or why not ("unread: ..."), kept for the audit.
    scale: float | None = None
    scale_source: str = ""

    @property
    def usable(self) -> bool:
        """May the computation use it by default: checked and found (or stated as not disclosed), or never checked."""
        return self.verdict in ("", "verified", "page_corrected", "not_disclosed")


class Citation(Plain):
    doc_id: str
    symbol: str
    year: int
    page: int | None = None
    quote: str | None = None


class DocumentFailure(Plain):
    """A document the run could not read or ask about; reported in the answer, never dropped."""

    doc_id: str
    stage: str
    reason: str


Record = dict[str, Any]
"""A normalized row: `id`, `symbol`, `year`, `doctype` (attached by code) plus one key per FieldSpec."""
