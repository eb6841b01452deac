"""An LM call's failure as a reason a user can act on: the setting to change, never a library's API.

Why: DSPy's HTTP engine ends a read timeout with "raise it with Timeouts(read=...)", a call a
collate user cannot make; the knob they have is COLLATE_TIMEOUT / --timeout. Failures that are not
the LM's transport (a bug, a parse error) keep their type and message as before.

An endpoint that refuses a request (HTTP 400) says why in its reply's JSON ("This model's maximum context
length is ...", the demo reader's "the demo reader cannot answer this: ..."): that sentence is the reason,
as the endpoint wrote it, without the error's type or model. Through DSPy's LiteLLM engine (an `openai/`
model on a local server) it arrived as "LMInvalidRequestError: [collate-reader] litellm.BadRequestError:
OpenAIException - <the sentence>"; LiteLLM's wrapping is also cut from every other reason.
"""

from __future__ import annotations

import re

from dspy.utils.exceptions import (
    LMAuthError,
    LMError,
    LMInvalidRequestError,
    LMRateLimitError,
    LMTimeoutError,
)

# A library's own remedy, cut from messages we pass on ("... — raise it with Timeouts(read=...) if ...").
_LIBRARY_REMEDY = re.compile(
    r"\s*[;,—-]*\s*(this is lm15's read timeout[^;]*;?\s*)?[^;.]*Timeouts\([^)]*\)[^;.]*", re.I
)
_TIMED_OUT = re.compile(r"timed? ?out|timeout", re.I)
_REFUSED = re.compile(
    r"connection refused|connect(ion)? ?error|failed to establish|name or service not known", re.I
)
# LiteLLM's wrapping of a provider's message: "litellm.BadRequestError: OpenAIException - ".
_LITELLM_WRAPPING = re.compile(r"litellm\.\w+:\s*(?:\w+Exception\s*-\s*)?")
_SECONDS = re.compile(r"(?:no bytes for|after|timeout of|read timeout[= ])\s*(\d+(?:\.\d+)?)\s*s", re.I)

TIMEOUT_FIX = (
    "raise COLLATE_TIMEOUT / --timeout for a slow (local) model, or lower the stage's "
    "COLLATE_MAX_TOKENS_<STAGE> so its answer is shorter"
)
REFUSED_FIX = "check that the LM server is running at COLLATE_API_BASE / --api-base"


def lm_error_reason(error: BaseException) -> str:
    """One line: what failed and the setting that fixes it (type: message for anything else)."""
    message = str(error).strip()
    kind = type(error).__name__
    if not isinstance(error, LMError) and not _looks_like_transport(error):
        return f"{kind}: {message}"
    if isinstance(error, LMInvalidRequestError):  # the endpoint refused the request, and said why
        said = endpoint_message(error) or _clean(str(getattr(error, "message", "") or message))
        if said:
            return said
    cleaned = _clean(message)
    if _REFUSED.search(cleaned) and not isinstance(error, LMTimeoutError):
        return f"could not reach the LM ({kind}: {cleaned}); {REFUSED_FIX}"
    if isinstance(error, LMTimeoutError) or (
        _TIMED_OUT.search(cleaned) and not isinstance(error, LMRateLimitError)
    ):
        seconds = _SECONDS.search(message)
        waited = f" within {seconds.group(1)} s" if seconds else " in time"
        return f"the LM did not answer{waited} ({kind}); {TIMEOUT_FIX}"
    if isinstance(error, LMAuthError):
        return f"the LM refused the credentials ({kind}: {cleaned}); check COLLATE_API_KEY / --api-key"
    return f"{kind}: {cleaned}"


def _looks_like_transport(error: BaseException) -> bool:
    """A transport failure that reached us unwrapped (e.g. from the LiteLLM engine's SDK)."""
    return isinstance(error, (TimeoutError, ConnectionError)) or type(error).__name__ in (
        "Timeout",
        "APITimeoutError",
    )


def endpoint_message(error: BaseException) -> str | None:
    """The message the endpoint's error reply carried ({"error": {"message": ...}}), as it wrote it:
    the OpenAI SDK keeps that JSON as `body` on the exception DSPy's own error was raised from."""
    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        body = getattr(cause, "body", None)
        if isinstance(body, dict):
            detail = body.get("error", body)
            said = detail.get("message") if isinstance(detail, dict) else None
            if isinstance(said, str) and said.strip():
                return " ".join(said.split())
        cause = cause.__cause__ or cause.__context__
    return None


def _clean(message: str) -> str:
    return _LITELLM_WRAPPING.sub("", _LIBRARY_REMEDY.sub("", message)).strip()
