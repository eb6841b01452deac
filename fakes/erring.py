"""A cheap reader that errs on a known share of facts: the demo reader, corrupted deterministically.

For the extraction cascade (issue 25): `ErringBrain(rate=0.2)` answers every call as the demo reader
(fakes/brain.py) does, except that in an extraction reply each disclosed fact whose (document, field)
hashes, with the seed, under `rate` comes back wrong in one of three ways, also chosen by the hash:
a wrong value (the quote still the page's, so the check finds the value missing from it), a made-up
quote (not on any page), or "not disclosed". `erred` keeps which (document, field) pairs it corrupted:
the share a cascade should send to the strong model. `only` limits the errors to chosen documents.
Routed by model name (`by_model`), one loopback server answers both the cheap and the strong model.
"""

from __future__ import annotations

import re
import threading
import zlib
from typing import Any

from fakes.brain import Brain
from fakes.chat_format import ParsedPrompt, kind_of_prompt

WRONG_VALUE, MADE_UP_QUOTE, NOT_DISCLOSED = "wrong value", "made-up quote", "not disclosed"
KINDS = (WRONG_VALUE, MADE_UP_QUOTE, NOT_DISCLOSED)
DOC_ID = re.compile(r"\(id ([^)]+)\)")


def document_id(inputs: dict) -> str:
    found = DOC_ID.search(str(inputs.get("document") or ""))
    return found.group(1) if found else ""


class ErringBrain(Brain):
    def __init__(
        self,
        rate: float = 0.2,
        seed: int = 0,
        only: set[str] | None = None,
        kinds: tuple[str, ...] = KINDS,
    ):
        """rate: share of disclosed facts corrupted; only: corrupt these documents' facts (all of their
        disclosed ones) instead of a hashed share; kinds: the corruptions drawn from."""
        super().__init__()
        self.rate, self.seed, self.only, self.kinds = rate, seed, only, kinds
        self.erred: dict[tuple[str, str], str] = {}  # (document, field) -> how it was corrupted
        self.disclosed: set[tuple[str, str]] = set()  # every disclosed (document, field) it was asked
        self._errs_lock = threading.Lock()

    def hashed(self, doc_id: str, field: str) -> int:
        return zlib.crc32(f"{self.seed}|{doc_id}|{field}".encode())

    def errs_on(self, doc_id: str, field: str) -> bool:
        if self.only is not None:
            return doc_id in self.only
        return self.hashed(doc_id, field) % 10_000 < self.rate * 10_000

    def outputs(self, parsed: ParsedPrompt) -> dict[str, Any]:
        out = super().outputs(parsed)
        if kind_of_prompt(parsed) != "extract" or not isinstance(out.get("values"), list):
            return out
        doc_id = document_id(parsed.inputs)
        out["values"] = [self.corrupted(doc_id, v) for v in out["values"]]
        return out

    def corrupted(self, doc_id: str, value: dict) -> dict:
        field = str(value.get("field") or "")
        if not value.get("disclosed") or value.get("value") in (None, ""):
            return value
        with self._errs_lock:
            self.disclosed.add((doc_id, field))
        if not self.errs_on(doc_id, field):
            return value
        kind = self.kinds[(self.hashed(doc_id, field) // 10_000) % len(self.kinds)]
        with self._errs_lock:
            self.erred[(doc_id, field)] = kind
        if kind == WRONG_VALUE:
            return {**value, "value": wrong(str(value["value"]))}
        if kind == MADE_UP_QUOTE:
            return {**value, "quote": f"{field} was reported as {value['value']} in the summary table"}
        return {**value, "disclosed": False, "value": None, "unit": None, "quote": None, "page": None}


def wrong(value: str) -> str:
    """A value the quote does not print: its first digit changed (a date, a ratio, an amount alike),
    or, without a digit, another word."""
    found = re.search(r"\d", value)
    if not found:
        return f"not {value}"
    digit = str((int(found.group()) + 3) % 10)
    return value[: found.start()] + digit + value[found.end() :]


def by_model(routes: dict[str, Brain], default: Brain):
    """A FakeLMServer responder answering each request with the brain its model name contains."""

    def respond(messages: list[dict], model: str) -> str:
        for word, brain in routes.items():
            if word in model:
                return brain(messages, model)
        return default(messages, model)

    return respond
