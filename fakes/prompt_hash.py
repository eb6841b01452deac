"""A fake LM whose every reply depends on a hash of the WHOLE prompt, and that keeps every prompt it saw.

Why: the rule-based Brain reads only part of a prompt (a planner's `known_fields` never changes its
plan), so a program whose prompts vary from run to run can still look deterministic against it. A
real LM answers the whole prompt; this one makes any difference visible downstream, like one would:
- plan: the field descriptions are reworded, the wording chosen by the prompt's hash;
- extract: one prompt in seven gets its first field left unanswered (a reader that missed it);
- answer: the answer carries the prompt's hash.
Otherwise the reply is the Brain's. `prompts` is the multiset of (call kind, prompt hash) it answered,
what a determinism test compares between runs.

    responder = PromptHashed()
    with FakeLMServer(responder, latency=0.02, jitter=0.1) as server: ...
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import Counter

from fakes.brain import Brain, reworded_plan
from fakes.chat_format import format_reply, kind_of_prompt, parse_prompt

MISSED_ONE_IN = 7  # extraction prompts whose first field the reader "misses"


def prompt_hash(messages: list[dict]) -> str:
    """A stable digest of the messages as sent (roles and contents, in order)."""
    return hashlib.sha256(json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


class PromptHashed:
    def __init__(self, brain: Brain | None = None):
        self.brain = brain or Brain()
        self.prompts: Counter = Counter()  # (kind, prompt hash) -> times asked
        self.answers: dict[str, str] = {}  # question -> the last answer written for it
        self._lock = threading.Lock()

    def __call__(self, messages: list[dict], model: str = "fake-brain") -> str:
        digest = prompt_hash(messages)
        parsed = parse_prompt(messages)
        kind = kind_of_prompt(parsed)
        with self._lock:
            self.prompts[(kind, digest)] += 1
        outputs = self.brain.outputs(parsed)
        seed = int(digest, 16)
        if kind == "plan" and "plan" in outputs:
            outputs = reworded_plan(outputs, str(parsed.inputs.get("question") or ""), seed)
        elif kind == "extract" and seed % MISSED_ONE_IN == 0 and outputs.get("values"):
            outputs = {**outputs, "values": list(outputs["values"])[1:]}
        elif kind == "answer" and "answer" in outputs:
            outputs = {**outputs, "answer": f"{outputs['answer']} [{digest[:8]}]"}
        return format_reply(outputs, as_json=parsed.wants_json)
