"""A toy task and a rule-based fake LM that answers any DSPy signature, for optimizer plumbing tests.

The toy task: `question -> answer` where the right answer is the question's last word upper-cased.
The fake "model" gets it right only when the prompt carries a demo (so optimizers that add demos
measurably help), and writes a plausible value for every other signature it is sent (an
optimizer's instruction proposer, GEPA's reflection, SIMBA's rule writer).
"""

from __future__ import annotations

import json

import dspy
import pytest
from dspy.lm15 import Message, Response, TextPart, Usage

from fakes.chat_format import format_reply, parse_prompt

_BY_TYPE = {"int": 1, "float": 1.0, "bool": True}


def _default_value(name: str, type_name: str):
    if type_name in _BY_TYPE:
        return _BY_TYPE[type_name]
    if type_name.startswith("list"):
        return []
    if type_name.startswith("dict"):
        return {}
    return f"Be precise about the {name}."


class RuleEngine:
    """A dspy engine: reads the ChatAdapter prompt, answers it by rule, counts its calls."""

    def __init__(self):
        self.calls = 0

    def complete(self, request):
        self.calls += 1
        messages = []
        if request.system is not None:
            system = (
                request.system if isinstance(request.system, str) else "".join(p.text for p in request.system)
            )
            messages.append({"role": "system", "content": system})
        messages.extend({"role": m.role, "content": m.text or ""} for m in request.messages)
        parsed = parse_prompt(messages)
        if parsed.output_fields == ["answer"] and "question" in parsed.inputs:
            has_demo = sum(m["role"] == "assistant" for m in messages) > 0
            word = str(parsed.inputs["question"]).split()[-1]
            outputs = {"answer": word.upper() if has_demo else word}
        else:
            outputs = {n: _default_value(n, parsed.output_types.get(n, "str")) for n in parsed.output_fields}
        text = format_reply(outputs, as_json=parsed.wants_json)
        return Response(
            id=None,
            model="fake",
            message=Message.assistant([TextPart(text)]),
            finish_reason="stop",
            usage=Usage(input_tokens=len(json.dumps(messages)) // 4, output_tokens=5, total_tokens=0),
        )

    def stream(self, request):
        raise NotImplementedError

    def close(self):
        pass


@pytest.fixture
def rule_lm():
    engine = RuleEngine()
    lm = dspy.LM("fake/rule", engine=engine, cache=False, num_retries=0)
    lm.rule_engine = engine
    dspy.configure(lm=lm)
    return lm


def toy_examples(n: int) -> list[dspy.Example]:
    words = [
        "alpha",
        "bravo",
        "charlie",
        "delta",
        "echo",
        "foxtrot",
        "golf",
        "hotel",
        "india",
        "juliet",
        "kilo",
        "lima",
    ]
    return [
        dspy.Example(question=f"shout the word {w}", answer=w.upper()).with_inputs("question")
        for w in (words * 3)[:n]
    ]


def exact(example, pred, trace=None, *args, **kwargs) -> float:
    return float(str(getattr(pred, "answer", "")).strip() == example.answer)


@pytest.fixture
def toy():
    return {"examples": toy_examples, "metric": exact, "program": lambda: dspy.Predict("question -> answer")}
