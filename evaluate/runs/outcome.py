"""A finished question, in full (`Answered`) and as a dataset run keeps it in memory (`Outcome`).

Why two: a run used to keep every question's Answered until it wrote its outputs, and its trace alone
is 62 KB of the 75 KB of JSON a demo question makes (facts 6 KB, run log 3 KB), so the run's memory
grew with its question count (issue 33 item 11: ~1 GB at 10,000 questions). Each finished question is
written once, to the journal (OUT/answers.jsonl, evaluate.runs.journal); the run keeps its Outcome:
the answer, error, records and counts that the scores, the summary and the MLflow table read, and
where the rest is. The run's files, audit reports and MLflow traces read each question back in full
(`Outcome.full()`), one at a time. A question no file holds (no journal, or its write failed) is
kept whole (`Held`), as before.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Protocol


@dataclass
class Answered:
    """One question's outcome: the program's outputs as plain JSON data, or the error that stopped it."""

    question_id: str
    question: str
    doc_ids: list[str]
    answer: str = ""
    records: list[dict] = field(default_factory=list)
    facts: list[dict] = field(default_factory=list)
    code: str = ""
    result: str = ""
    citations: list[dict] = field(default_factory=list)
    missing: list[dict] = field(default_factory=list)
    run_log: dict = field(default_factory=dict)
    trace: dict = field(default_factory=dict)
    retrieved_chunks: list[str] = field(default_factory=list)
    coverage: dict = field(default_factory=dict)
    coverage_line: str = ""
    error: str | None = None
    seconds: float = 0.0
    usage: dict = field(default_factory=dict)


ANSWERED_FIELDS = frozenset(f.name for f in fields(Answered))


def answered_from(row: dict) -> Answered:
    """An Answered from its JSON row (a journal or results.jsonl line); keys it does not have are ignored."""
    return Answered(**{k: v for k, v in row.items() if k in ANSWERED_FIELDS})


class Source(Protocol):
    """Where a question's whole outcome is read back from."""

    def load(self) -> Answered: ...


@dataclass(frozen=True)
class Held:
    """In memory: no file holds this outcome (no journal, or writing it failed)."""

    answered: Answered

    def load(self) -> Answered:
        return self.answered


@dataclass(frozen=True)
class LineAt:
    """The JSON line at byte `offset` of `path` (the journal), with the trace from `trace_file` when the
    line has none (results.jsonl keeps it in questions/<qid>/trace.json)."""

    path: Path
    offset: int
    trace_file: Path | None = None

    def load(self) -> Answered:
        with self.path.open("rb") as f:
            f.seek(self.offset)
            answered = answered_from(json.loads(f.readline()))
        if self.trace_file is not None:
            answered.trace = _read_trace(self.trace_file)
        return answered


def _read_trace(path: Path) -> dict:
    try:
        trace = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return trace if isinstance(trace, dict) else {}


@dataclass(frozen=True)
class Outcome:
    """What a run keeps of one finished question: what scoring (answer, records, error), the summary
    (verdicts, repair calls, cascade, usage, seconds) and the MLflow table (counts) read; `full()` the rest."""

    question_id: str
    question: str
    doc_ids: list[str]
    answer: str
    error: str | None
    seconds: float
    usage: dict
    records: list[dict]  # what process accuracy scores
    missing_documents: int
    fact_count: int  # facts of any kind: an audit report is written when there are some
    verdicts: dict[str, int]  # the check's verdict -> disclosed facts with it (unchecked ones not counted)
    repair_calls: int
    cascade: dict  # the run log's cascade figures ({} when no cascade ran)
    source: Source = field(repr=False, compare=False)

    @classmethod
    def of(cls, answered: Answered, source: Source | None = None) -> Outcome:
        """`answered` as kept in memory, read back from `source` (None: held whole)."""
        verdicts = Counter(str(f.get("verdict") or "") for f in answered.facts if f.get("disclosed", True))
        verdicts.pop("", None)
        trace, run_log = answered.trace or {}, answered.run_log or {}
        return cls(
            question_id=answered.question_id,
            question=answered.question,
            doc_ids=list(answered.doc_ids),
            answer=answered.answer,
            error=answered.error,
            seconds=answered.seconds,
            usage=answered.usage,
            records=answered.records,
            missing_documents=len(answered.missing),
            fact_count=len(answered.facts),
            verdicts=dict(verdicts),
            repair_calls=int((trace.get("extract") or {}).get("repair_calls", 0)),
            cascade=dict(run_log.get("cascade") or {}) if isinstance(run_log, dict) else {},
            source=source if source is not None else Held(answered),
        )

    def full(self) -> Answered:
        """The whole outcome (trace, facts, citations, code, ...), read back from where it is kept."""
        return self.source.load()
