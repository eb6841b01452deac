"""An LM call's failure as a reason a user can act on: the setting to change, never a library's API.

Why: DSPy's HTTP engine ends a read timeout with "raise it with Timeouts(read=...)", a call a
collate user cannot make; the knob they have is COLLATE_TIMEOUT / --timeout, or a stage's own
COLLATE_TIMEOUT_<STAGE>. The LM that failed says which one bounded it (`mark_timeout`, called by
programs/lm/counted_lm.py as the error leaves the LM): a reason that named COLLATE_TIMEOUT while
COLLATE_TIMEOUT_EXTRACTOR had set the extractor's 600 s sent the user to a setting that changes nothing
for that stage. Failures that are not the LM's transport (a bug, a parse error) keep their type and
message as before.

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

GLOBAL_TIMEOUT = "COLLATE_TIMEOUT / --timeout"  # what bounds an LM that has no timeout of its own
TIMEOUT_MARK = "collate_timeout"  # the attribute mark_timeout sets on an error: (seconds or None, setting)
TIMEOUT_FIX = (
    "raise {setting} for a slow (local) model, or lower the stage's "
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
        limit, setting = getattr(error, TIMEOUT_MARK, None) or (None, GLOBAL_TIMEOUT)
        seconds = _SECONDS.search(message)
        if seconds:
            waited = f" within {seconds.group(1)} s"
        else:
            waited = f" within {limit:g} s" if limit else " in time"
        return f"the LM did not answer{waited} ({kind}); {TIMEOUT_FIX.format(setting=setting)}"
    if isinstance(error, LMAuthError):
        return f"the LM refused the credentials ({kind}: {cleaned}); check COLLATE_API_KEY / --api-key"
    return f"{kind}: {cleaned}"


def timeout_of(lm) -> tuple[float | None, str]:
    """An LM's request timeout and the setting that sets it (programs.lm.settings.build_lm gives each LM
    its stage's `timeout_setting`); an LM built elsewhere: its timeout, if any, and COLLATE_TIMEOUT."""
    seconds = (getattr(lm, "kwargs", None) or {}).get("timeout")
    return (seconds if isinstance(seconds, (int, float)) else None), (
        getattr(lm, "timeout_setting", None) or GLOBAL_TIMEOUT
    )


def mark_timeout(error: BaseException, lm) -> None:
    """Carry on `error` the timeout of the LM it left, so its reason names that LM's own setting."""
    if getattr(error, TIMEOUT_MARK, None) is None:  # the innermost LM, if one LM calls another
        try:
            setattr(error, TIMEOUT_MARK, timeout_of(lm))
        except AttributeError:  # an exception type with __slots__: its reason names COLLATE_TIMEOUT
            pass


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
