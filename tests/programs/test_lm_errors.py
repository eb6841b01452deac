"""LM failures as reasons a user can act on (programs.lm.errors): the setting, not a library's API."""

from __future__ import annotations

from dspy.utils.exceptions import (
    LMAuthError,
    LMInvalidRequestError,
    LMRateLimitError,
    LMServerError,
    LMTimeoutError,
    LMTransportError,
)

from programs.lm.errors import lm_error_reason

# DSPy 3.4's native engine, verbatim from a llama.cpp run (issue 16)
READ_TIMEOUT = (
    "read timed out waiting for headers from http://127.0.0.1:8080/v1/chat/completions: no bytes for "
    "120s; this is lm15's read timeout, not a server failure — raise it with Timeouts(read=...) if the "
    "model needs longer"
)


def test_a_read_timeout_names_collate_timeout_and_not_the_library_call():
    reason = lm_error_reason(LMTransportError(message=READ_TIMEOUT, model="openai/smollm2"))
    assert reason.startswith("the LM did not answer within 120 s (LMTransportError)")
    assert "COLLATE_TIMEOUT / --timeout" in reason and "Timeouts(" not in reason and "lm15" not in reason
    assert "COLLATE_TIMEOUT" in lm_error_reason(LMTimeoutError(message="Request timed out", model="m"))


def test_an_unreachable_server_names_the_api_base_setting():
    reason = lm_error_reason(LMTransportError(message="connection refused by 127.0.0.1:9", model="m"))
    assert "COLLATE_API_BASE / --api-base" in reason and "COLLATE_TIMEOUT" not in reason


def test_other_failures_keep_their_type_and_message():
    assert lm_error_reason(ValueError("bad plan")) == "ValueError: bad plan"
    assert lm_error_reason(LMRateLimitError(message="slow down", model="m")).startswith("LMRateLimitError: ")
    assert "COLLATE_API_KEY" in lm_error_reason(LMAuthError(message="invalid key", model="m"))


class _SdkError(Exception):
    """As the OpenAI SDK raises a 400: the endpoint's JSON error kept as `body`."""

    def __init__(self, message: str, body: dict):
        super().__init__(message)
        self.body = body


def _refused(said: str) -> LMInvalidRequestError:
    """The chain DSPy's LiteLLM engine raises for a 400, wrapping included (as seen from the reader)."""
    wrapped = f"litellm.BadRequestError: OpenAIException - {said}"
    try:
        try:
            raise _SdkError(f"Error code: 400 - {said}", {"message": said, "type": "invalid_request_error"})
        except _SdkError as sdk:
            raise LMInvalidRequestError(message=wrapped, model="collate-reader", status=400) from sdk
    except LMInvalidRequestError as e:
        return e


def test_a_refused_request_is_the_endpoints_own_sentence_without_litellms_wrapping():
    said = "the demo reader cannot answer this: it is rule-based, not a language model; set COLLATE_LM"
    assert lm_error_reason(_refused(said)) == said


def test_litellms_wrapping_is_cut_where_no_endpoint_message_is_kept():
    error = LMServerError(message="litellm.InternalServerError: OpenAIException - overloaded", model="m")
    assert lm_error_reason(error) == "LMServerError: [m] overloaded"


def test_a_timeout_names_the_setting_of_the_lm_that_failed():
    from programs.lm.errors import mark_timeout
    from programs.lm.settings import Settings, build_lm

    settings = Settings(lm="openai/m", api_base="http://127.0.0.1:9/v1", timeout=120, timeout_extractor=600)
    error = LMTimeoutError(message="Request timed out", model="m")
    mark_timeout(error, build_lm(settings, "extractor"))
    reason = lm_error_reason(error)
    assert "within 600 s" in reason and "raise COLLATE_TIMEOUT_EXTRACTOR for a slow" in reason, reason
    error = LMTimeoutError(message="Request timed out", model="m")
    mark_timeout(error, build_lm(settings, "planner"))  # no timeout of its own: the global one bounds it
    reason = lm_error_reason(error)
    assert "within 120 s" in reason and "raise COLLATE_TIMEOUT / --timeout for a slow" in reason, reason


def test_a_failed_call_carries_its_lm_s_own_timeout_setting():
    """The stamp is put on as the error leaves the LM (programs/lm/counted_lm.py), whatever the error."""
    from programs.lm.errors import TIMEOUT_MARK
    from programs.lm.settings import Settings, build_lm

    settings = Settings(
        lm="openai/m", api_base="http://127.0.0.1:9/v1", api_key="x", num_retries=0, timeout_extractor=7
    )
    lm = build_lm(settings, "extractor")
    try:
        lm("hello")
    except Exception as error:  # nothing listens on port 9: refused
        assert getattr(error, TIMEOUT_MARK) == (7, "COLLATE_TIMEOUT_EXTRACTOR")
    else:
        raise AssertionError("a call to a closed port answered")


def test_the_waiting_line_shows_the_stage_s_own_timeout_and_its_setting():
    from programs.lm.progress import LMWatch
    from programs.lm.settings import Settings, build_lm

    settings = Settings(lm="openai/m", api_base="http://127.0.0.1:9/v1", timeout=120, timeout_extractor=600)
    watch = LMWatch(every=0, timeout=settings.timeout)
    watch.on_lm_start("own", build_lm(settings, "extractor"), {})
    watch.on_lm_start("global", build_lm(settings, "planner"), {})
    own, default = (watch._outstanding[c] for c in ("own", "global"))
    assert "gives up after 600 s (COLLATE_TIMEOUT_EXTRACTOR)" in watch.waiting_line(own, own["started"], 2)
    assert "gives up after 120 s (COLLATE_TIMEOUT / --timeout)" in watch.waiting_line(default, 0, 1)
