"""Budgets on what a run or a compile may spend: LM requests, tokens and dollars; refuse the request past a cap.

What counts: a request that leaves for an LM. A DSPy cache hit costs nothing, so it is counted apart
(`cache_hits`) and never charged: an identical rerun of a compile reported 57 calls while sending 0
requests, and GEPA 106 against 2 real ones, when every call was charged. Tokens and dollars are
added when the answer comes back (programs/lm/counted_lm.py reports each answered call here), so
a cap is checked before each request against what the answered ones cost: the requests in flight when
the cap is crossed still finish (at most `concurrency` of them), no new one starts.

Where: before every request DSPy sends, whatever LM object makes it, and after every answer its cache
gives (programs/lm/patches.py request_hooks, which says how), so exactly the requests are charged.

A refusal in a compile raises `BudgetExhausted`, a BaseException on purpose: DSPy's evaluators and
optimizers catch `Exception` per example and go on, so MIPROv2 ran all its trials on refused calls and
logged 242 tracebacks; a BaseException unwinds the optimizer at the first refusal and the compile keeps
what it had found (optimize/best_so_far.py). A refusal in a run raises `BudgetReached`, an Exception:
each document or question still to do fails at once with the reason, and every answer already paid
for is kept and reported.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

from programs.lm import patches


@dataclass(frozen=True)
class Spent:
    """One answered call: its tokens, its dollars (None: price unknown), and whether the cache answered."""

    model: str
    tokens_in: int
    tokens_out: int
    usd: float | None
    cached: bool

    @property
    def tokens(self) -> int:
        return self.tokens_in + self.tokens_out


class BudgetExhausted(BaseException):  # noqa: N818 -- the name says what happened; BaseException: see above
    """Raised instead of an LM request once a compile's budget is spent."""


class BudgetReached(RuntimeError):
    """Raised instead of an LM request once a run's budget is spent (the run goes on, refusing the rest)."""


# cap name -> (the flag that sets it, how its figure is printed)
CAPS = {
    "max_calls": ("--max-calls", "{:g} LM requests"),
    "max_tokens": ("--max-tokens", "{:g} tokens"),
    "max_usd": ("--max-usd", "${:g}"),
}

_listeners: list = []  # what hears of each answered call: the budgets in force and the LM watch (add(spent))
_listeners_lock = threading.Lock()


def attach(listener) -> None:
    """`listener.add(spent)` hears of every answered call from now on (the LM watch attaches itself)."""
    with _listeners_lock:
        if listener not in _listeners:
            _listeners.append(listener)


def detach(listener) -> None:
    with _listeners_lock:
        if listener in _listeners:
            _listeners.remove(listener)


def refusal(exception: BaseException | None) -> bool:
    """The exception is a budget's refusal: no request left, so it is neither a call nor an LM error."""
    return isinstance(exception, (BudgetReached, BudgetExhausted, Stopped))


def cut_by_budget(error: str | None) -> bool:
    """A question's error says a run budget refused its requests ("planning failed: BudgetReached: ...")."""
    return BudgetReached.__name__ in (error or "")


def refused_reason(reason: str) -> bool:
    """A stage's failure reason (`Type: message`, programs.lm.errors) is a run budget's refusal."""
    return reason.startswith(f"{BudgetReached.__name__}: ")


class Budget:
    """Thread-safe counts of LM requests, cache hits, tokens and dollars, with optional caps (None = count only).

    hard: refuse with BudgetExhausted (a compile) instead of BudgetReached (a run)."""

    def __init__(
        self,
        max_calls: int | None = None,
        max_tokens: int | None = None,
        max_usd: float | None = None,
        hard: bool = True,
    ):
        for name, value in (("max_calls", max_calls), ("max_tokens", max_tokens), ("max_usd", max_usd)):
            if value is not None and value <= 0:
                raise ValueError(f"{CAPS[name][0]} must be above 0 (got {value}); omit it for no cap")
        self.max_calls, self.max_tokens, self.max_usd, self.hard = max_calls, max_tokens, max_usd, hard
        self.calls = 0  # requests that reached an LM
        self.cache_hits = 0  # answers DSPy's cache gave for free
        self.refused = 0
        self.tokens = 0
        self.usd = 0.0
        self.unpriced_calls = 0  # answered calls whose model has no known price
        self.ended_by: str | None = None  # the cap that refused the first request
        self._lock = threading.Lock()

    @property
    def exhausted(self) -> bool:
        """True once a request was refused: a cap stopped the work (reaching it exactly stopped nothing)."""
        return self.refused > 0

    def reached(self) -> str | None:
        """The first cap already reached, or None."""
        spent = {"max_calls": self.calls, "max_tokens": self.tokens, "max_usd": self.usd}
        for name in CAPS:
            cap = getattr(self, name)
            if cap is not None and spent[name] >= cap:
                return name
        return None

    def charge(self, model: str = "") -> None:
        """Count one request, or raise (BudgetExhausted / BudgetReached) if a cap is already reached."""
        with self._lock:
            cap = self.reached()
            if cap is not None:
                self.refused += 1
                self.ended_by = self.ended_by or cap
                flag, figure = CAPS[cap]
                error = BudgetExhausted if self.hard else BudgetReached
                raise error(
                    f"the {flag} budget of {figure.format(getattr(self, cap))} is spent (model {model or '?'}); "
                    f"raise {flag} to go further"
                )
            self.calls += 1

    def add(self, spent: Spent) -> None:
        """What an answered request cost (a cache hit is counted in cache_hit(), by the execute hook)."""
        if spent.cached:
            return
        with self._lock:
            self.tokens += spent.tokens
            if spent.usd is None:
                self.unpriced_calls += 1
            else:
                self.usd += spent.usd

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
            "max_tokens": self.max_tokens,
            "max_usd": self.max_usd,
            "refused_calls": self.refused,
            "budget_exhausted": self.exhausted,
            "budget_ended_by": CAPS[self.ended_by][0] if self.ended_by else "",
        }

    def ended_line(self) -> str:
        """'the --max-usd budget of $0.5 ended the run ($0.5012 spent, 3 requests refused)', or ''."""
        if not self.ended_by:
            return ""
        flag, figure = CAPS[self.ended_by]
        dollars = (
            f"${self.usd:.4f}"
            if not self.unpriced_calls
            else (
                f"${self.usd:.4f} and {self.unpriced_calls} calls of unknown price"
                if self.usd
                else "price unknown"
            )
        )
        return (
            f"the {flag} budget of {figure.format(getattr(self, self.ended_by))} ended it "
            f"({self.calls} requests, {self.tokens:,} tokens, {dollars}; "
            f"{self.refused} request{'' if self.refused == 1 else 's'} refused)"
        )


