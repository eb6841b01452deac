"""The brain as an in-process DSPy engine: `brain_lm()` == dspy.LM("fake/brain", engine=BrainEngine(), ...).

For unit tests that want the rule-based analyst without HTTP. Engines follow DSPy 3.4's canonical
contract (dspy/clients/engines/base.py): complete(Request) -> Response, one attempt, no retries.
"""

from __future__ import annotations

import dspy
from dspy.lm15 import Message, Response, TextPart, Usage, response_to_events

from fakes.brain import Brain
from fakes.server import approx_tokens


def request_messages(request) -> list[dict]:
    """A canonical Request as OpenAI-style messages (what the brain reads)."""
    messages = []
    if request.system is not None:
        system = (
            request.system if isinstance(request.system, str) else "".join(p.text for p in request.system)
        )
        messages.append({"role": "system", "content": system})
    messages.extend({"role": m.role, "content": m.text or ""} for m in request.messages)
    return messages


class BrainEngine:
    def __init__(self, brain: Brain | None = None):
        self.brain = brain or Brain()

    def complete(self, request) -> Response:
        messages = request_messages(request)
        text = self.brain(messages, "fake/brain")
        prompt = approx_tokens("".join(m["content"] for m in messages))
        completion = approx_tokens(text)
        return Response(
            id=None,
            model="fake/brain",
            message=Message.assistant([TextPart(text)]),
            finish_reason="stop",
            usage=Usage(input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion),
        )

    def stream(self, request):
        return response_to_events(self.complete(request))

    def close(self) -> None:
        pass


class AsyncBrainEngine:
    def __init__(self, sync: BrainEngine):
        self.sync = sync

    async def complete(self, request) -> Response:
        return self.sync.complete(request)

    async def stream(self, request):
        for event in self.sync.stream(request):
            yield event

    async def aclose(self) -> None:
        pass


def brain_lm(brain: Brain | None = None) -> dspy.LM:
    """A dspy.LM answered in-process by the brain (sync and async), never cached."""
    engine = BrainEngine(brain)
    return dspy.LM("fake/brain", engine=engine, async_engine=AsyncBrainEngine(engine), cache=False)
