"""The fake OpenAI-compatible server, driven through DSPy's real HTTP client (dspy.LM)."""

import json
import threading
import time
import urllib.request

import dspy
import pytest
from dspy.utils.exceptions import AdapterParseError

from fakes.chat_format import format_reply
from fakes.server import FakeLMServer, Fault, last_message_contains


class Echo(dspy.Signature):
    """Answer the question."""

    question: str = dspy.InputField()
    answer: str = dspy.OutputField()


def echo_responder(messages, model):
    last = messages[-1]["content"]
    return format_reply(
        {"answer": f"echo: {last.split('[[ ## question ## ]]')[1].split('Respond')[0].strip()}"}
    )


def ask(server, question="hi", **lm_kwargs):
    dspy.configure(lm=server.lm(**lm_kwargs))
    return dspy.Predict(Echo)(question=question).answer


def test_predict_through_dspy_lm_reaches_the_server_and_reports_usage():
    with FakeLMServer(echo_responder) as server:
        assert server.url.startswith("http://127.0.0.1:")
        assert ask(server, "ping") == "echo: ping"
        assert server.calls == 1
        assert server.calls_by_kind() == {"answer": 1}
        usage = dspy.settings.lm.history[-1]["usage"]
        assert usage["prompt_tokens"] > 10 and usage["completion_tokens"] > 0
        assert server.tokens()["total_tokens"] == usage["total_tokens"]


def test_rate_limits_are_retried_then_succeed():
    with FakeLMServer(
        echo_responder, faults=[Fault("429", when=last_message_contains("flaky"), times=2)]
    ) as server:
        assert ask(server, "flaky") == "echo: flaky"
        assert server.calls == 3
        assert server.faults_served() == {"429": 2}
        assert ask(server, "flaky again") == "echo: flaky again"  # the rule is spent
        assert server.calls == 4


def test_server_errors_are_retried_then_succeed():
    with FakeLMServer(echo_responder, faults=[Fault("500", times=1)]) as server:
        assert ask(server) == "echo: hi"
        assert server.faults_served() == {"500": 1}
        assert [r.status for r in server.records] == [500, 200]


def test_persistent_server_errors_surface_after_the_retries():
    with FakeLMServer(echo_responder, faults=[Fault("500")]) as server:
        with pytest.raises(Exception, match="(?i)server"):
            ask(server, num_retries=2)
        assert server.calls == 3


def test_a_malformed_reply_is_a_parse_error():
    with FakeLMServer(echo_responder, faults=[Fault("malformed", times=1)]) as server:
        with pytest.raises(AdapterParseError):
            ask(server)
        assert server.calls == 1  # the LM layer does not retry a 200 it cannot parse


def test_a_hang_past_the_client_timeout_fails_fast():
    # The hang outlasts any test (the server's stop() ends it): only the client's timeout can end the call.
    with FakeLMServer(echo_responder, faults=[Fault("hang")], hang_seconds=600) as server:
        with pytest.raises(Exception, match="(?i)time"):
            ask(server, timeout=0.5, num_retries=0)
        (hung,) = server.records
        assert hung.fault == "hang" and hung.ended == 0.0  # the client gave up while the server still hung


def test_latency_applies_per_call_and_calls_run_concurrently():
    # Each reply waits until all four calls are in the server at once: a server (or client) that
    # handled them one after another never gets there. The barrier's timeout only guards against a hang.
    all_four_in_flight = threading.Barrier(4, timeout=120)

    def echo_together(messages, model):
        all_four_in_flight.wait()
        return echo_responder(messages, model)

    with FakeLMServer(echo_together, latency=0.3) as server:
        lm = server.lm()
        results = []

        def one(i):
            with dspy.context(lm=lm):
                results.append(dspy.Predict(Echo)(question=f"q{i}").answer)

        started = time.monotonic()
        threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - started
        assert sorted(results) == [f"echo: q{i}" for i in range(4)]
        # A handler records its end after the reply has gone out: wait for the records, not the clock
        # (the deadline only guards against a hang).
        deadline = time.monotonic() + 60
        while not all(r.ended for r in server.records) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert server.max_concurrency() == 4
        assert all(r.ended - r.started >= 0.3 for r in server.records)  # the latency, on every call
        assert 0.3 <= server.busy_seconds() <= elapsed  # overlapping calls count once


def test_models_listing_and_minimal_streaming():
    with FakeLMServer(lambda m, model: "streamed text") as server:
        with urllib.request.urlopen(server.url + "/models", timeout=5) as r:
            assert json.load(r)["data"][0]["id"] == "fake-brain"
        body = json.dumps(
            {"model": "fake-brain", "stream": True, "messages": [{"role": "user", "content": "x"}]}
        )
        req = urllib.request.Request(
            server.url + "/chat/completions", data=body.encode(), headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=5) as r:
            assert r.headers["Content-Type"] == "text/event-stream"
            events = [line[6:] for line in r.read().decode().splitlines() if line.startswith("data: ")]
        assert events[-1] == "[DONE]"
        chunks = [json.loads(e) for e in events[:-1]]
        assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == "streamed text"
        assert chunks[-1]["usage"]["completion_tokens"] > 0


def test_a_failing_responder_becomes_a_500_with_its_reason():
    def broken(messages, model):
        raise ValueError("responder bug")

    with FakeLMServer(broken) as server:
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "x"}]}).encode()
        req = urllib.request.Request(server.url + "/chat/completions", data=body)
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(req, timeout=5)
        assert info.value.code == 500
        assert "responder bug" in info.value.read().decode()


def test_url_before_start_names_the_fix():
    with pytest.raises(RuntimeError, match="start"):
        _ = FakeLMServer(echo_responder).url
