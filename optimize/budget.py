"""A hard cap on the LM requests of a compile: count requests that reach an LM, refuse the ones past the cap.

What counts: a request that leaves for an LM. A DSPy cache hit costs nothing, so it is counted apart
(`cache_hits`) and never charged: an identical rerun of a compile reported 57 calls while sending 0
requests, and GEPA 106 against 2 real ones, when every call was charged.

Where: DSPy 3.4's `dspy.clients.execution.execute` / `aexecute` answer from the cache first and only
on a miss pick a backend with `_engine(lm, call, asynchronous)`. Every LM object of a compile (per-stage
LMs, an optimizer's copies with new rollout ids, GEPA's reflection LM) goes through there, so charging
in `_engine` counts exactly the requests, whatever object made them; the `cache_hit` flag of the
result `execute` returns counts the free answers. (A DSPy callback could count, but DSPy swallows
exceptions raised in callbacks, so it could never refuse.)

A refused request raises `BudgetExhausted`, a BaseException on purpose: DSPy's evaluators and
optimizers catch `Exception` per example and go on, so MIPROv2 ran all its trials on refused calls
and logged 242 tracebacks. A BaseException unwinds the whole optimizer at the first refusal; the
compile then keeps what the optimizer had found so far (optimize/best_so_far.py).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

import dspy.clients.execution as execution


class BudgetExhausted(BaseException):  # noqa: N818 -- the name says what happened; BaseException: see above
    """Raised instead of an LM request once the compile's request budget is spent."""


class CallBudget:
    """Thread-safe count of LM requests and cache hits, with an optional cap on requests (None = count only)."""

    def __init__(self, max_calls: int | None = None):
        if max_calls is not None and max_calls < 1:
            raise ValueError(f"--max-calls must be at least 1 (got {max_calls}); omit it for no cap")
        self.max_calls = max_calls
        self.calls = 0  # requests that reached an LM
        self.cache_hits = 0  # answers DSPy's cache gave for free
        self.refused = 0
        self._lock = threading.Lock()

    @property
    def exhausted(self) -> bool:
        """True once a request was refused: the cap stopped the work (reaching it exactly stopped nothing)."""
        return self.refused > 0

    def charge(self, model: str = "") -> None:
        """Count one request, or raise BudgetExhausted if the cap is already reached."""
        with self._lock:
            if self.max_calls is not None and self.calls >= self.max_calls:
                self.refused += 1
                raise BudgetExhausted(
                    f"LM call budget of {self.max_calls} requests reached (model {model or '?'}); "
                    "raise --max-calls to let the optimizer go further"
                )
            self.calls += 1

    def cache_hit(self) -> None:
        with self._lock:
            self.cache_hits += 1

    def __deepcopy__(self, memo):
        return self  # one shared counter even if an optimizer deep-copies whatever holds it

    def summary(self) -> dict:
        return {
            "lm_calls": self.calls,
            "cache_hits": self.cache_hits,
            "max_calls": self.max_calls,
            "refused_calls": self.refused,
            "budget_exhausted": self.exhausted,
        }


@contextlib.contextmanager
def enforce(budget: CallBudget) -> Iterator[CallBudget]:
    """While inside, every LM request in the process is charged to `budget` first; cache hits are counted."""
    if not hasattr(execution, "_engine"):
        raise RuntimeError(
            "dspy.clients.execution._engine is gone: this DSPy version routes requests elsewhere; "
            "pin dspy 3.4.x (pyproject.toml) or move optimize/budget.py's hook"
        )
    inner_engine, inner_execute, inner_aexecute = execution._engine, execution.execute, execution.aexecute

    def charged_engine(lm, call, asynchronous):
        budget.charge(getattr(lm, "model", ""))  # reached only on a cache miss: a real request follows
        return inner_engine(lm, call, asynchronous)

    def counted_execute(lm, call):
        result = inner_execute(lm, call)
        if getattr(result, "cache_hit", False):
            budget.cache_hit()
        return result

    async def counted_aexecute(lm, call):
        result = await inner_aexecute(lm, call)
        if getattr(result, "cache_hit", False):
            budget.cache_hit()
        return result

    threads_before = set(threading.enumerate())
    execution._engine, execution.execute, execution.aexecute = (
        charged_engine,
        counted_execute,
        counted_aexecute,
    )
    try:
        yield budget
    finally:
        if budget.exhausted:
            settle(threads_before)
        execution._engine, execution.execute, execution.aexecute = inner_engine, inner_execute, inner_aexecute


def settle(threads_before: set[threading.Thread], seconds: float = 30.0) -> None:
    """Wait for the worker threads the stopped optimizer left behind, while their requests are still refused.

    DSPy's parallel evaluator shuts its pool down without waiting, so after the stop its queued examples
    still run in the background; lifting the cap before they end would let them send real requests.
    Each is refused at once, so this takes milliseconds.
    """
    deadline = time.monotonic() + seconds
    for thread in set(threading.enumerate()) - threads_before:
        if not thread.daemon and thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))
