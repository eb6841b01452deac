"""What the LM endpoint takes: the name of the output-token limit and whether to ask for JSON-schema output.

Measured, not assumed (issue 16): DSPy 3.4's native engine sends an `openai/` model's limit as
`max_completion_tokens` (its OpenAI preset). llama.cpp's server ignores that name and generated until
its context was full, so a 400-token limit never reached it; Ollama and older vLLM read `max_tokens`
too. DSPy routes `openai/` models through its LiteLLM engine with `max_tokens` on the wire, keeping the
model id (facts and saved programs name the model, so the id must not change with the route).

JSON-schema decoding: vLLM, llama.cpp's server, Ollama and the OpenAI API accept `response_format`
with a JSON schema and constrain decoding to it, so even a small model returns parseable fields.
DSPy's JSONAdapter only sends the schema for models its metadata snapshot knows; a local model is
never in it, so `SchemaJSONAdapter` sends the stage's schema whenever this mode is chosen.
"""

from __future__ import annotations

from urllib.parse import urlparse

import dspy

from programs.lm.patches import ResponseFormatAdapter, has_open_ended_mapping, structured_outputs_model

# Hosts whose OpenAI-compatible API requires `max_completion_tokens` (reasoning models refuse `max_tokens`).
HOSTED_OPENAI = ("api.openai.com", ".openai.azure.com")


def is_hosted_openai(api_base: str | None) -> bool:
    """No api_base means OpenAI's own endpoint; otherwise the host decides."""
    if not api_base:
        return True
    host = (urlparse(api_base).hostname or "").lower()
    return any(host == h or (h.startswith(".") and host.endswith(h)) for h in HOSTED_OPENAI)


def token_param(settings) -> str:
    """`max_tokens` or `max_completion_tokens`: the setting, or by endpoint when it is auto."""
    if settings.token_param != "auto":
        return settings.token_param
    return "max_completion_tokens" if is_hosted_openai(settings.api_base) else "max_tokens"


def engine_for(settings, model: str) -> str:
    """The dspy.LM engine that puts the limit on the wire under token_param's name.

    Only `openai/` ids need a choice: DSPy's other prefixes for local servers (`hosted_vllm/`,
    `ollama_chat/`) already send `max_tokens` natively."""
    if model.startswith("openai/") and token_param(settings) == "max_tokens":
        return "litellm"
    return "auto"


def structured_mode(settings) -> str:
    """`json_schema` or `off`: the setting, or json_schema for any endpoint that is not hosted OpenAI
    when it is auto (hosted models follow the text format well, and compiled prompts were made with it)."""
    if settings.structured != "auto":
        return settings.structured
    return "off" if is_hosted_openai(settings.api_base) else "json_schema"


class SchemaJSONAdapter(ResponseFormatAdapter):
    """DSPy's JSONAdapter that always sends the signature's JSON schema as response_format.

    spelling "json_schema": OpenAI's `{"type": "json_schema", "json_schema": {...}}` (vLLM, Ollama,
    llama.cpp's own llama-server, OpenAI). "json_object": `{"type": "json_object", "schema": {...}}`,
    the only form llama-cpp-python's server takes (measured: 0.3.36 answers 500 to json_schema).
    A signature with an open-ended mapping output has no closed schema: it gets JSON mode instead."""

    def __init__(self, spelling: str = "json_schema", **kwargs):
        super().__init__(**kwargs)
        self.spelling = spelling

    def response_format(self, signature) -> dict | None:
        if has_open_ended_mapping(signature):
            return {"type": "json_object"}
        try:
            model = structured_outputs_model(signature, self.use_native_function_calling)
        except Exception:  # a schema pydantic cannot express: JSON mode still constrains the syntax
            return {"type": "json_object"}
        if self.spelling == "json_object":
            return {"type": "json_object", "schema": model.model_json_schema()}
        # The wire form, not the pydantic class: LiteLLM turns a class into this dict inside the very
        # kwargs DSPy keys its cache on, so the key stored after a call never matched the key looked up
        # before it, and every structured call missed the cache (the demo's planner and extractor, 22
        # of its 42 calls, paid again on every rerun). Given the dict, LiteLLM sends it unchanged.
        from litellm.utils import type_to_response_format_param  # here: importing LiteLLM takes ~3 s

        return type_to_response_format_param(model)


def apply_structured(settings) -> str:
    """Configure DSPy's adapter for the stages; returns the mode used.

    off leaves a ChatAdapter the caller configured alone (tests configure a strict one) and only
    undoes a SchemaJSONAdapter a previous configure() set."""
    mode = structured_mode(settings)
    current = dspy.settings.adapter
    if mode in ("json_schema", "json_object"):
        if not isinstance(current, SchemaJSONAdapter) or current.spelling != mode:
            dspy.configure(adapter=SchemaJSONAdapter(spelling=mode))
    elif isinstance(current, SchemaJSONAdapter):
        dspy.configure(adapter=dspy.ChatAdapter())
    return mode
