"""OUT/answers.jsonl: each question's outcome appended the moment it is finished, so a stopped run keeps it.

Why: results.jsonl is written once every question is answered and scored; a run stopped before that
(Ctrl-C, a killed process, a lost machine) used to leave nothing but its fact store, and rerunning it
paid for every answer again. Here each finished question is one JSON line (an evaluate.runs.answering.
Answered), flushed and fsync'd before the next one is written, so what is on disk is what was done.
A rerun into the same folder (evaluate.runs.resume) reads it back and asks only what is missing.

A process killed in the middle of a write leaves its last line cut short: reading ignores that line
(the question is asked again), says so, and cuts it off the file so the next line starts clean. A
question that appears twice (it failed, and was asked again) counts by its last line.

Every line is validated against the types its readers rely on (`JournalLine`: each field's type, the
facts, citations and missing documents as the program's own types, the trace's repair count), not only
its question id: a line with the right id and wrong types used to crash every rerun with a TypeError in
run_outputs.py until edited by hand (issue 33). A line that does not validate is set aside, moved to
answers.rejected.jsonl (nothing is deleted), with a warning naming the field, and its question is asked
again.

The journal is also where a run's finished questions are kept while it goes on: in memory it holds
each one's Outcome and the byte offset of its line (evaluate.runs.outcome), and reading it back never
loads the whole file at once (issue 33 item 11: memory bounded over a run of any length).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import threading
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from evaluate.runs.outcome import Answered, LineAt, Outcome, answered_from
from signatures.errors import BadInput
from signatures.types import Citation, DocumentFailure, Fact

logger = logging.getLogger(__name__)

JOURNAL = "answers.jsonl"
REJECTED = "answers.rejected.jsonl"  # lines that did not validate, set aside beside the journal


class _Open(BaseModel):
    model_config = ConfigDict(strict=True, extra="allow")


class _Extract(_Open):
    repair_calls: int = 0  # summed by run_outputs.verification_metrics


class _Trace(_Open):
    extract: _Extract | None = None


class JournalLine(BaseModel):
    """One journal line as its readers use it (JSON types, no coercion): the fields of an Answered, with
    the facts, citations and missing documents in the shapes the scoring, the outputs and the audit
    report read. Unknown keys are ignored (a line of a later version still reads)."""

    model_config = ConfigDict(strict=True, extra="ignore")

    question_id: str
    question: str
    doc_ids: list[str]
    answer: str = ""
    records: list[dict] = []
    facts: list[Fact] = []
    code: str = ""
    result: str = ""
    citations: list[Citation] = []
    missing: list[DocumentFailure] = []
    run_log: dict = {}
    trace: _Trace = _Trace()
    retrieved_chunks: list[str] = []
    coverage: dict = {}
    coverage_line: str = ""
    error: str | None = None
    seconds: float = 0.0
    usage: dict = {}


class JournalUnusable(BadInput):
    """The journal's path is not a file this run can read and append to; the message names the fix."""


class AnswerJournal:
    """The answers of one run folder: those kept from earlier runs, and an append-only file for new ones.

    Thread-safe: the Analyst finishes questions on several threads at once."""

    def __init__(self, path: Path, kept: dict[str, Outcome]):
        self.path = path
        self.kept = kept  # question id -> its latest outcome (its line on disk), read or appended since
        self._lock = threading.Lock()
        self._closed = False
        self._failed_write = False

    @classmethod
    def open(cls, path: str | Path) -> AnswerJournal:
        """The journal at `path` (absent: empty), its cut-short last line cut off and the lines that do not
        validate set aside (answers.rejected.jsonl). JournalUnusable when the path is a folder or unreadable."""
        path = Path(path)
        if path.exists() and not path.is_file():
            raise JournalUnusable(
                f"{path} is not a file ({'a folder' if path.is_dir() else 'not a regular file'}): it is where "
                "this run keeps its answers; move it aside, or give a new --out"
            )
        try:
            return cls(path, read_answers(path, repair=True) if path.exists() else {})
        except OSError as e:
            raise JournalUnusable(
                f"cannot read {path} ({e.strerror or e}): make it readable and writable, or give a new --out"
            ) from None

    def answered(self, question_ids: Iterable[str]) -> dict[str, Outcome]:
        """Of these questions, the ones kept with an answer (a failed one is asked again)."""
        with self._lock:
            found = {qid: self.kept.get(qid) for qid in question_ids}
        return {qid: a for qid, a in found.items() if a is not None and a.error is None}

    def append(self, answered: Answered) -> Outcome:
        """Write one finished question, on disk before this returns; its Outcome, read back from its line
        (held whole when it could not be written). After close(), nothing is written: the threads an
        interrupted run abandons may still finish a question, and the count the user was told must stay
        the count on disk."""
        line = json.dumps(dataclasses.asdict(answered), ensure_ascii=False, default=str) + "\n"
        with self._lock:
            if self._closed:
                return Outcome.of(answered)
            try:
                with self.path.open("ab") as f:
                    offset = f.seek(0, os.SEEK_END)
                    f.write(line.encode("utf-8"))
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
                return Outcome.of(answered)
            kept = self.kept[answered.question_id] = Outcome.of(answered, LineAt(self.path, offset))
            return kept

    def close(self) -> None:
        with self._lock:
            self._closed = True


