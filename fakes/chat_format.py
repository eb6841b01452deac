"""Read DSPy ChatAdapter (and JSONAdapter) prompts the way a model would, and write replies back.

A fake LM only sees messages. The system message names the input and output fields with their
types and ends with the signature's instructions; the last user message holds the input values
under `[[ ## name ## ]]` headers. `parse_prompt` turns that into a `ParsedPrompt`;
`format_reply` writes output values back as ChatAdapter text (`[[ ## name ## ]]` ... then
`[[ ## completed ## ]]`) or, when the prompt asked for it, as the JSON object JSONAdapter expects.
Typed (non-str) values are written as JSON, which is what the adapters parse.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

_FIELD_LINE = re.compile(r"^\d+\.\s+`(?P<name>[^`]+)`\s+\((?P<type>.*?)\):", re.M)
_HEADER = re.compile(r"\[\[ ## (?P<name>\w+) ## \]\]")
_TRAILER = re.compile(
    r"\n*(Respond with the corresponding output fields|Respond with a JSON object).*\Z", re.S
)
_OBJECTIVE = "your objective is:"


@dataclass
class ParsedPrompt:
    inputs: dict[str, Any]
    input_types: dict[str, str]
    output_fields: list[str]
    output_types: dict[str, str]
    instructions: str
    wants_json: bool = False
    raw_inputs: dict[str, str] = field(default_factory=dict)


def _text(message: dict) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def _section(text: str, start: str, stop: str) -> str:
    i = text.find(start)
    if i < 0:
        return ""
    j = text.find(stop, i + len(start))
    return text[i + len(start) : j if j >= 0 else None]


def _fields(block: str) -> dict[str, str]:
    return {m["name"]: m["type"].strip() for m in _FIELD_LINE.finditer(block)}


def decode_value(raw: str, type_name: str) -> Any:
    """A field's text as the adapter wrote it, back to a Python value (JSON for typed fields)."""
    if type_name == "str":
        return raw
    for loader in (json.loads, ast.literal_eval):
        try:
            return loader(raw)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return raw


def parse_prompt(messages: list[dict]) -> ParsedPrompt:
    """Input values, output field names and instructions of one adapter-formatted call."""
    system = next((_text(m) for m in messages if m.get("role") in ("system", "developer")), "")
    user = next((_text(m) for m in reversed(messages) if m.get("role") == "user"), "")
    input_types = _fields(_section(system, "Your input fields are:", "Your output fields are:"))
    output_types = _fields(_section(system, "Your output fields are:", "All interactions will be structured"))
    instructions = ""
    if _OBJECTIVE in system:
        instructions = " ".join(system.split(_OBJECTIVE, 1)[1].split())
    wants_json = "Respond with a JSON object" in user
    body = _TRAILER.sub("", user)
    raw: dict[str, str] = {}
    headers = list(_HEADER.finditer(body))
    for h, nxt in zip(headers, headers[1:] + [None], strict=False):
        raw[h["name"]] = body[h.end() : nxt.start() if nxt else None].strip("\n").rstrip()
    inputs = {name: decode_value(text, input_types.get(name, "str")) for name, text in raw.items()}
    return ParsedPrompt(
        inputs=inputs,
        input_types=input_types,
        output_fields=list(output_types),
        output_types=output_types,
        instructions=instructions,
        wants_json=wants_json,
        raw_inputs=raw,
    )


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def encode_value(value: Any) -> str:
    """How a model should write one output value for ChatAdapter: text as is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(_plain(value), ensure_ascii=False)


def format_reply(outputs: dict[str, Any], *, as_json: bool = False) -> str:
    """Output values as the adapter expects them: ChatAdapter sections, or one JSON object."""
    if as_json:
        return json.dumps({k: _plain(v) for k, v in outputs.items()}, ensure_ascii=False)
    parts = [f"[[ ## {name} ## ]]\n{encode_value(value)}" for name, value in outputs.items()]
    return "\n\n".join(parts + ["[[ ## completed ## ]]"])


# Which project signature a call is for, told apart by its output (and, when shared, input) fields.
_KINDS = {
    ("plan",): "plan",
    ("code",): "write_code",
    ("fixed_code",): "fix_code",
    ("correct", "reason"): "judge",
}


def kind_of_prompt(parsed: ParsedPrompt) -> str:
    # ChainOfThought-style modules prepend `reasoning`; it does not change what the call is for.
    outs = tuple(f for f in parsed.output_fields if f != "reasoning")
    if outs in _KINDS:
        return _KINDS[outs]
    if outs == ("values",):
        return (
            "extract"
            if "passages" in parsed.input_types
            else "normalize"
            if "items" in parsed.input_types
            else "values"
        )
    if outs == ("answer",):
        return "flat_rag" if "passages" in parsed.input_types or "context" in parsed.input_types else "answer"
    return "+".join(outs) or "unknown"


PREFLIGHT = "collate preflight"  # programs.lm.preflight.PROMPT starts so: the command's check, no stage


def call_kind(messages: list[dict]) -> str:
    """The kind of one call from its raw messages (what the fake server counts by)."""
    if messages and _text(messages[-1]).startswith(PREFLIGHT):
        return "preflight"
    return kind_of_prompt(parse_prompt(messages))
