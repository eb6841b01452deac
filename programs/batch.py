"""Answer many questions as one run: plan them all, extract each document once, then finish each.

Why (issue 21): questions answered on parallel threads over one fact store made a run depend on
timing. Which fields a planner was shown (Planner.known_fields) and which facts a question reused
depended on which other question's thread had finished first, and a reused fact is not the one a fresh
extraction returns, so two runs of the same program on the demo's first 10 questions sent 88 and 86
requests (78 of them different) and 3 answers differed. Here the run has three phases:
1. plan every question, against the fact store as it stood when the run began (nothing is extracted
   until every plan is made);
2. extract: each document once, for every field any question needs of it (programs.shared_extraction),
   documents in the order questions first need them; facts stored by earlier runs are still reused;
3. normalize, compute and answer each question from its own fields.
Phases 1 and 3 run `concurrency` questions at a time, each question on its own; results come back in
question order, never in the order threads finish. The same questions then send the same requests
at any concurrency, and a document several questions need costs one call, not one per question.

Waves (issue 33): a 10,000-question dataset planned every question before its first answer (7 min) and
held every plan and passage at once (~1 GB). The questions now go through the three phases in fixed
waves of `wave_size` questions, in order: the first answers come after one wave, and memory holds one
wave. The fact store is shared across waves (a later wave reuses what an earlier one extracted), and
every wave's planner is shown the fields the store held when the run began (FactStore.frozen_fields),
as one wave's would be: the answers do not depend on the wave size. What does: a document two waves
need for different fields is asked once per wave instead of once.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import dspy

from programs.analyst import Analyst
from programs.native_memory import release_free_memory
from programs.result import ProgramResult
from programs.shared_extraction import SharedExtraction
from programs.stages.extract_batches import extend_trace
from programs.stages.planner import Planned

logger = logging.getLogger(__name__)


@dataclass
class BatchAnswers:
    """Per question, in the order asked: its result (or the exception that stopped it) and its own LM
    usage (planning, normalizing, code, answer); the extraction's usage is shared by the questions."""

    results: list[ProgramResult | Exception]
    usage: list[dict]
    shared_usage: dict = field(default_factory=dict)
    rounds: int = 0  # extraction rounds (calls per document at most); 1 unless two questions' fields clash
    documents_from_store: int = 0  # document calls the fact store answered whole: extraction calls saved


def answer_batch(
    program: Analyst,
    questions: list[tuple[str, list[str] | None]],
    concurrency: int = 2,
    on_answered: Callable[[int, ProgramResult | Exception, dict], None] | None = None,
    on_document=None,
    wave_size: int | None = None,
    keep_results: bool = True,
) -> BatchAnswers:
    """(question, document ids or None) pairs answered by an Analyst as one run, `wave_size` questions at
    a time (None: the program's own, else all at once).

    on_answered(index, result or exception, its LM usage) as each question is finished, on the thread
    that finished it (a caller can keep each answer as it comes: evaluate.runs.journal); on_document(done,
    total, outcome) as each document's extraction is (the extractor's own progress hook).

    keep_results=False (a caller that keeps what it needs in on_answered): a finished wave's results
    (their traces, passages, facts) are let go when the wave ends, and `results` and `usage` are left
    empty; kept,
    every result of the run stays in memory until the run ends (issue 33 item 11: bench/waves.py --full,
    2,000 questions)."""
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1 (got {concurrency})")
    size = wave_size or getattr(program, "wave_size", None) or len(questions) or 1
    if size < 1:
        raise ValueError(f"wave_size must be at least 1 (got {size})")
    total = BatchAnswers(results=[], usage=[])
    facts = program.extractor.facts
    freeze = facts.frozen_fields() if facts is not None else contextlib.nullcontext()
    try:
        with freeze:
            for start in range(0, len(questions), size):
                wave = answer_wave(
                    program, questions[start : start + size], start, concurrency, on_answered, on_document
                )
                if keep_results:
                    total.results += wave.results
                    total.usage += wave.usage
                total.shared_usage = add_usage(total.shared_usage, wave.shared_usage)
                total.rounds = max(total.rounds, wave.rounds)
                total.documents_from_store += wave.documents_from_store
                del wave  # else it holds this wave's results all through the next one
                release_free_memory()  # what the wave freed, not held by the allocator (programs/native_memory.py)
    finally:
        program.code_writer.sandboxes.discard()  # no next question: a spare sandbox would wait for nothing
    return total


