"""A reply that cannot be parsed is asked again, as a fresh request, a bounded number of times.

Why: one malformed reply sank a question. With 10% of replies malformed, the planner's one bad reply
failed the question after 2 LM calls (`collate ask` exit 1, "planning failed: AdapterParseError"); DSPy
never re-asks (its ChatAdapter makes one JSONAdapter call, which a model that garbled the first reply
often garbles too), and the same request again would only be answered from the cache with the same bad
reply. `Reasking` wraps whatever adapter configure() set, so every stage (plan, extract, normalize, code,
answer, the judge) gets it: on AdapterParseError the call is made again with `rollout_id` = the attempt,
which DSPy puts in the cache key and never sends, so the retry reaches the LM and its good reply is
cached under its own key (a rerun is answered from the cache, free, the same way). Each re-ask is a real
request: it is counted (LMWatch's `parse_retries` per stage) and priced like any other call. Only when
the last attempt still fails does the stage fail, with DSPy's own error.
"""

from __future__ import annotations

from typing import Any

import dspy
from dspy.utils.exceptions import AdapterParseError


class Reasking:
    """`inner` (a DSPy adapter) with up to `retries` fresh re-asks of a reply it cannot parse."""

    def __init__(self, inner: Any, retries: int):
        self.inner = inner
        self.retries = retries

    def __call__(self, lm, lm_kwargs: dict[str, Any], signature, demos, inputs):
        for attempt in range(self.retries + 1):
            try:
                return self.inner(lm, _fresh(lm_kwargs, attempt), signature, demos, inputs)
            except AdapterParseError:
                if attempt == self.retries:
                    raise
                _count_retry()
        raise AssertionError("unreachable")  # the loop returns or raises

    async def acall(self, lm, lm_kwargs: dict[str, Any], signature, demos, inputs):
        for attempt in range(self.retries + 1):
            try:
                return await self.inner.acall(lm, _fresh(lm_kwargs, attempt), signature, demos, inputs)
            except AdapterParseError:
                if attempt == self.retries:
                    raise
                _count_retry()
        raise AssertionError("unreachable")

    def __getattr__(self, name: str):  # format, parse, ... as the wrapped adapter has them
        return getattr(self.inner, name)


def _fresh(lm_kwargs: dict[str, Any], attempt: int) -> dict[str, Any]:
    """The first attempt as the caller asked; a re-ask under its own cache key (not the bad reply's)."""
    return lm_kwargs if attempt == 0 else {**lm_kwargs, "rollout_id": attempt}


def _count_retry() -> None:
    from programs.lm.progress import current_watch

    watch = current_watch()
    if watch is not None:
        watch.reasked()


def wrap(retries: int) -> None:
    """Wrap DSPy's configured adapter (ChatAdapter when none is) in Reasking; idempotent."""
    current = dspy.settings.adapter
    inner = current.inner if isinstance(current, Reasking) else current or dspy.ChatAdapter()
    dspy.configure(adapter=Reasking(inner, retries) if retries > 0 else inner)


def unwrap() -> None:
    """The adapter configure() wrapped, bare again (apply_structured looks at its type)."""
    current = dspy.settings.adapter
    if isinstance(current, Reasking):
        dspy.configure(adapter=current.inner)
