"""A cheap reader that errs on a known share of documents: the demo reader, corrupted deterministically.

For the extraction cascade (issue 25): `ErringBrain(rate=0.2)` answers every call as the demo reader
(fakes/brain.py) does, except in extraction replies: a document whose id hashes, with the seed, under
`rate` gets ONE of its disclosed facts wrong (the one whose (document, field) hashes lowest), in one
of three ways, also chosen by the hash: a wrong value (the quote still the page's, so the check finds
the value missing from it), a made-up quote (on no page), or "not disclosed". One fact, because a
weak model misreads a field, not a whole filing. `erred` keeps which (document, field) it corrupted
and how; `only` names the documents to err on instead of a hashed share. Routed by model name
(`by_model`), one loopback server answers both the cheap and the strong model.
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
        self, rate: float = 0.2, seed: int = 0, only: set[str] | None = None, kinds: tuple[str, ...] = KINDS
    ):
        """rate: share of documents with a wrong fact; only: err on these documents instead;
        kinds: the corruptions drawn from."""
        super().__init__()
        self.rate, self.seed, self.only, self.kinds = rate, seed, only, kinds
        self.erred: dict[tuple[str, str], str] = {}  # (document, field) -> how it was corrupted
        self.documents: set[str] = set()  # every document it was asked to extract from
        self._errs_lock = threading.Lock()

    def hashed(self, *parts: str) -> int:
        return zlib.crc32("|".join((str(self.seed), *parts)).encode())

    def errs_on(self, doc_id: str) -> bool:
        if self.only is not None:
            return doc_id in self.only
        return self.hashed(doc_id) % 10_000 < self.rate * 10_000

    def outputs(self, parsed: ParsedPrompt) -> dict[str, Any]:
        out = super().outputs(parsed)
        if kind_of_prompt(parsed) != "extract" or not isinstance(out.get("values"), list):
            return out
        values: list[dict] = list(out["values"])
        doc_id = document_id(parsed.inputs)
        with self._errs_lock:
            self.documents.add(doc_id)
        disclosed = [
            i for i, v in enumerate(values) if v.get("disclosed") and v.get("value") not in (None, "")
        ]
        if not disclosed or not self.errs_on(doc_id) or str(parsed.inputs.get("feedback") or "").strip():
            return out  # a repair call (feedback given) is answered as the reader would
        pick = min(disclosed, key=lambda i: self.hashed(doc_id, str(values[i].get("field"))))
        values[pick] = self.corrupted(doc_id, values[pick])
        return {**out, "values": values}

    def corrupted(self, doc_id: str, value: dict) -> dict:
        field = str(value.get("field") or "")
        kind = self.kinds[self.hashed(doc_id, field, "kind") % len(self.kinds)]
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
