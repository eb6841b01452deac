"""OUT/answers.jsonl: each question's outcome appended the moment it is finished, so a stopped run keeps it.

Why: results.jsonl is written once every question is answered and scored; a run stopped before that
(Ctrl-C, a killed process, a lost machine) used to leave nothing but its fact store, and rerunning it
paid for every answer again. Here each finished question is one JSON line (an evaluate.runs.answering.
Answered), flushed and fsync'd before the next one is written, so what is on disk is what was done.
A rerun into the same folder (evaluate.runs.resume) reads it back and asks only what is missing.

A process killed in the middle of a write leaves its last line cut short: reading ignores that line
(the question is asked again), says so, and cuts it off the file so the next line starts clean. A
question that appears twice (it failed, and was asked again) counts by its last line.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading
from collections.abc import Iterable
from pathlib import Path

from evaluate.runs.answering import Answered

logger = logging.getLogger(__name__)

JOURNAL = "answers.jsonl"
_FIELDS = {f.name for f in dataclasses.fields(Answered)}


class AnswerJournal:
    """The answers of one run folder: those kept from earlier runs, and an append-only file for new ones.

    Thread-safe: the Analyst finishes questions on several threads at once."""

    def __init__(self, path: Path, kept: dict[str, Answered]):
        self.path = path
        self.kept = kept  # question id -> its latest outcome, read from disk or appended since
        self._lock = threading.Lock()
        self._closed = False
        self._failed_write = False

    @classmethod
    def open(cls, path: str | Path) -> AnswerJournal:
        """The journal at `path` (absent: empty), its cut-short last line, if any, cut off."""
        path = Path(path)
        return cls(path, read_answers(path, repair=True) if path.exists() else {})

    def answered(self, question_ids: Iterable[str]) -> dict[str, Answered]:
        """Of these questions, the ones kept with an answer (a failed one is asked again)."""
        with self._lock:
            found = {qid: self.kept.get(qid) for qid in question_ids}
        return {qid: a for qid, a in found.items() if a is not None and a.error is None}

    def append(self, answered: Answered) -> None:
        """Write one finished question, on disk before this returns. After close(), nothing is written:
        the threads an interrupted run abandons may still finish a question, and the count the user was
        told must stay the count on disk."""
        line = json.dumps(dataclasses.asdict(answered), ensure_ascii=False, default=str) + "\n"
        with self._lock:
            if self._closed:
                return
            try:
                with self.path.open("a", encoding="utf-8") as f:
                    f.write(line)
                    f.flush()
                    os.fsync(f.fileno())
            except OSError as e:  # a full disk must not cost the run its answers: they are still scored
                if not self._failed_write:
                    logger.warning(
                        "cannot write %s (%s): this run goes on, but a stopped run will ask again what it "
                        "answered; free space on that disk to keep answers as they come",
                        self.path,
                        e.strerror or e,
                    )
                self._failed_write = True
                return
            self.kept[answered.question_id] = answered

    def close(self) -> None:
        with self._lock:
            self._closed = True


def read_answers(path: Path, repair: bool = False) -> dict[str, Answered]:
    """Question id -> its last outcome in the journal at `path`; with `repair`, a cut-short last line
    is also cut off the file."""
    data = path.read_bytes()
    complete, _, tail = data.rpartition(b"\n")
    if tail:
        logger.warning(
            "%s: its last line is cut short (the run was stopped while writing it); that question is asked again",
            path,
        )
        if repair:
            os.truncate(path, len(complete) + 1 if complete else 0)
    kept: dict[str, Answered] = {}
    for number, raw in enumerate(complete.split(b"\n") if complete else [], start=1):
        answered = _answered(raw)
        if answered is None:
            logger.warning("%s line %d is not an answer; that question is asked again", path, number)
            continue
        kept[answered.question_id] = answered
    return kept


def _answered(raw: bytes) -> Answered | None:
    try:
        row = json.loads(raw)
        if not isinstance(row, dict) or not isinstance(row.get("question_id"), str):
            return None
        return Answered(**{k: v for k, v in row.items() if k in _FIELDS})
    except (ValueError, TypeError):
        return None
