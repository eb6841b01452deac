"""Answer a dataset's questions with a program, several at once, one failure never sinking the rest.

Each question gets only what a system may see: the question and its documents' ids (gold fields
are stripped before the program sees the item). The Analyst answers them as one run
(programs.batch: plan all, extract each document once, finish each), so the same run sends the same
requests and gives the same answers at any concurrency; another program (flat RAG) answers each
question on its own thread. Threads run in a copy of the caller's context, because DSPy keeps its
settings (LM, adapter, usage tracker) in context variables. A question whose program raised or
returned an error (no plan, no document readable) is failed, with its reason, never answered.
Each question's outcome can be kept the moment it is finished (evaluate.runs.journal), and the questions
a stopped run already answered are not asked again (evaluate.runs.resume). What stays in memory of a
finished question is its Outcome (evaluate.runs.outcome), the rest being in the journal: a run's memory
does not grow with its questions' traces (issue 33 item 11).
"""

from __future__ import annotations

import contextvars
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

import dspy

from evaluate.dataset import PublicItem
from evaluate.runs.interruptible import interruptible
from evaluate.runs.outcome import Answered, Outcome
from programs.analyst import Analyst
from programs.batch import answer_batch
from programs.lm.spend import cut_by_budget, stoppable
from programs.protocols import Program
from programs.run_folder import to_jsonable

if TYPE_CHECKING:
    from tqdm import tqdm

logger = logging.getLogger(__name__)
# How long a Ctrl-C waits for the requests in flight to come back (the fake demo reader's take well
# under a second); an answer finished meanwhile is kept, and the process still ends within 2 s.
GRACE = 1.0


@dataclass
class Answers:
    """Every question's outcome in the order asked, as the run keeps it (evaluate.runs.outcome: the whole
    of each is in the journal), and the LM usage no one question owns (the extraction calls the Analyst
    shares between questions)."""

    answered: list[Outcome]
    shared_usage: dict = field(default_factory=dict)
    documents_from_store: int = 0  # extraction calls the fact store saved (programs.batch)


class Journal(Protocol):
    """Where answers are kept as they come (evaluate.runs.journal.AnswerJournal; a protocol, so this lower
    module does not import it)."""

    def answered(self, question_ids: Iterable[str]) -> dict[str, Outcome]: ...

    def append(self, answered: Answered) -> Outcome: ...

    def close(self) -> None: ...


def public(item: PublicItem) -> PublicItem:
    if not isinstance(item, PublicItem):  # the type is the guarantee that no gold reaches the program
        raise TypeError(
            f"answering takes evaluate.dataset.PublicItem (strip_gold(item)), got {type(item).__name__}"
        )
    return item


def answer_one(program: Program, item: PublicItem) -> Answered:
    """Run the program on one gold-stripped item; any exception becomes this question's error."""
    out = Answered(public(item).question_id, item.question, list(item.doc_ids))
    start = time.perf_counter()
    try:
        with dspy.track_usage() as usage:
            pred = program(question=out.question, doc_ids=out.doc_ids or None)
        fill(out, pred, usage.get_total_tokens())
    except Exception as exc:  # one failing question never sinks the run
        fail(out, exc)
    out.seconds = round(time.perf_counter() - start, 3)
    return out


def fill(out: Answered, pred, usage: dict) -> Answered:
    """The program's outputs as plain JSON data; its `error` (no plan, nothing readable) fails the question."""
    out.usage = to_jsonable(usage)
    out.answer = str(getattr(pred, "answer", "") or "")
    for name in (
        "records",
        "facts",
        "citations",
        "missing",
        "run_log",
        "trace",
        "retrieved_chunks",
        "coverage",
    ):
        value = getattr(pred, name, None)
        if value is not None:
            setattr(out, name, to_jsonable(value))
    out.code = str(getattr(pred, "code", "") or "")
    out.coverage_line = str(getattr(pred, "coverage_line", "") or "")
    out.result = str(getattr(pred, "result", "") or "")
    error = getattr(pred, "error", None)
    if error:
        out.error = str(error)[:1000]
        said_failed(out)
    return out


def fail(out: Answered, exc: Exception) -> Answered:
    out.error = f"{type(exc).__name__}: {exc}"[:1000]
    said_failed(out)
    return out


def said_failed(out: Answered) -> None:
    """A failed question is a warning; one the run's budget cut is listed once by the run's budget line
    (a capped run of 10 printed 10 warnings, then the same 10 ids)."""
    log = logger.info if cut_by_budget(out.error) else logger.warning
    log("question %s failed: %s", out.question_id, out.error)