def read_answers(path: Path, repair: bool = False) -> dict[str, Outcome]:
    """Question id -> its last valid outcome in the journal at `path`, read a line at a time. With
    `repair`, a cut-short last line is cut off the file and the lines that do not validate are moved to
    answers.rejected.jsonl, so the journal holds only what reads back (and the next run does not warn
    about them again)."""
    kept: dict[str, Outcome] = {}
    good: list[tuple[int, int]] = []  # (offset, length) of each line that validates
    rejected: list[tuple[int, int]] = []
    offset, cut_at = 0, None
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            if not raw.endswith(b"\n"):  # only the last line can lack its end
                cut_at = offset
                break
            answered, why = _answered(raw[:-1])
            if answered is None:
                rejected.append((offset, len(raw)))
                aside = f"set aside in {path.with_name(REJECTED)}; " if repair else ""
                logger.warning(
                    "%s line %d is not an answer (%s); %sthat question is asked again",
                    path,
                    number,
                    why,
                    aside,
                )
            else:
                good.append((offset, len(raw)))
                kept[answered.question_id] = Outcome.of(answered, LineAt(path, offset))
            offset += len(raw)
    if cut_at is not None:
        logger.warning(
            "%s: its last line is cut short (the run was stopped while writing it); that question is asked again",
            path,
        )
        if repair:
            os.truncate(path, cut_at)
    if repair and rejected:
        moved = _set_aside(path, good, rejected)
        kept = {
            qid: dataclasses.replace(o, source=LineAt(path, moved[o.source.offset]))
            for qid, o in kept.items()
            if isinstance(o.source, LineAt)
        }
    return kept


def _answered(raw: bytes) -> tuple[Answered | None, str]:
    """The line's Answered, or None and why it does not validate (the first fields at fault)."""
    if not raw.strip():
        return None, "an empty line"
    try:
        JournalLine.model_validate_json(raw)  # validation only: the row is kept as written
    except ValidationError as e:
        wrong = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'the line'}: {err['msg']}" for err in e.errors()[:3]
        )
        return None, wrong
    return answered_from(json.loads(raw)), ""  # as written: the facts, ... stay the plain data they were


def _set_aside(path: Path, good: list[tuple[int, int]], rejected: list[tuple[int, int]]) -> dict[int, int]:
    """Append the rejected lines (offset, length) to answers.rejected.jsonl (fsync'd), then replace the
    journal with its valid lines (written beside it, then renamed: whole or not at all); each valid
    line's old offset -> its new one."""
    aside = path.with_name(REJECTED)
    partial = path.with_name(path.name + ".part")
    moved: dict[int, int] = {}
    with path.open("rb") as source:
        with aside.open("ab") as f:
            for offset, length in rejected:
                source.seek(offset)
                f.write(source.read(length))
            f.flush()
            os.fsync(f.fileno())
        with partial.open("wb") as f:
            for offset, length in good:
                source.seek(offset)
                moved[offset] = f.tell()
                f.write(source.read(length))
            f.flush()
            os.fsync(f.fileno())
    os.replace(partial, path)
    return moved
