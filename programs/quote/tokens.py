"""How a quote counts tokens: tiktoken's o200k_base as a stand-in for the model's own tokenizer.

Why a stand-in: the model behind COLLATE_LM may be anything (a hosted GPT, a local Qwen); its tokenizer
is not known offline. o200k_base is what OpenAI's current models use. tiktoken downloads its files on
first use, which fails here (no network); LiteLLM, installed with DSPy, ships o200k_base and cl100k_base
in its package, so the quote reads them from there (TIKTOKEN_CACHE_DIR, found without importing
LiteLLM). Measured on the demo's prompts: a Chinese filing's extraction prompt is 10,006 characters and
6,114 o200k_base tokens (1.6 characters per token), an English one 5,592 and 1,422 (3.9); over the 40
demo questions the quote is 378,437 tokens by o200k_base and 243,013 by characters / 4 (the fake
server's count), so a chars/4 rule would under-quote a Chinese collection by a third or more.
When no tokenizer file can be read the counter falls back to chars/4 and says so in the quote.
A model whose own count is known is counted its own way (`counter_for`): the demo reader (`collate
reader`, fakes/server.py) reports characters / 4 in its usage, which is what the run's cost line shows;
counted with o200k_base its quote of the 40 demo questions was 1.5-1.75 times that cost line (issue 31).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ENCODING = "o200k_base"


@dataclass(frozen=True)
class TokenCounter:
    """count(text) -> tokens, and the name the quote prints for it."""

    count: Callable[[str], int]
    name: str


def chars_over_four(text: str) -> int:
    """One token per four characters, at least one (the fake server's own rule, fakes/server.py)."""
    return max(1, len(text) // 4)


CHARS_OVER_FOUR = TokenCounter(chars_over_four, "characters / 4")


def bundled_tiktoken_dir() -> str | None:
    """LiteLLM's folder of tiktoken files, located without importing LiteLLM (seconds)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers"
    return str(folder) if folder.is_dir() else None


_counter: TokenCounter | None = None


def default_counter() -> TokenCounter:
    """tiktoken o200k_base read offline, or chars/4 (named as such) when it cannot be loaded."""
    global _counter
    if _counter is None:
        _counter = _load()
    return _counter


def _load() -> TokenCounter:
    folder = bundled_tiktoken_dir()
    if folder and not os.environ.get("TIKTOKEN_CACHE_DIR"):
        os.environ["TIKTOKEN_CACHE_DIR"] = folder  # what LiteLLM itself sets when it is imported
    try:
        import tiktoken

        encoding = tiktoken.get_encoding(ENCODING)
    except Exception:  # no file and no network: a rougher count, said in the quote, beats no quote
        return TokenCounter(chars_over_four, "characters / 4 (tiktoken's o200k_base could not be loaded)")

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return TokenCounter(count, f"tiktoken {ENCODING}, a stand-in for the model's tokenizer")


DEMO_READER = "collate-reader"  # collate/reader.py's model id; its server counts characters / 4


def counter_for(settings) -> TokenCounter:
    """The count of the model the settings name, when known here (the demo reader's), else o200k_base."""
    model = str(getattr(settings, "lm", None) or "")
    if model.rsplit("/", 1)[-1] == DEMO_READER:
        return TokenCounter(chars_over_four, "characters / 4, the demo reader's own count")
    return default_counter()
