"""What an optimizer tunes against: training examples and metrics, for the whole program or the extractor.

Whole program: one example per question; the program gets only the question and document ids (the
example's inputs), the metric looks the gold item up by question_id. Score = w * final + (1 - w) *
cell accuracy, with final decided by the deterministic matcher (undecided counts 0: no judge calls
inside a compile). Extractor alone: one example per (document, requested fields) from the metadata
rows; score = cell accuracy, far cheaper (one LM call per example instead of a dozen or more).
Both metrics can return GEPA's textual feedback: which cells were wrong and why.
"""

from __future__ import annotations

from typing import Any

import dspy

from evaluate.dataset import DatasetItem, GoldRow
from evaluate.matching.cells import (
    DATE_VALUE,  # one notion of "a date value" for typing specs and scoring cells
)
from evaluate.matching.metrics import final_match, records_to_facts, score_question
from signatures.types import FieldSpec, FieldType, SubQuery, Unit


class FeedbackMetric:
    """A metric in the shape DSPy optimizers call; subclasses say how one prediction scores and why."""

    __name__: str  # each subclass names itself: DSPy and the compile's record show the metric by name

    def judge(self, example, pred) -> tuple[float, str]:
        raise NotImplementedError

    def __call__(self, example, pred, trace=None, pred_name=None, pred_trace=None):
        score, feedback = self.judge(example, pred)
        # GEPA passes pred_name when it wants feedback for one predictor; everyone else wants a number.
        if pred_name is not None:
            return dspy.Prediction(score=score, feedback=feedback)
        return score


# ---- whole program ---------------------------------------------------------------------------------
def program_examples(items: list[DatasetItem]) -> list[dspy.Example]:
    """Inputs = question + document ids only; question_id is a label the metric uses to find the gold."""
    return [
        dspy.Example(question=i.question, doc_ids=i.doc_ids, question_id=i.question_id).with_inputs(
            "question", "doc_ids"
        )
        for i in items
    ]


class ProgramMetric(FeedbackMetric):
    """Final + process accuracy of one answered question; a Prediction with feedback when GEPA asks."""

    def __init__(self, items: list[DatasetItem], final_weight: float = 0.5):
        if not 0 <= final_weight <= 1:
            raise ValueError(f"--final-weight must be between 0 and 1 (got {final_weight})")
        self.items = {i.question_id: i for i in items}
        self.final_weight = final_weight
        self.__name__ = "final_and_process"

    def judge(self, example, pred) -> tuple[float, str]:
        item = self.items[example.question_id]
        answer = str(getattr(pred, "answer", "") or "")
        match = final_match(item.question, item.final_answer, answer, item.symbols)
        final = 1.0 if match.correct else 0.0
        process = score_question(item, records_to_facts(list(getattr(pred, "records", None) or [])))
        score = self.final_weight * final + (1 - self.final_weight) * process.cell_accuracy
        verdict = "right" if match.correct else ("undecided" if not match.decided else "wrong")
        feedback = (
            f"Final answer {verdict} ({match.reason}); gold answer: {item.final_answer}\n"
            f"Extracted cells right: {process.cell_accuracy:.0%}\n{process.feedback()}"
        )
        return score, feedback


# ---- extractor alone -------------------------------------------------------------------------------
def infer_spec(key: str, description: str, gold: Any) -> FieldSpec:
    """A FieldSpec for a gold key, typed from the key's unit suffix or the gold value's type."""
    name = key.removeprefix("value_")
    kind: FieldType
    unit: Unit
    if isinstance(gold, bool):
        kind, unit = "boolean", "none"
    elif isinstance(gold, list):
        kind, unit = "list", "none"
    elif key.endswith("_pct"):
        kind, unit = "percent", "percent"
    elif key.endswith(("_cny", "_10k_cny")):
        kind, unit = "number", "CNY"
    elif key.endswith("_usd"):
        kind, unit = "number", "USD"
    elif key.endswith(("_date", "_mmdd")) or (isinstance(gold, str) and DATE_VALUE.match(gold)):
        kind, unit = "date", "date"
    elif isinstance(gold, int):
        kind, unit = "integer", "count"
    elif isinstance(gold, float):
        kind, unit = "number", "ratio" if key.endswith("ratio") else "none"
    else:
        kind, unit = "string", "none"
    return FieldSpec(name=name, description=description or name.replace("_", " "), type=kind, unit=unit)


def extractor_examples(items: list[DatasetItem]) -> list[dspy.Example]:
    """One example per (document, set of gold keys), first occurrence wins; gold kept as labels only."""
    first_gold: dict[str, Any] = {}
    for item in items:
        for row in item.metadata:
            for key, value in row.values.items():
                if first_gold.get(key) is None:
                    first_gold[key] = value
    examples, seen = [], set()
    for item in items:
        for row in item.metadata:
            keys = tuple(sorted(row.values))
            if not keys or (row.id, keys) in seen:
                continue
            seen.add((row.id, keys))
            specs = [infer_spec(k, row.schema_.get(k, ""), first_gold.get(k)) for k in keys]
            examples.append(
                dspy.Example(doc_id=row.id, field_specs=specs, gold_row=row).with_inputs(
                    "doc_id", "field_specs"
                )
            )
    return examples


class ExtractorStage(dspy.Module):
    """The program's DocumentExtractor on one document: what `--stage extractor` compiles.

    Its one predictor is `extractor.extract`, the same object (and name) as in the Analyst, so the
    tuned state copies straight back into the full program.
    """

    def __init__(self, extractor):
        super().__init__()
        self.extractor = extractor

    def forward(self, doc_id: str, field_specs: list[FieldSpec]) -> dspy.Prediction:
        query = "; ".join(s.description for s in field_specs)
        extracted = self.extractor(assignments={doc_id: [SubQuery(query=query, fields=list(field_specs))]})
        return dspy.Prediction(facts=extracted.facts, failures=extracted.failures)


def facts_as_text(facts) -> dict[str, dict[str, Any]]:
    """Extracted facts of one run as {doc_id: {field: 'value unit'}}, the text the cell comparer reads."""
    out: dict[str, dict[str, Any]] = {}
    for f in facts or []:
        text = None
        if f.disclosed and f.value not in (None, ""):
            text = f"{f.value} {f.unit}".strip() if f.unit and f.unit not in str(f.value) else str(f.value)
        out.setdefault(f.doc_id, {})[f.field] = text
    return out


class CellMetric(FeedbackMetric):
    """Cell accuracy of one document's extraction against its gold row."""

    def __init__(self):
        self.__name__ = "cell_accuracy"

    def judge(self, example, pred) -> tuple[float, str]:
        row: GoldRow = example.gold_row
        item = DatasetItem(question_id=f"cells:{row.id}", question="", metadata=[row], final_answer="")
        process = score_question(item, facts_as_text(getattr(pred, "facts", None)))
        failures = getattr(pred, "failures", None) or []
        reason = f"\nThe document failed: {failures[0].reason}" if failures else ""
        return process.cell_accuracy, process.feedback() + reason
