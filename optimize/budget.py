"""A hard cap on LM calls for a compile: count every call, refuse the ones past the cap.

Why at DSPy's execution layer: a compile runs many LM objects (per-stage LMs, copies an optimizer
makes with new rollout ids, GEPA's reflection LM, ChatAdapter's JSON fallback). Every one of them
goes through `dspy.clients.execution.execute` / `aexecute`, so wrapping those two functions counts
all of them, whatever object made the call. A DSPy callback would count them too, but DSPy swallows
exceptions raised in callbacks, so it could never stop a call.

A refused call raises `BudgetExhausted` (an error, not a crash): DSPy's evaluators score that
example 0 and go on, so optimizers wind down quickly without spending anything more, and the compile
command reports that the cap was reached.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator

import dspy.clients.execution as execution

logger = logging.getLogger(__name__)


class BudgetExhausted(RuntimeError):
    """Raised instead of an LM call once the compile's call budget is spent."""


class CallBudget:
    """Thread-safe counter of LM calls with an optional cap (None = count only)."""

    def __init__(self, max_calls: int | None = None):
        if max_calls is not None and max_calls < 1:
            raise ValueError(f"--max-calls must be at least 1 (got {max_calls}); omit it for no cap")
        self.max_calls = max_calls
        self.calls = 0
        self.refused = 0
        self._lock = threading.Lock()

    @property
    def exhausted(self) -> bool:
        return self.max_calls is not None and self.calls >= self.max_calls

    def charge(self, model: str = "") -> None:
        """Count one call, or raise BudgetExhausted if the cap is already reached."""
        with self._lock:
            if self.exhausted:
                self.refused += 1
                if self.refused == 1:
                    logger.warning("LM call budget of %d calls reached: refusing further calls", self.max_calls)
                raise BudgetExhausted(
                    f"LM call budget of {self.max_calls} calls reached (model {model or '?'}); "
                    "raise --max-calls to let the optimizer go further"
                )
            self.calls += 1

    def __deepcopy__(self, memo):
        return self  # one shared counter even if an optimizer deep-copies whatever holds it

    def summary(self) -> dict:
        return {"lm_calls": self.calls, "max_calls": self.max_calls, "refused_calls": self.refused,
                "budget_exhausted": self.exhausted}


@contextlib.contextmanager
def enforce(budget: CallBudget) -> Iterator[CallBudget]:
    """While inside, every LM call in the process is charged to `budget` first."""
    inner_execute, inner_aexecute = execution.execute, execution.aexecute

    def budgeted_execute(lm, call):
        budget.charge(getattr(lm, "model", ""))
        return inner_execute(lm, call)

    async def budgeted_aexecute(lm, call):
        budget.charge(getattr(lm, "model", ""))
        return await inner_aexecute(lm, call)

    execution.execute, execution.aexecute = budgeted_execute, budgeted_aexecute
    try:
        yield budget
    finally:
        execution.execute, execution.aexecute = inner_execute, inner_aexecute
