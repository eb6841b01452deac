"""Retries wait at most COLLATE_MAX_WAIT seconds; a server asking for more fails the call at once (issue 22.5)."""

from __future__ import annotations

import threading

import pytest

from fakes.brain import Brain
from fakes.server import FakeLMServer, Fault
from programs.lm.retry import WaitTooLong, planned_wait
from programs.lm.settings import Settings, build_lm


def _lm(server, **settings):
    return build_lm(
        Settings(lm=f"openai/{server.model_name}", api_base=server.url, api_key="x", cache=False, **settings)
    )


def test_a_day_long_retry_after_fails_the_call_instead_of_sleeping():
    with FakeLMServer(Brain(), faults=[Fault("429", retry_after=86_400)]) as server:
        lm = _lm(server, max_wait=5, timeout=10)
        done = {}

        def call():
            try:
                lm("hello")
            except Exception as exc:  # noqa: BLE001 - the test reads what was raised
                done["error"] = exc

        worker = threading.Thread(target=call, daemon=True)
        worker.start()
        worker.join(60)  # a hang guard only: before, this call slept 86,400 s
        assert not worker.is_alive(), "the call is still waiting on the server's Retry-After"
        assert isinstance(done["error"], WaitTooLong)
        assert "86400 s" in str(done["error"]) and "COLLATE_MAX_WAIT=5" in str(done["error"])
        assert server.calls == 1  # no retry was attempted


def test_a_short_retry_after_is_honoured_and_the_call_succeeds(caplog):
    with FakeLMServer(Brain(), faults=[Fault("429", times=1, retry_after=0)]) as server:
        lm = _lm(server, max_wait=5)
        with caplog.at_level("WARNING"):
            assert lm("hello")
        assert server.calls == 2
        assert any(
            "waiting 0 s before retry 1, as the server asked" in r.getMessage() for r in caplog.records
        )


def test_backoff_without_a_hint_is_capped_by_the_setting():
    assert planned_wait(RuntimeError("x"), 5, max_wait=3) == 3


@pytest.mark.parametrize("word", ["-1", "lots"])
def test_max_wait_refuses_what_is_not_a_number_of_seconds(word):
    with pytest.raises(ValueError, match="max_wait|MAX_WAIT"):
        Settings.from_env(require_lm=False, environ={"COLLATE_MAX_WAIT": word})
