"""A real OpenAI-compatible HTTP server on 127.0.0.1 for end-to-end tests and benchmarks.

It answers `POST /v1/chat/completions` (plain JSON or a minimal SSE stream) and `GET /v1/models`
through a pluggable `responder(messages, model) -> str`, reports approximate token usage, counts
calls (total and per kind), and can be told to be slow (fixed seconds per call, plus a random
`jitter` per call so calls finish in a different order each run) or to misbehave:
429 with Retry-After, 500, a malformed reply (content that is not in the adapter's format), or a
hang longer than the client's timeout. Everything a test would assert on is kept under a lock,
because the server handles each request on its own thread.

    with FakeLMServer(responder, latency=0.2) as server:
        lm = server.lm()                # dspy.LM("openai/fake-brain", api_base=server.url, ...)
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Literal

log = logging.getLogger(__name__)

Responder = Callable[[list[dict], str], str]
FaultKind = Literal["429", "500", "malformed", "hang"]
MALFORMED_REPLY = "Sorry, I cannot follow the requested format today."


def approx_tokens(text: str) -> int:
    """Roughly what a tokenizer would count: one token per four characters, at least one."""
    return max(1, len(text) // 4)


def message_text(message: dict) -> str:
    """The text of one chat message, whether its content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class Declined(Exception):
    """Raised by a responder for a prompt it will not answer: served as a 400 carrying its message, the
    way an endpoint refuses a request, so the caller fails that call with the reason instead of a guess."""


@dataclass
class Fault:
    """A misbehaviour for the calls it matches.

    `when(messages)` decides which calls it concerns (None = every call); `times` caps how many of
    those get the fault (None = all of them), so "the first 2 calls mentioning X get a 429" is
    `Fault("429", when=last_message_contains("X"), times=2)`.
    """

    kind: FaultKind
    when: Callable[[list[dict]], bool] | None = None
    times: int | None = None
    retry_after: float | None = (
        0.0  # sent as Retry-After on 429/500; None = no header (client backs off 1, 2, 4 s)
    )
    served: int = 0

    def claims(self, messages: list[dict]) -> bool:
        if self.times is not None and self.served >= self.times:
            return False
        if self.when is not None and not self.when(messages):
            return False
        self.served += 1
        return True


def last_message_contains(text: str) -> Callable[[list[dict]], bool]:
    """A fault rule: the last message (the one holding the inputs) mentions `text`."""
    return lambda messages: bool(messages) and text in message_text(messages[-1])


def default_kind(messages: list[dict]) -> str:
    """Which project signature a call is for; the brain's classifier, imported lazily."""
    from fakes.chat_format import call_kind

    return call_kind(messages)


@dataclass
class CallRecord:
    kind: str
    model: str
    status: int
    fault: str | None
    prompt_tokens: int
    completion_tokens: int
    started: float
    ended: float = 0.0
    last_message: str = field(default="", repr=False)
    # The request's settings as sent (every key but the messages): what a test checks reached the wire,
    # e.g. which output-token limit name the client used and whether response_format was set.
    request: dict = field(default_factory=dict, repr=False)
    key: str = field(default="", repr=False)  # the API key the client sent (Authorization: Bearer KEY)


