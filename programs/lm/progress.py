"""Which stage is waiting on the LM, and for how long; calls and parse failures per stage.

Why: a small local model once held the planner call for 8 minutes (four read timeouts) with nothing
on the screen. `LMWatch` is a DSPy callback `configure()` registers: while a call is outstanding it
logs one line every `every` seconds naming the stage, the model, and the timeout that bounds the call
and the setting that sets it (the calling LM's own: COLLATE_TIMEOUT_<STAGE> when the stage has one); it also counts, per stage, LM calls, LM errors and adapter parse failures (the figures
bench/local_structured.py compares with and without JSON-schema decoding).

A call's stage is the predictor that made it (DSPy calls the LM on the predictor's own thread), named
by the program's stage attributes when configure() was given the program, else by its signature.

It also adds up, per stage, what the answered calls spent: prompt and completion tokens, dollars
(calls whose model has no known price are counted as `unpriced_calls`, never as $0) and cache hits;
programs/lm/counted_lm.py reports each call on the thread that made it, so the stage is the same.

A watch lives as long as the process's DSPy settings (several runs in one process share it), so a
run's own figures are a difference of two snapshots: `RunCounts` takes one when the run starts and
`stages()` subtracts it at the end (evaluate.run's summary and MLflow metrics, collate ask's line).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import defaultdict

import dspy
from dspy.utils.callback import BaseCallback

from programs.lm import spend
from programs.lm.errors import GLOBAL_TIMEOUT, timeout_of
from programs.lm.spend import refusal
from programs.lm.stages import STAGES

logger = logging.getLogger(__name__)

# per stage, as summary() gives them
COUNTS = (
    "calls",
    "lm_errors",
    "parse_failures",
    "parse_retries",
    "seconds",
    "tokens_in",
    "tokens_out",
    "usd",
    "unpriced_calls",
    "cache_hits",
    "refused_calls",
)
FRACTIONAL = ("seconds", "usd")  # the counts that are not whole numbers
# count -> the name a run summary and an MLflow metric give it (lm_parse_failures, lm_parse_failures_<stage>)
METRIC_NAMES = {
    "calls": "lm_calls",
    "lm_errors": "lm_errors",
    "parse_failures": "lm_parse_failures",
    "parse_retries": "lm_parse_retries",
    "seconds": "lm_seconds",
    "tokens_in": "tokens_in",
    "tokens_out": "tokens_out",
    "usd": "cost_usd",
    "unpriced_calls": "cost_unpriced_calls",
    "cache_hits": "lm_cache_hits",
    "refused_calls": "lm_refused_calls",
}


STAGE_MARK = "collate_stage"  # LMWatch.mark's attribute


class LMWatch(BaseCallback):
    def __init__(
        self, every: float = 30.0, timeout: float | None = None, labels: dict[int, str] | None = None
    ):
        """every: seconds between waiting lines (0 = none); timeout: what a waiting line names for an LM
        that carries no timeout of its own; labels: id(predictor) -> stage name."""
        self.every, self.timeout, self.labels = every, timeout, dict(labels or {})
        self._local = threading.local()
        self._lock = threading.Lock()
        self._outstanding: dict[str, dict] = {}  # call_id -> {stage, model, timeout, setting, started, next}
        self._counts: dict[str, dict[str, float]] = defaultdict(lambda: dict.fromkeys(COUNTS, 0))
        self._ticker: threading.Thread | None = None
        self._wake = threading.Event()

    @staticmethod
    def mark(predictor, stage: str) -> None:
        """Count `predictor`'s calls under `stage`, carried on the predictor itself: for a predictor made per
        call (the cascade's strong one), whose id a later predictor may reuse once it is freed."""
        setattr(predictor, STAGE_MARK, stage)

    def label(self, module, stage: str) -> None:
        """Count the calls of `module`'s predictors under `stage` (e.g. evaluate's judge)."""
        for _, predictor in module.named_predictors():
            self.labels[id(predictor)] = stage

    # ---- which stage a call belongs to -------------------------------------------------------
    def on_module_start(self, call_id, instance, inputs):
        if isinstance(instance, dspy.Predict):
            name = (
                getattr(instance, STAGE_MARK, None)
                or self.labels.get(id(instance))
                or unmarked_name(instance)
            )
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
        timeout, setting = timeout_of(instance)
        if timeout is None:
            timeout, setting = self.timeout, GLOBAL_TIMEOUT
        with self._lock:
            self._outstanding[call_id] = {
                "stage": stage,
                "model": getattr(instance, "model", "?"),
                "timeout": timeout,
                "setting": setting,
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
            if refusal(exception):  # a budget refused it: nothing left for the LM, so no call and no error
                counts["calls"] -= 1
                counts["refused_calls"] += 1
                return
            counts["seconds"] += time.monotonic() - call["started"]
            if exception is not None:
                counts["lm_errors"] += 1

    def on_adapter_parse_end(self, call_id, outputs, exception=None):
        if exception is not None:
            with self._lock:
                self._counts[self._stage()]["parse_failures"] += 1

    def reasked(self) -> None:
        """A reply the stage could not parse is asked again (programs/lm/reask.py)."""
        with self._lock:
            self._counts[self._stage()]["parse_retries"] += 1

    def add(self, spent) -> None:
        """What one answered call spent (a counted_lm.Spent), under the stage whose predictor made it."""
        with self._lock:
            counts = self._counts[self._stage()]
            if spent.cached:
                counts["cache_hits"] += 1
                return
            counts["tokens_in"] += spent.tokens_in
            counts["tokens_out"] += spent.tokens_out
            if spent.usd is None:
                counts["unpriced_calls"] += 1
            else:
                counts["usd"] += spent.usd

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
        timeout = call.get("timeout", self.timeout)
        setting = call.get("setting", GLOBAL_TIMEOUT)
        limit = f"; a request gives up after {timeout:g} s ({setting})" if timeout else ""
        others = f"; {waiting - 1} other LM call(s) outstanding" if waiting > 1 else ""
        return f"{call['stage']}: waiting {now - call['started']:.0f} s on the LM ({call['model']}{limit}){others}"

    # ---- what a run reports -----------------------------------------------------------------
    def summary(self) -> dict[str, dict[str, float]]:
        """Per stage: calls, lm_errors, parse_failures, seconds (LM time, summed over calls), tokens_in,
        tokens_out, usd (of the priced calls), unpriced_calls, cache_hits."""
        with self._lock:
            return {stage: {k: _rounded(k, v) for k, v in c.items()} for stage, c in self._counts.items()}


def unmarked_name(predictor) -> str:
    """A predictor no stage owns: DSPy's own (an optimizer's instruction proposer, GEPA's reflection) is
    "optimizer"; any other is named by its signature."""
    signature = getattr(predictor, "signature", None)
    if str(getattr(signature, "__module__", "")).startswith(("dspy.", "gepa")):
        return "optimizer"
    return getattr(signature, "__name__", "lm")


def mark_stages(program) -> None:
    """Mark each of the program's stage predictors with its stage, on the predictor itself: an optimizer's
    deep copies carry the mark (an id() label did not, so a compile's cost table named DSPy classes,
    StringSignature and ExtractFacts, where run and ask name stages)."""
    for row in STAGES.values():
        module = getattr(program, row.attribute, None) if row.attribute and program is not None else None
        if module is not None:
            for _, predictor in module.named_predictors():
                if getattr(predictor, STAGE_MARK, None) is None:
                    LMWatch.mark(predictor, row.name)


def stage_labels(program) -> dict[int, str]:
    """id(predictor) -> stage name for the program's stage attributes (programs.lm.stages.STAGES)."""

    labels = {}
    for row in STAGES.values():
        module = getattr(program, row.attribute, None) if row.attribute and program is not None else None
        if module is not None:
            for _, predictor in module.named_predictors():
                labels[id(predictor)] = row.name
    return labels


def install(watch: LMWatch) -> LMWatch:
    """Register `watch` as DSPy's global callback, replacing an LMWatch a previous configure() left."""
    callbacks = dspy.settings.get("callbacks") or []
    others = [c for c in callbacks if not isinstance(c, LMWatch)]
    dspy.configure(callbacks=others + [watch])
    for old in callbacks:
        if isinstance(old, LMWatch):
            spend.detach(old)
    spend.attach(watch)  # hears each answered call's tokens and dollars (programs/lm/counted_lm.py)
    return watch


def current_watch() -> LMWatch | None:
    """The LMWatch configure() registered, for a run summary (None when none is)."""
    return next((c for c in (dspy.settings.get("callbacks") or []) if isinstance(c, LMWatch)), None)


class RunCounts:
    """The LM figures of ONE run: the watch's counts at the end minus its counts at the start.

    A watch an earlier configure() installed keeps counting for as long as the process runs (an
    optimizer evaluates several times after one configure; a test session configures many times),
    so its totals are the process's, not the run's. With no watch installed (a caller that set DSPy
    up itself), a quiet one (no waiting lines) is installed so the run still has figures.
    """

    def __init__(self, program=None):
        self.watch = current_watch()
        if self.watch is None:
            try:
                self.watch = install(LMWatch(every=0, labels=stage_labels(program)))
            except RuntimeError as e:  # DSPy lets only the thread that configured it change settings
                logger.warning("no LM counts for this run: %s", e)
        self.start = self.watch.summary() if self.watch is not None else {}

    def stages(self) -> dict[str, dict[str, float]]:
        """Per stage that made a call during the run: calls, lm_errors, parse_failures, seconds."""
        watch = current_watch()
        if watch is None:
            return {}
        return since(watch.summary(), self.start if watch is self.watch else {})


def since(after: dict, before: dict) -> dict[str, dict[str, float]]:
    """Per stage, `after` minus `before` (two summary() snapshots); stages without a call are left out."""
    stages = {}
    for stage, counts in after.items():
        earlier = before.get(stage, {})
        diff = {k: _rounded(k, counts.get(k, 0) - earlier.get(k, 0)) for k in COUNTS}
        diff["seconds"] = max(diff["seconds"], 0.0)
        if any(diff[k] for k in COUNTS if k not in FRACTIONAL):
            stages[stage] = diff
    return dict(sorted(stages.items(), key=lambda item: _pipeline_order(item[0])))


def _pipeline_order(stage: str) -> tuple[int, str]:
    """Stages in the order of the stage table (the Analyst's, then the judge, escalate, reflection), any
    other name after, by name."""

    order = list(STAGES)
    return (order.index(stage), "") if stage in order else (len(order), stage)


def totals(stages: dict) -> dict[str, float]:
    """lm_calls, lm_errors, lm_parse_failures, lm_seconds, tokens_in, tokens_out, cost_usd,
    cost_unpriced_calls, lm_cache_hits over every stage."""
    return {name: _rounded(k, sum(c.get(k, 0) for c in stages.values())) for k, name in METRIC_NAMES.items()}


def _rounded(count: str, value: float) -> float:
    """Seconds to the millisecond, dollars to 8 decimals, the rest whole."""
    if count == "seconds":
        return round(value, 3)
    if count == "usd":
        return round(value, 8)
    return int(value)


def stage_metrics(stages: dict) -> dict[str, float]:
    """lm_calls_<stage>, lm_errors_<stage>, lm_parse_failures_<stage>, lm_seconds_<stage> for every stage
    (a stage named by a signature keeps its name, with what a metric name cannot hold as `_`)."""
    return {
        f"{name}_{re.sub(r'[^A-Za-z0-9_.-]', '_', stage)}": counts[k]
        for stage, counts in stages.items()
        for k, name in METRIC_NAMES.items()
        if k in counts  # a summary from before a count existed has no figure for it, not a 0
    }


def trouble_line(stages: dict) -> str:
    """'LM: planner 1 parse failure of 3 calls; extractor 2 LM errors of 9 calls', or '' when no stage
    had a parse failure or an LM error."""
    parts = []
    for stage, c in stages.items():
        troubles = [
            _plural(c.get(k, 0), word)
            for k, word in (
                ("parse_failures", "parse failure"),
                ("parse_retries", "re-ask"),
                ("lm_errors", "LM error"),
            )
            if c.get(k, 0)
        ]
        if troubles:
            parts.append(f"{stage} {' and '.join(troubles)} of {_plural(c.get('calls', 0), 'call')}")
    return "LM: " + "; ".join(parts) if parts else ""


def _plural(n: float, word: str) -> str:
    return f"{n:g} {word}" + ("" if n == 1 else "s")
