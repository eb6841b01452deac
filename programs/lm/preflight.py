"""One short LM call before a command spends anything: is the LM there, does it take the key, know the model?

Why (issue 21): against a closed port `collate run` exited 0 with "coverage 2/2 answered" and a
normal-looking MLflow run, and `collate ask` exited 0 with "No answer: ..." for a 401, a 404 (model
not found), a 400, an HTML reply, a server that was down and a timeout. A 1-token request through the
same dspy.LM a stage will use (same engine, model, base URL and key), without retries and with a short
timeout, finds each of these in about a second; the command then prints one line naming the URL, the
model and the setting to fix, and exits 2 before any question is asked.

A 429 passes: the server is there, knows the model and took the key; the run's own retries wait.
"""

from __future__ import annotations

import logging
import re
import warnings

import dspy
from dspy.utils.exceptions import (
    LMAuthError,
    LMBillingError,
    LMConfigurationError,
    LMInvalidRequestError,
    LMRateLimitError,
    LMServerError,
    LMTimeoutError,
    LMUnsupportedModelError,
)

from programs.lm import spend
from programs.lm.settings import Settings, build_lm
from programs.lm.stages import STAGES
from signatures.errors import BadInput

logger = logging.getLogger(__name__)

PROMPT = "collate preflight: reply with OK"  # what a server log (and the test fakes) see of the check
TIMEOUT = 30.0  # seconds at most: a live server answers one token in well under that, a dead one never
_TIMED_OUT = re.compile(r"timed? ?out|timeout", re.I)
_UNREACHABLE = re.compile(
    r"connection (refused|error|reset)|failed to (connect|establish)|name or service not known|"
    r"nodename nor servname|no route to host|network is unreachable",
    re.I,
)
_NOT_AN_API = re.compile(r"not json|invalid response|text/html|<html|<!doctype", re.I)


class LMUnavailable(BadInput):
    """The LM failed its preflight call; the message names the URL, the model and the setting to fix."""


class SandboxUnavailable(BadInput):
    """Generated code would be refused on this machine (no isolation, no COLLATE_SANDBOX=off); the
    message names why and every fix."""


def check_isolation(settings: Settings) -> None:
    """Before anything is spent, as the LM check: will the sandbox run the analysis code here?

    Why (issue 33): with bubblewrap missing, every question paid its planning, extraction, code and
    answer calls and its "answer" was the sandbox's refusal text; `collate run` said 3/3 answered, exit 0.
    Free (bwrap is probed once per process), so it runs before the LM's 1-token check."""
    from programs.sandbox import isolation_refusal  # lazily: only commands that run code need it

    refusal = isolation_refusal(settings.sandbox_limits())
    if refusal is not None:
        raise SandboxUnavailable(f"sandbox check failed: {refusal}")


def preflight(settings: Settings, stages: list[str | None] | None = None) -> None:
    """Check each distinct model the stages use (None: the default LM) with one 1-token call; with the
    extractor, the cascade's strong model too (a dead one would leave every doubted fact unchecked)."""
    checked: set[tuple] = set()
    stages = list(stages or [None])
    stages += [row.name for row in STAGES.values() if row.runs_with in stages and row.name not in stages]
    for stage in stages:
        model = settings.model_for(stage) or ""
        if stage is not None and not model:
            continue  # a stage with no model of its own and no fallback (no judge named)
        endpoint = (model, *settings.endpoint_for(stage))
        if endpoint not in checked:
            checked.add(endpoint)
            check(settings, stage, model, endpoint[1])


def check(settings: Settings, stage: str | None, model: str, api_base: str | None) -> None:
    """One 1-token call of the stage's LM (`model` at `api_base`, as the settings give them)."""
    seconds = min(settings.timeout_for(stage), TIMEOUT)
    # the stage's own timeout and retries (its row's fields) would win over the shared ones: set both
    own = {STAGES[stage].timeout_field: None, STAGES[stage].retries_field: None} if stage else {}
    try:
        lm = build_lm(settings.replace(num_retries=0, timeout=seconds, cache=False, **own), stage)
        # The limit goes out under the name this LM sends (max_tokens or max_completion_tokens).
        cap = {key: 1 for key in ("max_tokens", "max_completion_tokens") if lm.kwargs.get(key)}
        # not a stage's call: no LM counts, no spending reported, no warnings
        with dspy.context(callbacks=[]), spend.unreported(), _quiet():
            lm(messages=[{"role": "user", "content": PROMPT}], **cap)
    except LMRateLimitError as e:
        logger.warning("the LM is rate-limiting already (%s); the run's retries will wait", _first_line(e))
    except Exception as e:
        found = unavailable(e, api_base, model, seconds)
        raise LMUnavailable(f"LM check failed: {own_settings(found, settings, stage)}") from None


