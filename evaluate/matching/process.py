"""Process accuracy: extracted facts against the gold metadata rows, cell by cell, deterministically.

Alignment is by document id. A cell is one gold value of one document; a row is right when all its
cells are; a column (a field) is right when it is right in every row of the question. Macro
averages per question (as in the MuDABench paper), micro pools every cell, row and column (as in
the reference code). The wrong cells' explanations double as GEPA textual feedback.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from evaluate.dataset import DatasetItem
from evaluate.matching.cells import CellResult, compare_cell, show
from signatures.types import IDENTITY_FIELDS

UNIT_SUFFIXES = ("_10k_cny", "_cny", "_usd", "_pct")
Facts = Mapping[str, Mapping[str, Any]]  # doc_id -> {value_key: value}


def key_variants(gold_key: str) -> list[str]:
    """Names an extractor may have used for a gold key: value_capital_adequacy_ratio_pct,
    capital_adequacy_ratio_pct, capital_adequacy_ratio."""
    bare = gold_key.removeprefix("value_")
    variants = [gold_key, bare]
    for suffix in UNIT_SUFFIXES:
        if bare.endswith(suffix):
            variants.append(bare.removesuffix(suffix))
            break
    return variants


UNIT_TOKENS = {"value", "cny", "usd", "pct", "10k", "count", "amount"}


def _tokens(name: str) -> set[str]:
    return {t for t in str(name).lower().split("_") if t and t not in UNIT_TOKENS}


def align_keys(gold_keys: list[str], names: list[str]) -> dict[str, str]:
    """Which extracted field stands for which gold key. The planner names fields itself
    (`capital_adequacy_ratio` for `value_capital_adequacy_ratio_pct`): exact variants first, then the
    most similar name by shared words, then the last gold key and the last name left over."""
    lowered = {str(n).lower(): n for n in names}
    pairs: dict[str, str] = {}
    for key in gold_keys:
        hit = next((lowered[v] for v in key_variants(key) if v in lowered), None)
        if hit is not None and hit not in pairs.values():
            pairs[key] = hit
    scored = []
    for key in gold_keys:
        for name in names:
            if key in pairs or name in pairs.values():
                continue
            a, b = _tokens(key), _tokens(name)
            overlap = len(a & b) / len(a | b) if a | b else 0.0
            if overlap >= 0.5:
                scored.append((overlap, key, name))
    for _, key, name in sorted(scored, key=lambda t: -t[0]):
        if key not in pairs and name not in pairs.values():
            pairs[key] = name
    left_keys = [k for k in gold_keys if k not in pairs]
    left_names = [n for n in names if n not in pairs.values()]
    if len(left_keys) == 1 and len(left_names) == 1:
        pairs[left_keys[0]] = left_names[0]
    return pairs


def mean(values: list[float] | list[bool]) -> float:
    """The average, 0.0 for nothing: an empty question or run scores 0, never raises."""
    return sum(values) / len(values) if values else 0.0


@dataclass
class QuestionProcess:
    question_id: str
    cells: list[CellResult] = field(default_factory=list)
    rows: dict[str, bool] = field(default_factory=dict)  # doc_id -> every cell right
    columns: dict[str, bool] = field(default_factory=dict)  # field -> right in every row

    @property
    def cell_accuracy(self) -> float:
        return mean([c.correct for c in self.cells])

    @property
    def row_accuracy(self) -> float:
        return mean(list(self.rows.values()))

    @property
    def column_accuracy(self) -> float:
        return mean(list(self.columns.values()))

    @property
    def all_rows_right(self) -> bool:
        return bool(self.rows) and all(self.rows.values())

    def feedback(self, limit: int = 20) -> str:
        """The wrong cells, one per line: what the optimizer's reflection LM reads."""
        wrong = [c.explanation for c in self.cells if not c.correct]
        if not wrong:
            return "every extracted value matches the gold"
        more = f"\n... and {len(wrong) - limit} more" if len(wrong) > limit else ""
        return "\n".join(wrong[:limit]) + more

    def summary(self) -> dict:
        return {
            "cells": len(self.cells),
            "cell_accuracy": self.cell_accuracy,
            "row_accuracy": self.row_accuracy,
            "column_accuracy": self.column_accuracy,
            "all_rows_right": self.all_rows_right,
            "wrong_cells": [c.explanation for c in self.cells if not c.correct],
        }


@dataclass
class ProcessScores:
    per_question: list[QuestionProcess]
    macro: dict[str, float]
    micro: dict[str, float]

    def as_dict(self) -> dict:
        return {"process_macro": self.macro, "process_micro": self.micro}


def score_question(item: DatasetItem, facts: Facts | None) -> QuestionProcess:
    """Compare one question's extracted facts (doc_id -> {key: value}) with its gold rows."""
    facts = facts or {}
    result = QuestionProcess(item.question_id)
    for row in item.metadata:
        row_facts = facts.get(row.id)
        names = align_keys(list(row.values), list(row_facts)) if row_facts is not None else {}
        row_cells = []
        for key, gold in row.values.items():
            found = key in names  # names is empty when the document was not extracted
            got = row_facts.get(names[key]) if found and row_facts is not None else None
            if row_facts is None:
                correct, why = False, "document not extracted"
            elif not found:
                correct, why = gold is None, "field not extracted"
            else:
                correct, why = compare_cell(key, gold, got)
            text = f"{row.symbol} {key}: got {show(got) if found else 'nothing'}, gold {show(gold)}"
            cell = CellResult(
                row.id,
                row.symbol,
                key,
                gold,
                got,
                correct,
                text + (f" ({why})" if why and not correct else ""),
            )
            row_cells.append(cell)
            result.columns[key] = result.columns.get(key, True) and correct
        if row_cells:
            result.rows[row.id] = all(c.correct for c in row_cells)
            result.cells += row_cells
    return result


def aggregate(per_question: list[QuestionProcess]) -> ProcessScores:
    """Macro: the mean of each question's accuracy; micro: every cell, row and column pooled."""
    scored = [q for q in per_question if q.cells]  # a question with no gold cells has nothing to average
    macro = {
        "cell": mean([q.cell_accuracy for q in scored]),
        "row": mean([q.row_accuracy for q in scored]),
        "column": mean([q.column_accuracy for q in scored]),
    }
    micro = {
        "cell": mean([c.correct for q in scored for c in q.cells]),
        "row": mean([v for q in scored for v in q.rows.values()]),
        "column": mean([v for q in scored for v in q.columns.values()]),
    }
    return ProcessScores(per_question, macro, micro)


def process_scores(items: list[DatasetItem], facts_by_question: Mapping[str, Facts]) -> ProcessScores:
    """Process accuracy over the questions that have facts (`question_id -> doc_id -> {key: value}`)."""
    per_question = [
        score_question(item, facts_by_question[item.question_id])
        for item in items
        if item.question_id in facts_by_question
    ]
    return aggregate(per_question)


def records_to_facts(records: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The program's normalized records (one per document, `id` attached by code) as facts."""
    facts: dict[str, dict[str, Any]] = {}
    for record in records:
        doc_id = record.get("id")
        if doc_id is None:
            continue
        facts.setdefault(str(doc_id), {}).update(
            {k: v for k, v in record.items() if k not in IDENTITY_FIELDS}
        )
    return facts