class Stopped(BaseException):  # noqa: N818 -- the name says what happened
    """Raised instead of an LM request once the run that made it was stopped (Ctrl-C): the requests in
    flight finish, and what they answer is kept, but no new one is sent. A BaseException, as
    BudgetExhausted: the stages catch Exception and go on with what they have (a question whose code
    call was refused was answered without its result, and kept); this one fails the whole question."""


_stop: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("collate_stop", default=None)


@contextlib.contextmanager
def stoppable() -> Iterator[threading.Event]:
    """Inside, and in every thread started in a copy of this context, LM requests are refused with
    Stopped once the event yielded is set (counted_lm.CountedLM asks `refuse_if_stopped` first)."""
    event = threading.Event()
    token = _stop.set(event)
    try:
        yield event
    finally:
        _stop.reset(token)


def refuse_if_stopped(model: str = "") -> None:
    event = _stop.get()
    if event is not None and event.is_set():
        raise Stopped(f"the run was stopped (Ctrl-C) before this request to {model or 'the LM'} was sent")


_unreported: contextvars.ContextVar[bool] = contextvars.ContextVar("collate_unreported", default=False)


@contextlib.contextmanager
def unreported() -> Iterator[None]:
    """Calls made inside are nobody's spending (the LM check before a run: programs/lm/preflight.py)."""
    token = _unreported.set(True)
    try:
        yield
    finally:
        _unreported.reset(token)


def report(spent: Spent) -> None:
    """One answered call (counted_lm.CountedLM): to the LM watch's per-stage figures and to every budget in force."""
    if _unreported.get():
        return
    with _listeners_lock:
        listeners = list(_listeners)
    for listener in listeners:
        listener.add(spent)


@contextlib.contextmanager
def enforced(budget: Budget) -> Iterator[Budget]:
    """While inside, every LM request in the process is charged to `budget` first; cache hits are counted."""
    threads_before = set(threading.enumerate())
    with patches.request_hooks(lambda lm: budget.charge(getattr(lm, "model", "")), budget.cache_hit):
        attach(budget)
        try:
            yield budget
        finally:
            if budget.exhausted:
                settle(threads_before)
            detach(budget)


def settle(threads_before: set[threading.Thread], seconds: float = 30.0) -> None:
    """Wait for the worker threads a stopped optimizer left behind, while their requests are still refused.

    DSPy's parallel evaluator shuts its pool down without waiting, so after the stop its queued examples
    still run in the background; lifting the cap before they end would let them send real requests.
    Each is refused at once, so this takes milliseconds.
    """
    deadline = time.monotonic() + seconds
    for thread in set(threading.enumerate()) - threads_before:
        if not thread.daemon and thread is not threading.current_thread():
            join_when_started(thread, deadline)


def join_when_started(thread: threading.Thread, deadline: float) -> None:
    """Join `thread` by `deadline`. A thread the pool is still starting is listed by threading.enumerate()
    before join() accepts it ("cannot join thread before it is started": a MIPROv2 compile stopped by
    --max-calls 300 on the demo ended in that traceback): wait for it to start, then join."""
    while True:
        try:
            thread.join(max(0.0, deadline - time.monotonic()))
            return
        except RuntimeError:  # not started yet
            if time.monotonic() >= deadline:
                return
            time.sleep(0.01)
