"""MuDABench-format datasets: load, merge duplicate ids, strip gold, split, hash.

The same loader reads the public MuDABench files (`simple.json`, `complex.json`) and our synthetic
`DIR/dataset.json` (docs/interfaces.md). A system under evaluation only ever sees `strip_gold(item)`:
the question and, per document, id, symbol, year and doctype. Never `value_*`, `schema`,
`source_answer` or `final_answer` (the reference agent leaks gold by formatting whole rows).
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from retrievers.textfile import EncodingProblem, read_text
from retrievers.years import fiscal_year
from signatures.errors import BadInput
from signatures.types import IDENTITY_FIELDS

logger = logging.getLogger(__name__)

VISIBLE_FIELDS = IDENTITY_FIELDS  # the only metadata of an item the program may see


class DatasetError(BadInput):  # a ValueError too, as before
    """A dataset file that cannot be used; the message names the file and the fix."""


class GoldRow(BaseModel):
    """One document of a question with its gold values (`value_*` keys) and their schema text."""

    id: str
    symbol: str
    year: int
    doctype: str
    schema_: dict[str, str] = Field(default_factory=dict, alias="schema")
    values: dict[str, Any] = Field(default_factory=dict)

    model_config = {"populate_by_name": True}


class DocumentRef(BaseModel):
    """What a system may know about a document before reading it."""

    id: str
    symbol: str
    year: int
    doctype: str


class PublicItem(BaseModel):
    """A question as a system sees it: no gold anywhere."""

    question_id: str
    question: str
    documents: list[DocumentRef]

    @property
    def doc_ids(self) -> list[str]:
        return [d.id for d in self.documents]


class DatasetItem(BaseModel):
    question_id: str
    question: str
    metadata: list[GoldRow]
    source_answer: list[str] = Field(default_factory=list)
    final_answer: str

    @property
    def doc_ids(self) -> list[str]:
        return [row.id for row in self.metadata]

    @property
    def symbols(self) -> list[str]:
        return list(dict.fromkeys(row.symbol for row in self.metadata))

    @property
    def doctype(self) -> str:
        """The question's document type (each MuDABench question uses one; the commonest wins)."""
        counts = Counter(row.doctype for row in self.metadata)
        return counts.most_common(1)[0][0] if counts else "unknown"


class Split(BaseModel):
    train: list[DatasetItem]
    dev: list[DatasetItem]
    test: list[DatasetItem]


def _row(raw: dict, where: str) -> GoldRow:
    if not isinstance(raw, dict):
        raise DatasetError(f"{where}: a metadata row must be an object with id, symbol, year, doctype")
    missing = [k for k in IDENTITY_FIELDS if k not in raw]
    if missing:
        raise DatasetError(
            f"{where}: metadata row lacks {', '.join(missing)}; each row needs id, symbol, year, doctype"
        )
    try:
        year = fiscal_year(raw["year"])
    except ValueError as e:
        raise DatasetError(f"{where}: {e}") from None
    values = {k: v for k, v in raw.items() if k.startswith("value_")}
    try:
        return GoldRow(
            id=str(raw["id"]),
            symbol=str(raw["symbol"]),
            year=year,
            doctype=str(raw["doctype"]),
            schema=raw.get("schema") or {},
            values=values,
        )
    except (KeyError, TypeError, ValueError) as e:
        raise DatasetError(
            f"{where}: metadata row lacks or mistypes {e}; each row needs id, symbol, year, doctype"
        ) from e


def _item(raw: Any, where: str) -> DatasetItem:
    if not isinstance(raw, dict):
        raise DatasetError(
            f"{where}: each item must be an object with question_id, question, metadata, final_answer"
        )
    missing = [k for k in ("question_id", "question", "metadata", "final_answer") if k not in raw]
    if missing:
        raise DatasetError(
            f"{where}: missing {missing}; a MuDABench item has question_id, question, metadata, final_answer"
        )
    rows = [_row(r, f"{where} metadata[{j}]") for j, r in enumerate(raw["metadata"] or [])]
    try:
        return DatasetItem(
            question_id=str(raw["question_id"]),
            question=str(raw["question"]),
            metadata=rows,
            source_answer=[str(s) for s in raw.get("source_answer") or []],
            final_answer=str(raw["final_answer"]),
        )
    except ValidationError as e:
        raise DatasetError(f"{where}: {e.errors()[0]['msg']}") from e


def _merge(first: DatasetItem, other: DatasetItem) -> DatasetItem:
    """Duplicate ids: keep the first answer, union the documents (the MuDABench duplicates are identical)."""
    if first.final_answer != other.final_answer:
        logger.warning(
            "question %s appears twice with different answers; keeping the first", first.question_id
        )
    known = set(first.doc_ids)
    rows = first.metadata + [r for r in other.metadata if r.id not in known]
    sources = list(dict.fromkeys(first.source_answer + other.source_answer))
    return first.model_copy(update={"metadata": rows, "source_answer": sources})


