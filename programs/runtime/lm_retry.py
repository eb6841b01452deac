"""Retries of a failed LM request with every wait bounded, and each wait said.

Why not DSPy's own retries: DSPy honours any Retry-After a server sends. A 429 with
`Retry-After: 86400` slept for a day while the progress line said the request "gives up after 10 s"
(issue 22). Here DSPy makes one attempt per call (num_retries=0) and this class retries: a server that
asks for more than COLLATE_MAX_WAIT seconds fails the call at once with what it asked for, so the
document is reported failed and the run goes on; shorter waits are logged with what they wait for.
Which errors are retried is DSPy's classification (429, 5xx, timeouts, transport errors).
"""

from __future__ import annotations

import logging
import time

import dspy
from dspy.utils.exceptions import is_retryable_lm_error

log = logging.getLogger(__name__)


class WaitTooLong(RuntimeError):
    """The server asked the client to wait longer than the setting allows."""


def backoff(attempt: int) -> float:
    """1, 2, 4, ... seconds, as DSPy backs off when the server gives no Retry-After."""
    return float(min(2**attempt, 60))


def planned_wait(exc: Exception, attempt: int, max_wait: float) -> float:
    """How long to wait before the next attempt; raises WaitTooLong when the server wants more than max_wait."""
    asked = getattr(exc, "retry_after", None)
    if isinstance(asked, int | float) and asked >= 0:
        if asked > max_wait:
            raise WaitTooLong(
                f"the LM server asked to wait {asked:g} s before retrying (Retry-After), more than "
                f"COLLATE_MAX_WAIT={max_wait:g} s: this call failed; raise COLLATE_MAX_WAIT to wait, or try later"
            ) from exc
        return float(asked)
    return min(backoff(attempt), max_wait)


class BoundedRetryLM(dspy.LM):
    """A dspy.LM whose retries never wait longer than max_wait seconds at a time."""

    def __init__(self, model: str, *, num_retries: int = 3, max_wait: float = 60.0, **kwargs):
        super().__init__(model, num_retries=0, **kwargs)  # one attempt per DSPy call: the loop below retries
        self.retries, self.max_wait = num_retries, max_wait

    def forward(self, prompt=None, messages=None, **kwargs):
        for attempt in range(self.retries + 1):
            try:
                return super().forward(prompt=prompt, messages=messages, **kwargs)
            except Exception as exc:
                if attempt == self.retries or not is_retryable_lm_error(exc):
                    raise
                wait = planned_wait(exc, attempt, self.max_wait)
                log.warning(
                    "LM %s: %s; retrying in %.0f s (attempt %d of %d)",
                    self.model,
                    type(exc).__name__,
                    wait,
                    attempt + 2,
                    self.retries + 1,
                )
                time.sleep(wait)
        raise AssertionError("unreachable")  # the loop returns or raises

    async def aforward(self, prompt=None, messages=None, **kwargs):
        import asyncio

        return await asyncio.to_thread(self.forward, prompt, messages, **kwargs)