def answer_wave(
    program: Analyst,
    questions: list[tuple[str, list[str] | None]],
    offset: int,
    concurrency: int,
    on_answered: Callable[[int, ProgramResult | Exception, dict], None] | None,
    on_document,
) -> BatchAnswers:
    """One wave: plan its questions, extract each of their documents once, finish each question.
    `offset`: the index of its first question in the run (what on_answered is told)."""

    def plan(i: int) -> tuple[list[str] | None, Planned | ProgramResult]:
        question, doc_ids = questions[i]
        scope = program.scope(doc_ids)
        return scope, program.plan_for(question, scope)

    planned, usage = in_order(plan, len(questions), concurrency)
    shared = SharedExtraction(program.extractor.matcher)
    for i, outcome in enumerate(planned):
        if not isinstance(outcome, Exception) and isinstance(outcome[1], Planned):
            shared.add(i, outcome[1])
    logger.info(
        "%d questions planned; %d documents to extract in %d round(s)",
        len(questions),
        len({doc for calls in shared.rounds for doc in calls}),
        len(shared.rounds),
    )
    with dspy.track_usage() as tracker:
        extractions = [
            program.extractor(assignments=shared.assignments(n), on_done=on_document)
            for n in range(len(shared.rounds))
        ]
    shared_usage = tracker.get_total_tokens()
    if shared.rounds:
        program.code_writer.warm_up()  # the first question's sandbox starts now, off the critical path

    def finish(i: int) -> ProgramResult:
        outcome = planned[i]
        if isinstance(outcome, Exception):
            raise outcome
        scope, plan_or_result = outcome
        if isinstance(plan_or_result, ProgramResult):  # planning failed: the result says why
            return plan_or_result
        question = questions[i][0]
        extracted = shared.split(i, plan_or_result, extractions)
        return program.conclude(question, scope, plan_or_result, extracted)

    def answered(i: int, result: ProgramResult | Exception, finish_usage: dict) -> None:
        if on_answered is not None:  # the question's whole usage, as in BatchAnswers.usage
            on_answered(offset + i, result, add_usage(usage[i], finish_usage))

    results, finish_usage = in_order(finish, len(questions), concurrency, answered)
    return BatchAnswers(
        results=results,
        usage=[add_usage(a, b) for a, b in zip(usage, finish_usage, strict=True)],
        shared_usage=shared_usage,
        rounds=len(shared.rounds),
        documents_from_store=sum(
            len(shared.assignments(n)) - extraction.lm_documents for n, extraction in enumerate(extractions)
        ),
    )


def in_order(fn, count: int, concurrency: int, on_done=None) -> tuple[list, list[dict]]:
    """fn(i) for i in range(count), `concurrency` at a time, each in a copy of the caller's context (DSPy
    keeps its LM and usage tracker there): (results or exceptions, LM usage of each), by index. A DSPy
    trace (an optimizer's) gets each task's entries in index order, not in the order threads finished."""
    results: list = [None] * count
    usage: list[dict] = [{}] * count
    traces: list[list] = [[] for _ in range(count)]
    tracing = dspy.settings.trace is not None

    def tracked(i: int) -> None:
        with dspy.track_usage() as tracker, dspy.context(trace=[] if tracing else None):
            try:
                results[i] = fn(i)
            except Exception as exc:  # one question never sinks the others
                results[i] = exc
            traces[i] = list(dspy.settings.trace or [])
        usage[i] = tracker.get_total_tokens()
        if on_done is not None:
            on_done(i, results[i], usage[i])

    with ThreadPoolExecutor(
        max_workers=max(1, min(concurrency, count)), thread_name_prefix="question"
    ) as pool:
        futures = [pool.submit(contextvars.copy_context().run, tracked, i) for i in range(count)]
        for future in futures:
            future.result()  # re-raises only what `tracked` does not catch (Ctrl-C)
    if tracing:
        for entries in traces:
            extend_trace(entries)
    return results, usage


def add_usage(a: dict, b: dict) -> dict:
    """Two usage summaries (model -> token counts) added together."""
    total = {model: dict(counts) for model, counts in a.items()}
    for model, counts in b.items():
        mine = total.setdefault(model, {})
        for key, value in counts.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                mine[key] = mine.get(key, 0) + value
            elif key not in mine:
                mine[key] = value
    return total
