"""Documents in one bounded thread pool: retrieval runs ahead, a gate bounds the LM calls in flight, and
each document keeps its own DSPy trace (so what an optimizer sees never depends on thread timing)."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed

import dspy

from programs.stages.extraction import DocumentJob, DocumentOutcome, Gate, Stop, Task

# Threads that retrieve passages ahead of the LM calls (which `settings.concurrency` bounds separately).
RETRIEVAL_THREADS = 64

OnDone = Callable[[int, int, DocumentOutcome], None] | None  # (done, total, outcome): progress displays


def run_all(
    jobs: list[DocumentJob], task: Task, on_done: OnDone, concurrency: int
) -> tuple[dict[str, DocumentOutcome], dict[str, list]]:
    """task(job, gate, stop) for every job in one bounded pool; outcomes and DSPy traces by document id
    (the caller adds the traces to the optimizer's, in plan order)."""
    outcomes: dict[str, DocumentOutcome] = {}
    # Only the LM calls are bounded by `concurrency`; retrieval for the next documents runs while the
    # current wave of calls is in flight, so a wave starts as soon as the previous one returns.
    gate: Gate = threading.BoundedSemaphore(concurrency)
    stop: Stop = (
        threading.Event()
    )  # set on Ctrl-C: calls in flight finish (their facts are kept), no new ones start
    pool = ThreadPoolExecutor(
        max_workers=max(1, min(len(jobs), RETRIEVAL_THREADS)), thread_name_prefix="extract"
    )
    try:
        # Each task runs in a copy of the caller's context: DSPy settings (LM, usage tracker) live there.
        futures = [pool.submit(contextvars.copy_context().run, traced, task, job, gate, stop) for job in jobs]
        traces = {}
        for future in as_completed(futures):
            outcome, traces[outcome.doc_id] = future.result()
            outcomes[outcome.doc_id] = outcome
            if on_done:
                on_done(len(outcomes), len(jobs), outcome)
    except BaseException:
        stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown()
    return outcomes, traces


def traced(task: Task, job: DocumentJob, gate: Gate, stop: Stop) -> tuple[DocumentOutcome, list]:
    """task with its own trace: an optimizer bootstraps its extractor demo from the trace, and threads
    appending to one list in finishing order made that demo, and so every later extraction prompt, depend
    on timing (an identical compile rerun missed the cache on 6 extraction calls)."""
    if dspy.settings.trace is None:
        return task(job, gate, stop), []
    with dspy.context(trace=[]):
        outcome = task(job, gate, stop)
        return outcome, list(dspy.settings.trace)


def extend_trace(entries: list) -> None:
    """Add tasks' entries to DSPy's trace, in the caller's order, within DSPy's own cap: its Predict drops
    the oldest entry past settings.max_trace_size, and a plain extend did not (a run's waves grew the
    process's trace by every predictor call of every question; bench/README.md, issue 33 item 11)."""
    trace = dspy.settings.trace
    trace.extend(entries)
    cap = max(0, dspy.settings.max_trace_size)
    if len(trace) > cap:
        del trace[: len(trace) - cap]
