"""The preflight call (issue 21 part 2): a dead, misconfigured or foreign endpoint is one line naming the
URL, the model and the setting to fix, through both of DSPy's engines, before anything is spent."""

from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from programs.lm.preflight import PROMPT, LMUnavailable, preflight
from programs.lm.progress import LMWatch, install
from programs.lm.settings import Settings

ERRORS = {
    "401": (401, "Incorrect API key provided"),
    "403": (403, "forbidden"),
    "404": (404, "The model `m` does not exist"),
    "400": (400, "Unsupported parameter: 'max_tokens'"),
    "500": (500, "boom"),
    "429": (429, "Rate limit reached"),
}


class Endpoint:
    """A server that answers every chat completion the way `mode` says, and keeps what it was sent."""

    def __init__(self):
        self.mode, self.bodies = "ok", []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                endpoint.bodies.append(body)
                if endpoint.mode == "hang":
                    time.sleep(3)
                    return
                if endpoint.mode == "html":
                    self.reply(200, b"<html><body>Welcome to nginx</body></html>", "text/html")
                elif endpoint.mode in ERRORS:
                    status, message = ERRORS[endpoint.mode]
                    self.reply(status, json.dumps({"error": {"message": message, "type": "x"}}).encode())
                else:
                    choice = {
                        "index": 0,
                        "message": {"role": "assistant", "content": "OK"},
                        "finish_reason": "length",
                    }
                    self.reply(200, json.dumps({"id": "a", "object": "chat.completion", "created": 1, "model": "m", "choices": [choice], "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6}}).encode())  # fmt: skip

            def reply(self, status: int, data: bytes, kind: str = "application/json"):
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def endpoint():
    server = Endpoint()
    yield server
    server.close()


def closed_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


# token_param picks DSPy's engine for an openai/ model: its own HTTP engine, or LiteLLM (local servers).
ENGINES = {"native": "max_completion_tokens", "litellm": "max_tokens"}


def settings(url: str, engine: str, **more) -> Settings:
    return Settings(
        lm="openai/qwen-test", api_base=url, api_key="k", timeout=1, token_param=ENGINES[engine], **more
    )


@pytest.mark.parametrize("engine", list(ENGINES))
@pytest.mark.parametrize(
    "mode, names",
    [
        ("401", ["refused the API key", "COLLATE_API_KEY"]),
        ("403", ["refused the API key", "COLLATE_API_KEY"]),
        ("404", ["no such model", "COLLATE_LM", "/models"]),
        ("400", ["refused the request", "COLLATE_TOKEN_PARAM"]),
        ("500", ["failed (HTTP 500", "COLLATE_API_BASE"]),
        ("html", ["like an OpenAI-compatible API", "COLLATE_API_BASE"]),
        ("hang", ["did not answer a 1-token request within 1 s", "COLLATE_API_BASE"]),
        ("closed", ["cannot reach", "COLLATE_API_BASE"]),
    ],
)
def test_each_failure_is_one_line_naming_the_url_the_model_and_the_setting(endpoint, engine, mode, names):
    endpoint.mode = mode
    url = closed_url() if mode == "closed" else endpoint.url
    with pytest.raises(LMUnavailable) as failed:
        preflight(settings(url, engine))
    line = str(failed.value)
    assert (
        "\n" not in line
        and line.startswith("LM check failed: ")
        and url in line
        and "openai/qwen-test" in line
    )
    for name in names:
        assert name in line, line
    assert "Timeouts(" not in line and "To fix" not in line  # the library's remedies are not ours
    assert failed.value.exit_code == 2


@pytest.mark.parametrize("engine", list(ENGINES))
def test_a_live_endpoint_passes_with_one_short_call_that_no_stage_counts(endpoint, engine):
    endpoint.mode, endpoint.bodies[:] = "ok", []
    watch = install(LMWatch(every=0))
    preflight(settings(endpoint.url, engine))
    assert len(endpoint.bodies) == 1
    body = endpoint.bodies[0]
    assert body["messages"][-1]["content"] == PROMPT and body.get(ENGINES[engine]) == 1
    assert watch.summary() == {}


def test_a_rate_limited_endpoint_passes_and_each_distinct_model_is_checked_once(endpoint):
    endpoint.mode, endpoint.bodies[:] = "429", []
    preflight(settings(endpoint.url, "native", lm_judge="openai/judge"), ["planner", "extractor", "judge"])
    assert [b["model"] for b in endpoint.bodies] == ["qwen-test", "judge"]


def test_the_cascade_s_strong_model_is_checked_with_the_extractor(endpoint):
    """Before: only the stages' models were checked, so a strong model that could not answer surfaced as a
    warning per escalated document, every doubted fact left as the cheap model had it."""
    endpoint.mode, endpoint.bodies[:] = "ok", []
    cascade = settings(endpoint.url, "native", lm_extractor_escalate="openai/strong")
    preflight(cascade, ["planner", "extractor"])
    assert [b["model"] for b in endpoint.bodies] == ["qwen-test", "strong"]
    endpoint.bodies[:] = []
    preflight(cascade, ["planner", "answer"])  # no extraction: no escalation to check
    assert [b["model"] for b in endpoint.bodies] == ["qwen-test"]


def test_a_stage_s_own_retries_do_not_reach_its_check_and_its_own_timeout_bounds_it(endpoint):
    """The check makes one request (no retries) even where the stage has retries of its own
    (COLLATE_NUM_RETRIES_EXTRACTOR), and waits no longer than the stage's own timeout."""
    endpoint.mode, endpoint.bodies[:] = "500", []
    with pytest.raises(LMUnavailable):
        preflight(settings(endpoint.url, "native", num_retries_extractor=3), ["extractor"])
    assert len(endpoint.bodies) == 1
    endpoint.mode = "hang"
    slow_default = settings(endpoint.url, "native", timeout_extractor=1).replace(timeout=120)
    with pytest.raises(LMUnavailable, match="within 1 s"):
        preflight(slow_default, ["extractor"])