def answer_all(
    program: Program,
    items: list[PublicItem],
    concurrency: int = 2,
    progress: bool = True,
    journal: Journal | None = None,
) -> Answers:
    """Answers in the order of `items`, `concurrency` questions at a time.

    With a `journal` (evaluate.runs.journal), the questions it holds an answer to are not asked again, and
    each new outcome is appended to it as soon as it is finished. The questions are answered off the
    main thread (evaluate.runs.interruptible): on Ctrl-C this raises KeyboardInterrupt at once, and the
    journal is closed first, so it holds exactly what was finished by then."""
    if concurrency < 1:
        raise ValueError(f"--concurrency must be at least 1 (got {concurrency})")
    items = [public(item) for item in items]
    kept = journal.answered(item.question_id for item in items) if journal is not None else {}
    todo = [item for item in items if item.question_id not in kept]
    bars = Bars(progress)
    with stoppable() as stopped:

        def keep(answered: Answered) -> Outcome:
            if journal is not None and not (stopped.is_set() and answered.error):  # not one the stop failed
                return journal.append(answered)  # kept on disk: only its Outcome stays in memory
            return Outcome.of(answered)

        def stop() -> None:
            stopped.set()  # no new LM request; the ones in flight finish, and their answers are kept
            bars.silence()  # nothing redraws over the line the caller prints next

        try:
            # No DSPy trace: a run reads none (an optimizer sets its own), and DSPy's default one, a list
            # for the process, got every predictor call's inputs and prediction of the whole run
            with dspy.context(trace=None):
                fresh = (
                    interruptible(
                        lambda: _answer(program, todo, concurrency, bars, keep),
                        on_interrupt=stop,
                        grace=GRACE,
                    )
                    if todo
                    else None
                )
        except KeyboardInterrupt:
            if journal is not None:
                journal.close()  # what the abandoned threads finish after the grace is not written
            raise  # the bars were closed (stop): the caller's line starts on a line of its own
    if fresh is None:  # every question kept from an earlier run: nothing was asked
        return Answers([kept[item.question_id] for item in items])
    by_id = {**kept, **{a.question_id: a for a in fresh.answered}}
    return Answers(
        [by_id[item.question_id] for item in items], fresh.shared_usage, fresh.documents_from_store
    )


def _answer(
    program: Program,
    items: list[PublicItem],
    concurrency: int,
    bars: Bars,
    keep: Callable[[Answered], Outcome] | None,
) -> Answers:
    if isinstance(program, Analyst):
        return answer_together(program, items, concurrency, bars, keep)
    results: dict[int, Outcome] = {}
    bar = bars.new(len(items), "questions", "q")
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="question") as pool:
        futures = {
            pool.submit(contextvars.copy_context().run, answer_one, program, item): i
            for i, item in enumerate(items)
        }
        for future in as_completed(futures):
            answered = future.result()
            results[futures[future]] = keep(answered) if keep is not None else Outcome.of(answered)
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return Answers([results[i] for i in range(len(items))])


def answer_together(
    program: Analyst,
    items: list[PublicItem],
    concurrency: int,
    bars: Bars | bool,
    keep: Callable[[Answered], Outcome] | None = None,
) -> Answers:
    """The Analyst's run: every question planned, each document extracted once, each question finished
    (and kept, if `keep`: it returns what stays in memory) as soon as it is. `bars`: the progress bars
    (or whether to show them)."""
    bars = bars if isinstance(bars, Bars) else Bars(bars)
    documents, questions = DocumentBar(bars), bars.new(len(items), "questions", "q")
    start = time.perf_counter()
    answered: dict[int, Outcome] = {}
    finished_count = [0]
    lock = threading.Lock()

    def finished(i: int, result, usage: dict) -> None:
        item = items[i]
        out = Answered(item.question_id, item.question, list(item.doc_ids))
        out = fail(out, result) if isinstance(result, Exception) else fill(out, result, usage)
        with lock:
            finished_count[0] += 1
            # the run's time so far, shared by the questions finished so far: they share their planning
            # and extraction, so no question has a time of its own
            out.seconds = round((time.perf_counter() - start) / finished_count[0], 3)
        kept = keep(out) if keep is not None else Outcome.of(out)
        with lock:
            answered[i] = kept
        if questions is not None:
            questions.update(1)

    try:
        batch = answer_batch(
            program,
            [(item.question, list(item.doc_ids) or None) for item in items],
            concurrency,
            on_answered=finished,
            on_document=documents,
            keep_results=False,  # `finished` keeps each one's Outcome: a finished wave's results leave memory
        )
    finally:
        documents.close()
        if questions is not None:
            questions.close()
    return Answers(
        [answered[i] for i in range(len(items))], to_jsonable(batch.shared_usage), batch.documents_from_store
    )


class DocumentBar:
    """tqdm of documents extracted / total on stderr, one per extraction round, made when its total is known."""

    def __init__(self, bars: Bars):
        self.bars = bars
        self.bar: tqdm | None = None

    def __call__(self, done: int, total: int, outcome) -> None:
        if not self.bars.enabled:
            return
        if self.bar is None or done == 1:
            self.close()
            self.bar = self.bars.new(total, "documents", "doc", at_least=1)
        if self.bar is not None:  # None for a round of no documents, or once silenced
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


class Bars:
    """The run's progress bars on stderr; `silence()` (Ctrl-C) closes them and makes no new one, so the
    threads still finishing do not redraw a bar over the line that follows (it ran on from 6 to 18 of
    40, and the "interrupted" line was printed at its end)."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self._made: list[tqdm] = []
        self._silenced = False
        self._lock = threading.Lock()

    def new(self, total: int, desc: str, unit: str, at_least: int = 2) -> tqdm | None:
        with self._lock:
            if self._silenced:
                return None
            bar = _bar(total, self.enabled, desc, unit, at_least)
            if bar is not None:
                self._made.append(bar)
            return bar

    def silence(self) -> None:
        with self._lock:
            self._silenced = True
            made, self._made = self._made, []
        for bar in made:
            bar.close()  # ends its line; tqdm then draws nothing more for it, whatever thread updates it


def _bar(total: int, enabled: bool, desc: str, unit: str, at_least: int = 2) -> tqdm | None:
    if not enabled or total < at_least:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr)