class FakeLMServer:
    """The fake endpoint. Use as a context manager, or call start()/stop()."""

    def __init__(
        self,
        responder: Responder,
        *,
        latency: float = 0.0,
        jitter: float = 0.0,
        jitter_by_prompt: bool = False,
        faults: Iterable[Fault] = (),
        model_name: str = "fake-brain",
        hang_seconds: float = 30.0,
        kind_of: Callable[[list[dict]], str] = default_kind,
        port: int = 0,  # 0 = any free port; `collate reader --port P` asks for one
    ):
        self.responder = responder
        self.latency = latency
        self.jitter = jitter  # up to this many seconds more per call, drawn at random per call
        # or, with jitter_by_prompt, a function of the prompt: the same call waits as long in every run, as
        # a real model's longer reply to one prompt than another would, yet calls still finish out of order
        self.jitter_by_prompt = jitter_by_prompt
        self._random = random.Random()
        self.faults = list(faults)
        self.model_name = model_name
        self.hang_seconds = hang_seconds
        self.kind_of = kind_of
        self.requested_port = port
        self.records: list[CallRecord] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ---- lifecycle -------------------------------------------------------------------------
    def start(self) -> FakeLMServer:
        handler = type("BoundHandler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", self.requested_port), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="fake-lm-server", daemon=True)
        self._thread.start()
        log.debug("fake LM server on %s", self.url)
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases hanging handlers
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeLMServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError(
                "the fake LM server is not running: call start() or use it as a context manager"
            )
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        """The api_base to give a client: http://127.0.0.1:PORT/v1."""
        return f"http://127.0.0.1:{self.port}/v1"

    def lm(self, **kwargs):
        """A dspy.LM pointed at this server (no cache, so every call reaches it)."""
        import dspy

        kwargs.setdefault("cache", False)
        kwargs.setdefault("api_key", "x")
        return dspy.LM(f"openai/{self.model_name}", api_base=self.url, **kwargs)

    def env(self) -> dict[str, str]:
        """The COLLATE_* settings that point the project at this server."""
        # The suites written before issue 16 ran the ChatAdapter over DSPy's native engine; they keep
        # doing so. Tests of the local-server defaults (tests/local, tests/programs/test_lm_*) drop these two.
        return {
            "COLLATE_LM": f"openai/{self.model_name}",
            "COLLATE_API_BASE": self.url,
            "COLLATE_API_KEY": "x",
            "COLLATE_STRUCTURED": "off",
            "COLLATE_TOKEN_PARAM": "max_completion_tokens",
        }

    # ---- what tests read -------------------------------------------------------------------
    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.records)

    def calls_by_kind(self, *, answered_only: bool = False) -> Counter:
        with self._lock:
            return Counter(r.kind for r in self.records if not answered_only or r.status == 200)

    def faults_served(self) -> Counter:
        with self._lock:
            return Counter(r.fault for r in self.records if r.fault)

    def tokens(self) -> dict[str, int]:
        with self._lock:
            prompt = sum(r.prompt_tokens for r in self.records)
            completion = sum(r.completion_tokens for r in self.records)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def max_concurrency(self) -> int:
        """The most calls that were in flight at the same moment (proves the client ran them in parallel)."""
        with self._lock:
            events = sorted(
                [(r.started, 1) for r in self.records] + [(r.ended, -1) for r in self.records if r.ended]
            )
        best = now = 0
        for _, step in events:
            now += step
            best = max(best, now)
        return best

    def busy_seconds(self) -> float:
        """Wall time during which at least one call was in flight (the union of call intervals)."""
        with self._lock:
            spans = sorted((r.started, r.ended) for r in self.records if r.ended)
        total, edge = 0.0, float("-inf")
        for start, end in spans:
            if end > edge:
                total += end - max(start, edge)
                edge = end
        return total

    def requests_by_kind(self) -> dict[str, list[dict]]:
        """Each call's request settings (the body without its messages), grouped by call kind."""
        with self._lock:
            grouped: dict[str, list[dict]] = {}
            for r in self.records:
                grouped.setdefault(r.kind, []).append(r.request)
        return grouped

    def reset_counts(self) -> None:
        with self._lock:
            self.records.clear()

    # ---- one call --------------------------------------------------------------------------
    def _pick_fault(self, messages: list[dict]) -> Fault | None:
        with self._lock:  # claims() mutates `served`
            return next((f for f in self.faults if f.claims(messages)), None)

    def _record(self, rec: CallRecord) -> None:
        with self._lock:
            self.records.append(rec)

    def delay(self, messages: list[dict] | None = None) -> float:
        if self.jitter_by_prompt and messages is not None:
            digest = hashlib.sha256(
                json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()
            ).digest()
            return self.latency + self.jitter * int.from_bytes(digest[:4], "big") / 2**32
        with self._lock:
            return self.latency + self._random.uniform(0.0, self.jitter)

    def sleep(self, seconds: float) -> None:
        self._stopping.wait(seconds)


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLMServer  # bound per server by FakeLMServer.start
    protocol_version = "HTTP/1.1"  # keep-alive: clients reuse connections like with a real API
    disable_nagle_algorithm = True  # headers and body go out in separate writes: no 40 ms delayed-ACK stall

    def log_message(self, format, *args):  # noqa: A002 - the stdlib's name
        log.debug("fake LM server: " + format, *args)

    def do_GET(self):
        if self.path.rstrip("/").endswith("/models"):
            body = {
                "object": "list",
                "data": [{"id": self.fake.model_name, "object": "model", "owned_by": "fake"}],
            }
            return self._send_json(200, body)
        return self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not self.path.rstrip("/").endswith("/chat/completions"):
            return self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
        try:
            body = json.loads(raw or b"{}")
            messages = body["messages"]
        except (ValueError, KeyError, TypeError) as exc:
            return self._send_json(
                400, {"error": {"message": f"bad request body: {exc}", "type": "invalid_request_error"}}
            )
        self._complete(body, messages)

    def _complete(self, body: dict, messages: list[dict]) -> None:
        fake = self.fake
        started = time.monotonic()
        model = str(body.get("model") or fake.model_name)
        try:
            kind = fake.kind_of(messages)
        except Exception:  # a classifier bug must not turn into a 500 the test did not ask for
            log.exception("fake LM server: could not classify a call")
            kind = "unknown"
        prompt_text = "".join(message_text(m) for m in messages)
        rec = CallRecord(
            kind=kind,
            model=model,
            status=200,
            fault=None,
            prompt_tokens=approx_tokens(prompt_text),
            completion_tokens=0,
            started=started,
            last_message=message_text(messages[-1]) if messages else "",
            request={k: v for k, v in body.items() if k != "messages"},
            key=(self.headers.get("Authorization") or "").removeprefix("Bearer "),
        )
        fake._record(rec)
        if fake.latency or fake.jitter:
            fake.sleep(fake.delay(messages))
        fault = fake._pick_fault(messages)
        rec.fault = fault.kind if fault else None
        try:
            if fault and fault.kind == "hang":
                fake.sleep(fake.hang_seconds)
                rec.status = 504
                self._send_json(504, {"error": {"message": "hung", "type": "timeout"}})
                return
            if fault and fault.kind == "429":
                rec.status = 429
                self._send_json(
                    429,
                    {
                        "error": {
                            "message": "Rate limit reached (fake)",
                            "type": "rate_limit_error",
                            "code": "rate_limit_exceeded",
                        }
                    },
                    headers=_retry_after(fault),
                )
                return
            if fault and fault.kind == "500":
                rec.status = 500
                self._send_json(
                    500,
                    {"error": {"message": "The server had an error (fake)", "type": "server_error"}},
                    headers=_retry_after(fault),
                )
                return
            if fault and fault.kind == "malformed":
                content = MALFORMED_REPLY
            else:
                try:
                    content = fake.responder(messages, model)
                except Declined as exc:  # a responder that cannot answer this prompt says so, as a refusal
                    rec.status = 400
                    self._send_json(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})
                    return
                except (
                    Exception
                ) as exc:  # the responder is test code: report its bug as a 500 with the reason
                    log.exception("fake LM server: responder failed")
                    rec.status = 500
                    self._send_json(
                        500, {"error": {"message": f"responder failed: {exc!r}", "type": "server_error"}}
                    )
                    return
            rec.completion_tokens = approx_tokens(content)
            usage = {
                "prompt_tokens": rec.prompt_tokens,
                "completion_tokens": rec.completion_tokens,
                "total_tokens": rec.prompt_tokens + rec.completion_tokens,
            }
            if body.get("stream"):
                self._send_stream(model, content, usage)
            else:
                self._send_json(200, _completion(model, content, usage))
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout): nothing to answer
            rec.status = 499
        finally:
            rec.ended = time.monotonic()

    def _send_json(self, status: int, body: dict, headers: dict | None = None) -> None:
        data = json.dumps(body, ensure_ascii=False).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, model: str, content: str, usage: dict) -> None:
        """A minimal SSE stream: one content chunk, one finishing chunk with usage, then [DONE]."""
        cid = f"chatcmpl-{uuid.uuid4().hex[:12]}"
        chunks = [
            {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {"index": 0, "delta": {"role": "assistant", "content": content}, "finish_reason": None}
                ],
            },
            {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                "usage": usage,
            },
        ]
        payload = (
            "".join(f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        )
        data = payload.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _completion(model: str, content: str, usage: dict) -> dict:
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": usage,
    }


def _retry_after(fault: Fault) -> dict[str, str]:
    if fault.retry_after is None:
        return {}
    seconds = float(fault.retry_after)
    return {"Retry-After": str(int(seconds)) if seconds.is_integer() else f"{seconds:.3f}"}