def read_json_file(path: Path, error: type[ValueError], missing: str, expected: str) -> Any:
    """The parsed JSON of a user-given file; a missing or unparsable one raises `error` naming the fix.

    Read as retrievers.textfile reads a catalog (UTF-8, GBK, ...): the build, ask and score read one
    dataset.json alike, where a GBK file used to index fine and then be refused as "not valid JSON".
    """
    if not path.exists():
        raise error(f"{path}: {missing}")
    try:
        return json.loads(read_text(path))
    except EncodingProblem as e:
        raise error(str(e)) from None
    except json.JSONDecodeError as e:
        raise error(f"{path}: not valid JSON ({e}); expected {expected}") from e


class Dataset(list):
    """The usable items of a dataset file, in order, and the ones left out: `skipped` maps their
    question_id to why (a list, so every caller of load_dataset reads it as before)."""

    def __init__(self, items: list[DatasetItem], skipped: dict[str, str] | None = None):
        super().__init__(items)
        self.skipped: dict[str, str] = skipped or {}


def _blank_question(raw: Any) -> bool:
    return isinstance(raw, dict) and not str(raw.get("question") or "").strip()


def load_dataset(path: str | Path) -> Dataset:
    """Items of a MuDABench-format JSON file (or of DIR/dataset.json), duplicate ids merged, order kept.

    An item whose question is blank is skipped with a warning and listed in `.skipped`: the rest of a
    500-question dataset still runs (ask refuses a blank question; answering and judging one measured
    nothing)."""
    path = Path(path)
    if path.is_dir():
        path = path / "dataset.json"
    raw = read_json_file(
        path,
        DatasetError,
        missing="no such dataset; pass a MuDABench JSON file or a folder holding dataset.json",
        expected="a list of MuDABench items",
    )
    if not isinstance(raw, list):
        raise DatasetError(f"{path}: expected a JSON list of items, got {type(raw).__name__}")
    merged: dict[str, DatasetItem] = {}
    skipped: dict[str, str] = {}
    duplicates = 0
    for i, entry in enumerate(raw):
        item = _item(entry, f"{path} item {i}")
        if _blank_question(entry):
            skipped[item.question_id] = f"item {i} has a blank question: write its question to include it"
            continue
        if item.question_id in merged:
            duplicates += 1
            merged[item.question_id] = _merge(merged[item.question_id], item)
        else:
            merged[item.question_id] = item
    if duplicates:
        logger.info("%s: merged %d duplicate question ids", path, duplicates)
    if skipped:
        logger.warning(
            "%s: skipped %d question%s with a blank text (%s): write their question to include them",
            path,
            len(skipped),
            "" if len(skipped) == 1 else "s",
            ", ".join(skipped),
        )
    return Dataset(list(merged.values()), skipped)


def strip_gold(item: DatasetItem) -> PublicItem:
    """What the system under test may see: the question and each document's id, symbol, year, doctype."""
    documents = [DocumentRef(**{f: getattr(row, f) for f in VISIBLE_FIELDS}) for row in item.metadata]
    return PublicItem(question_id=item.question_id, question=item.question, documents=documents)


def split(
    items: list[DatasetItem], seed: int = 0, fractions: tuple[float, float, float] = (0.6, 0.2, 0.2)
) -> Split:
    """Seeded train/dev/test split, stratified by document type (each type in every part where possible)."""
    if len(fractions) != 3 or any(f < 0 for f in fractions) or abs(sum(fractions) - 1) > 1e-6:
        raise ValueError(f"fractions {fractions} must be three non-negative numbers summing to 1")
    by_type: dict[str, list[DatasetItem]] = defaultdict(list)
    for item in sorted(items, key=lambda it: it.question_id):
        by_type[item.doctype].append(item)
    parts: dict[str, list[DatasetItem]] = {"train": [], "dev": [], "test": []}
    rng = random.Random(seed)
    for doctype in sorted(by_type):
        group = by_type[doctype]
        rng.shuffle(group)
        n_train = round(len(group) * fractions[0])
        n_dev = round(len(group) * fractions[1])
        parts["train"] += group[:n_train]
        parts["dev"] += group[n_train : n_train + n_dev]
        parts["test"] += group[n_train + n_dev :]
    return Split(**parts)


PARTS = ("all", "train", "dev", "test")


def select(items: list[DatasetItem], part: str, seed: int, limit: int | None) -> list[DatasetItem]:
    """The questions a run answers: one part of the seeded split, then the first `limit`. The one rule,
    shared by the run that answers them and the scoring that reads its answers again."""
    if part not in PARTS:
        raise BadInput(f"unknown split {part!r}: use one of {', '.join(PARTS)}")
    if part != "all":
        items = getattr(split(items, seed=seed), part)
    if limit is not None:
        if limit < 1:
            raise BadInput(f"--limit must be at least 1 (got {limit})")
        items = items[:limit]
    if not items:
        raise BadInput(f"no questions in split {part!r} of the dataset; use --split all or a larger dataset")
    return items


def dataset_hash(items: list[DatasetItem]) -> str:
    """Content hash of a dataset, independent of item order: goes in sidecars next to compiled programs."""
    canonical = sorted(
        (item.model_dump(mode="json", by_alias=True) for item in items), key=lambda d: d["question_id"]
    )
    blob = json.dumps(canonical, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]
