"""Answer a dataset's questions with a program, several at once, one failure never sinking the rest.

Each question gets only what a system may see: the question and its documents' ids (gold fields
are stripped before the program sees the item). Threads run in a copy of the caller's context,
because DSPy keeps its settings (LM, adapter, usage tracker) in context variables.
"""

from __future__ import annotations

import contextvars
import logging
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field

import dspy

from programs.runtime.run_folder import to_jsonable
from retrievers.dataset import PublicItem

logger = logging.getLogger(__name__)


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


def answer_one(program, item: PublicItem) -> Answered:
    """Run the program on one gold-stripped item; any exception becomes this question's error."""
    if not isinstance(item, PublicItem):  # the type is the guarantee that no gold reaches the program
        raise TypeError(
            f"answer_one takes retrievers.dataset.PublicItem (strip_gold(item)), got {type(item).__name__}"
        )
    out = Answered(item.question_id, item.question, list(item.doc_ids))
    doc_ids = out.doc_ids
    start = time.perf_counter()
    try:
        with dspy.track_usage() as usage:
            pred = program(question=out.question, doc_ids=doc_ids or None)
        out.usage = to_jsonable(usage.get_total_tokens())
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
    except Exception as exc:  # one failing question never sinks the run
        out.error = f"{type(exc).__name__}: {exc}"[:1000]
        logger.warning("question %s failed: %s", out.question_id, out.error)
    out.seconds = round(time.perf_counter() - start, 3)
    return out


def answer_all(
    program, items: list[PublicItem], concurrency: int = 2, progress: bool = True
) -> list[Answered]:
    """Answers in the order of `items`, computed `concurrency` questions at a time."""
    if concurrency < 1:
        raise ValueError(f"--concurrency must be at least 1 (got {concurrency})")
    results: dict[int, Answered] = {}
    bar = _bar(len(items), progress)
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="question") as pool:
        futures = {
            pool.submit(contextvars.copy_context().run, answer_one, program, item): i
            for i, item in enumerate(items)
        }
        for future in as_completed(futures):
            results[futures[future]] = future.result()
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    return [results[i] for i in range(len(items))]


def _bar(total: int, enabled: bool):
    if not enabled or total < 2:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc="questions", unit="q", file=sys.stderr)
