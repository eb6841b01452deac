"""Every wait before an LM retry bounded by COLLATE_MAX_WAIT, and each wait said.

Why: DSPy retries 429s, 5xx and timeouts itself and honours any Retry-After a server sends. A 429 with
`Retry-After: 86400` slept for a day while the progress line said the request "gives up after 10 s"
(issue 22). DSPy 3.4 has no setting for it, so `cap_waits` replaces the one function that decides the
wait (programs/lm/patches.py replace_retry_delay): a
server that asks for more than the cap fails that call at once, naming what it asked for, so the
document is reported failed and the run goes on; shorter waits are logged with their reason.
Which errors are retried, and how often, stays DSPy's (num_retries).
"""

from __future__ import annotations

import logging
import threading

from programs.lm import patches

log = logging.getLogger(__name__)
_LOCK = threading.Lock()
_CAP = {"seconds": 60.0}


class WaitTooLong(RuntimeError):
    """The server asked the client to wait longer than COLLATE_MAX_WAIT allows."""


def planned_wait(exc: Exception, attempt: int, max_wait: float) -> float:
    """The wait before the next attempt; raises WaitTooLong when the server wants more than max_wait."""
    asked = getattr(exc, "retry_after", None)
    if isinstance(asked, int | float) and asked > max_wait:
        raise WaitTooLong(
            f"the LM server asked to wait {asked:g} s before retrying (Retry-After), more than "
            f"COLLATE_MAX_WAIT={max_wait:g} s: this call failed; raise COLLATE_MAX_WAIT to wait, or try later"
        ) from exc
    return min(patches.DSPY_DELAY(exc, attempt), max_wait)


def _capped_delay(exc, attempt):
    wait = planned_wait(exc, attempt, _CAP["seconds"])
    reason = (
        "as the server asked (Retry-After)"
        if getattr(exc, "retry_after", None) is not None
        else "backing off"
    )
    log.warning("LM %s: waiting %.0f s before retry %d, %s", type(exc).__name__, wait, attempt + 1, reason)
    return wait


def cap_waits(max_wait: float) -> None:
    """Bound every wait before an LM retry in this process to max_wait seconds (idempotent)."""
    with _LOCK:
        _CAP["seconds"] = float(max_wait)
        patches.replace_retry_delay(_capped_delay)