def own_settings(line: str, settings: Settings, stage: str | None) -> str:
    """The line naming the stage's own variables and flags where it set them (COLLATE_API_BASE_ESCALATE,
    --api-base-escalate), so the fix it names is the one that applies."""
    row = STAGES.get(stage or "")
    if row is None:
        return line
    own = [(row.model, "lm")] if row.model != "lm_judge" else []
    own += [(name, name.rsplit("_", 1)[0]) for name in row.endpoint_fields or ()]  # api_base_x -> api_base
    for name, shared in own:
        if getattr(settings, name):
            flag = "--" + name.replace("_", "-")
            line = re.sub(
                rf"COLLATE_{shared.upper()}\b( \(--{shared.replace('_', '-')}\))?",
                f"COLLATE_{name.upper()} ({flag})",
                line,
            )
    return line


def unavailable(error: Exception, api_base: str | None, model: str, seconds: float) -> str:
    """One line: what failed, for which URL and model, and the setting that fixes it."""
    url = api_base or "the provider's default endpoint"
    status = getattr(error, "status", None)
    said = _first_line(error)
    http = f"HTTP {status}: " if status else ""
    where = f"{model} at {url}"
    if isinstance(error, LMAuthError) or status in (401, 403):
        return (
            f"{where} refused the API key ({http}{said}); set COLLATE_API_KEY (--api-key) to a key it takes"
        )
    if isinstance(error, LMBillingError):
        return (
            f"{where} refused the account ({http}{said}); check the billing or quota behind COLLATE_API_KEY"
        )
    if isinstance(error, LMUnsupportedModelError) or status == 404:
        return (
            f"{where}: no such model ({http}{said}); set COLLATE_LM (--lm) to a model it serves "
            f"(GET {url.rstrip('/')}/models lists them), or COLLATE_API_BASE to the API's base URL (usually .../v1)"
        )
    if _NOT_AN_API.search(said) or (status == 200 and not isinstance(error, LMConfigurationError)):
        return (
            f"{url} did not answer {model} like an OpenAI-compatible API ({said[:160]}); set COLLATE_API_BASE "
            f"(--api-base) to the API's base URL (usually ending in /v1), not a web page or proxy"
        )
    if isinstance(error, LMTimeoutError) or _TIMED_OUT.search(said):
        return (
            f"{where} did not answer a 1-token request within {seconds:g} s; check that it is up at "
            f"COLLATE_API_BASE (--api-base); a model still loading answers once loaded (COLLATE_TIMEOUT bounds every call)"
        )
    if _UNREACHABLE.search(said):
        return (
            f"cannot reach {url} for {model} ({said[:160]}); start the LM server, or set COLLATE_API_BASE "
            f"(--api-base) to where it listens"
        )
    if isinstance(error, LMInvalidRequestError) or status == 400:
        return (
            f"{where} refused the request ({http}{said}); check COLLATE_LM, and COLLATE_TOKEN_PARAM or "
            f"COLLATE_STRUCTURED if it names a parameter"
        )
    if isinstance(error, LMServerError) or (isinstance(status, int) and status >= 500):
        return (
            f"{where} failed ({http}{said}); see the server's log, or point COLLATE_API_BASE at a working one"
        )
    if isinstance(error, LMConfigurationError):
        return f"{model} cannot be used as configured ({said}); check COLLATE_LM and COLLATE_API_KEY"
    return (
        f"{where} failed a 1-token request ({type(error).__name__}: {said}); check COLLATE_LM, "
        f"COLLATE_API_BASE and COLLATE_API_KEY"
    )


def _first_line(error: Exception) -> str:
    """The error's own message, first line, without DSPy's '[model] ' prefix and library remedies."""
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    text = re.sub(r"^\[[^\]]*\]\s*", "", text)
    text = re.sub(r"^litellm\.\w+:\s*(\w+:\s*)?(\w+Exception\s*-\s*)?", "", text)  # LiteLLM's class names
    text = re.sub(r"\s*[;,—-]*\s*this is lm15's read timeout.*$", "", text)
    return text[:300]


class _quiet:
    """Silence the truncation warning a 1-token reply draws, and Python warnings, for the check only."""

    def __enter__(self):
        self._warnings = warnings.catch_warnings()
        self._warnings.__enter__()
        warnings.simplefilter("ignore")
        self._logger = logging.getLogger("dspy.clients.lm")
        self._level = self._logger.level
        self._logger.setLevel(logging.ERROR)
        return self

    def __exit__(self, *exc):
        self._logger.setLevel(self._level)
        self._warnings.__exit__(*exc)
