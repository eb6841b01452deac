"""A dspy.LM that reports every answered call's tokens and dollars, to the run's figures and budgets.

Why `update_history`: DSPy 3.4 calls it once per answered call, on the caller's thread, with the
response's usage (empty for a cache hit: a free answer) and DSPy's own price estimate. Overriding
`forward` instead would make DSPy's `prepare()` treat the LM as a legacy one (no managed retries, no
cache); a compile then charged every request twice. The LM also carries its stage's Price
(programs/lm/prices.py), which replaces DSPy's estimate where the user set one.

Listeners are the LM watch (per-stage figures: programs/lm/progress.py) and any budget in
force (programs/lm/spend.py); both attribute a call to the thread that made it.
"""

from __future__ import annotations

import dspy

from programs.lm.prices import Price
from programs.lm.spend import Spent, report


class CountedLM(dspy.LM):
    """dspy.LM plus `price` (None: DSPy's estimate, else unknown) and a report of each answered call."""

    def __init__(self, model: str, *, price: Price | None = None, **kwargs):
        super().__init__(model, **kwargs)
        self.price = price

    def update_history(self, entry):
        super().update_history(entry)
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
