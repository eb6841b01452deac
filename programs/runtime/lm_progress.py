"""Which stage is waiting on the LM, and for how long; calls and parse failures per stage.

Why: a small local model once held the planner call for 8 minutes (four read timeouts) with nothing
on the screen. `LMWatch` is a DSPy callback `configure()` registers: while a call is outstanding it
logs one line every `every` seconds naming the stage, the model and the timeout setting that bounds
it; it also counts, per stage, LM calls, LM errors and adapter parse failures (the figures
bench/local_structured.py compares with and without JSON-schema decoding).

A call's stage is the predictor that made it (DSPy calls the LM on the predictor's own thread), named
by the program's stage attributes when configure() was given the program, else by its signature.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict

import dspy
from dspy.utils.callback import BaseCallback

logger = logging.getLogger(__name__)


class LMWatch(BaseCallback):
    def __init__(
        self, every: float = 30.0, timeout: float | None = None, labels: dict[int, str] | None = None
    ):
        """every: seconds between waiting lines (0 = none); labels: id(predictor) -> stage name."""
        self.every, self.timeout, self.labels = every, timeout, dict(labels or {})
        self._local = threading.local()
        self._lock = threading.Lock()
        self._outstanding: dict[str, dict] = {}  # call_id -> {stage, model, started, next}
        self._counts: dict[str, dict[str, float]] = defaultdict(
            lambda: {"calls": 0, "lm_errors": 0, "parse_failures": 0, "seconds": 0.0}
        )
        self._ticker: threading.Thread | None = None
        self._wake = threading.Event()

    # ---- which stage a call belongs to -------------------------------------------------------
    def on_module_start(self, call_id, instance, inputs):
        if isinstance(instance, dspy.Predict):
            name = self.labels.get(id(instance)) or getattr(instance.signature, "__name__", "lm")
            stack = self._stack()
            stack.append((call_id, name))

    def on_module_end(self, call_id, outputs, exception=None):
        stack = self._stack()
        if stack and stack[-1][0] == call_id:
            stack.pop()

    def _stack(self) -> list:
        if not hasattr(self._local, "stack"):
            self._local.stack = []
        return self._local.stack

    def _stage(self) -> str:
        stack = self._stack()
        return stack[-1][1] if stack else "lm"

    # ---- LM calls ---------------------------------------------------------------------------
    def on_lm_start(self, call_id, instance, inputs):
        stage, now = self._stage(), time.monotonic()
        with self._lock:
            self._outstanding[call_id] = {
                "stage": stage,
                "model": getattr(instance, "model", "?"),
                "started": now,
                "next": now + self.every,
            }
            self._counts[stage]["calls"] += 1
            if self.every > 0 and (self._ticker is None or not self._ticker.is_alive()):
                self._ticker = threading.Thread(target=self._tick, name="lm-watch", daemon=True)
                self._ticker.start()

    def on_lm_end(self, call_id, outputs, exception=None):
        with self._lock:
            call = self._outstanding.pop(call_id, None)
            if call is None:
                return
            counts = self._counts[call["stage"]]
            counts["seconds"] += time.monotonic() - call["started"]
            if exception is not None:
                counts["lm_errors"] += 1

    def on_adapter_parse_end(self, call_id, outputs, exception=None):
        if exception is not None:
            with self._lock:
                self._counts[self._stage()]["parse_failures"] += 1

    # ---- the waiting lines ------------------------------------------------------------------
    def _tick(self) -> None:
        while True:
            self._wake.wait(min(1.0, self.every))
            now = time.monotonic()
            with self._lock:
                if not self._outstanding:
                    self._ticker = None
                    return
                due = [c for c in self._outstanding.values() if now >= c["next"]]
                for call in due:
                    call["next"] = now + self.every
                waiting = len(self._outstanding)
            for call in due:
                logger.warning("%s", self.waiting_line(call, now, waiting))

    def waiting_line(self, call: dict, now: float, waiting: int) -> str:
        limit = (
            f"; a request gives up after {self.timeout:g} s (COLLATE_TIMEOUT / --timeout)"
            if self.timeout
            else ""
        )
        others = f"; {waiting - 1} other LM call(s) outstanding" if waiting > 1 else ""
        return f"{call['stage']}: waiting {now - call['started']:.0f} s on the LM ({call['model']}{limit}){others}"

    # ---- what a run reports -----------------------------------------------------------------
    def summary(self) -> dict[str, dict[str, float]]:
        """Per stage: calls, lm_errors, parse_failures, seconds (LM time, summed over calls)."""
        with self._lock:
            return {
                stage: {k: round(v, 3) if k == "seconds" else int(v) for k, v in c.items()}
                for stage, c in self._counts.items()
            }


def stage_labels(program) -> dict[int, str]:
    """id(predictor) -> stage name for the program's stage attributes (programs.runtime.settings.STAGES)."""
    from programs.runtime.settings import STAGES

    labels = {}
    for stage, (_, attribute) in STAGES.items():
        module = getattr(program, attribute, None) if attribute and program is not None else None
        if module is not None:
            for _, predictor in module.named_predictors():
                labels[id(predictor)] = stage
    return labels


def install(watch: LMWatch) -> LMWatch:
    """Register `watch` as DSPy's global callback, replacing an LMWatch a previous configure() left."""
    others = [c for c in (dspy.settings.get("callbacks") or []) if not isinstance(c, LMWatch)]
    dspy.configure(callbacks=others + [watch])
    return watch


def current_watch() -> LMWatch | None:
    """The LMWatch configure() registered, for a run summary (None when none is)."""
    return next((c for c in (dspy.settings.get("callbacks") or []) if isinstance(c, LMWatch)), None)
