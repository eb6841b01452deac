"""A dspy.LM that reports every answered call's tokens and dollars, to the run's figures and budgets.

Why `update_history`: DSPy 3.4 calls it once per answered call, on the caller's thread, with the
response's usage (empty for a cache hit: a free answer) and DSPy's own price estimate. Overriding
`forward` instead would make DSPy's `prepare()` treat the LM as a legacy one (no managed retries, no
cache); a compile then charged every request twice. The LM also carries its stage's Price
(programs/lm/prices.py), which replaces DSPy's estimate where the user set one.

Identical requests made at once go out once (`__call__`): with the cache on, the second of two same
requests in flight used to reach the server too, or be a cache hit, as the threads' timing fell (a demo
run whose every question was asked twice under two ids sent 41 requests one time, 40 the next). The
second now waits for the first and is answered from the cache: what is sent is a function of the inputs.

What DSPy keeps of each call is bounded (HISTORY_KEPT): its histories hold every call's prompt and whole
response, 10,000 entries per LM, per calling module and process-wide, and a run reads none of them: the
cost figures are reported from each entry as it comes.

Listeners are the LM watch (per-stage figures: programs/lm/progress.py) and any budget in
force (programs/lm/spend.py); both attribute a call to the thread that made it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
from collections.abc import Iterator

import dspy

from programs.lm import patches
from programs.lm.errors import mark_timeout
from programs.lm.prices import Price
from programs.lm.spend import Spent, refuse_if_stopped, report

# Entries of DSPy's histories kept per list (process-wide, per LM, per module): what is read of them is the
# last few (dspy.inspect_history(n); an optimizer's inspect_history(n=its predictors), ~10 for the Analyst).
# DSPy's own cap, 10,000 per list, kept every call of a run up to ~10,000 questions (~37,000 calls, each
# module's history its own 10,000): ~3 entries and ~33 objects a demo question (bench/README.md).
HISTORY_KEPT = 100
# Responses the memory layer of DSPy's cache keeps (programs/lm/settings.configure; the disk layer keeps
# them all): DSPy's 1,000,000 held every response of a run, the demo's resident memory growing 83 KB a
# question with the cache on against 47 KB with it off (50 -> 200 questions, bench/README.md).
MEMORY_CACHE_KEPT = 1000


class CountedLM(dspy.LM):
    """dspy.LM plus `price` (None: DSPy's estimate, else unknown), a report of each answered call, and
    `timeout_setting`: the setting that set its timeout, named by its failures and the LM watch."""

    def __init__(
        self, model: str, *, price: Price | None = None, timeout_setting: str | None = None, **kwargs
    ):
        super().__init__(model, **kwargs)
        self.price, self.timeout_setting = price, timeout_setting
        # programs/lm/reask.py re-asks at temperature 0 with a rollout_id on purpose, for its cache key
        # only; DSPy would warn that it changes no generation, once per LM, on the user's console
        self._warned_zero_temp_rollout = True

    def __call__(self, prompt=None, *, messages=None, **kwargs):
        refuse_if_stopped(self.model)  # a stopped run sends nothing new (evaluate.runs.answering on Ctrl-C)
        try:
            if not self.cache:  # every request goes out anyway: nothing to wait for
                return super().__call__(prompt, messages=messages, **kwargs)
            with IN_FLIGHT.one_at_a_time(request_key(self, prompt, messages, kwargs)):
                return super().__call__(prompt, messages=messages, **kwargs)
        except Exception as error:
            mark_timeout(error, self)  # its reason names this LM's timeout setting (programs/lm/errors.py)
            raise

    def update_history(self, entry):
        super().update_history(entry)
        patches.trim_histories(self, HISTORY_KEPT)
        report(spent_of(self.model, entry, self.price))


def spent_of(model: str, entry: dict, price: Price | None) -> Spent:
    """A history entry's usage as a Spent; an entry without usage is a cache hit and costs nothing."""
    usage = entry.get("usage") or {}
    tokens_in, tokens_out = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
    cached = not usage
    if cached:
        usd: float | None = 0.0
    elif price is not None:
        usd = price.usd(tokens_in, tokens_out)
    else:
        usd = entry.get("cost") if isinstance(entry.get("cost"), (int, float)) else None
    return Spent(model, tokens_in, tokens_out, usd, cached)


def request_key(lm: dspy.LM, prompt, messages, kwargs: dict) -> str:
    """What makes two requests the same for DSPy's cache (model, messages, settings), as a digest; the
    key never holds the API key or endpoint, which the cache ignores too."""
    settings = {
        k: v for k, v in {**lm.kwargs, **kwargs}.items() if k not in ("api_key", "api_base", "base_url")
    }
    text = json.dumps(
        [lm.model, prompt, messages, settings], sort_keys=True, default=repr, ensure_ascii=False
    )
    return hashlib.sha256(text.encode()).hexdigest()


class InFlight:
    """One lock per request key while a request with that key is under way, shared by every LM (DSPy's
    cache is one for the process)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._keys: dict[str, tuple[threading.Lock, list[int]]] = {}

    @contextlib.contextmanager
    def one_at_a_time(self, key: str) -> Iterator[None]:
        with self._lock:
            gate, users = self._keys.setdefault(key, (threading.Lock(), [0]))
            users[0] += 1
        try:
            with gate:
                yield
        finally:
            with self._lock:
                users[0] -= 1
                if not users[0]:
                    del self._keys[key]


IN_FLIGHT = InFlight()
