"""The demo reader made to go through every stage on any filing: for measuring what a run costs on real
filings (bench/estimate_accuracy.py --real), where no language model exists on this machine.

Not a reader of meaning. The demo reader (fakes/brain.py) declines a collection of real 10-Ks, as it
should; this one plans one field per question (the demo's rule where one knows the question's words,
else the question itself as the field), and extracts from the best-ranked passage the first line that
prints a figure (value, that line as the quote, its page), so the fact check verifies it and every later
stage runs. What a measurement with it is worth: the prompts are the program's real prompts over the real
filings' real chunks (what a quote mostly prices), the replies are this reader's (short, like the demo's).
"""

from __future__ import annotations

import re
from typing import Any

from fakes.brain import Brain, default_output
from fakes.chat_format import ParsedPrompt, kind_of_prompt
from fakes.fields import rule_named, rules_for
from fakes.reading import _found, extract_field, split_passage

GENERIC_FIELD = "asked_value"
# a figure as statements print it: thousands separated (1,493,602), or with decimals (36.8)
FIGURE = re.compile(r"(?<![\d,.])(?:\d{1,3}(?:,\d{3})+|\d+\.\d+)(?![\d,])")


def plan(inputs: dict) -> dict:
    question = str(inputs.get("question") or "")
    rules = rules_for(question)
    if rules:
        fields = [
            {"name": r.name, "description": r.description, "type": r.type, "unit": r.unit} for r in rules
        ]
    else:
        name, description = asked_metric(question)
        fields = [{"name": name, "description": description, "type": "number", "unit": "USD"}]
    restriction = {"doctypes": None, "years": None, "symbols": None}
    return {
        "plan": {"subqueries": [{"query": question, "restriction": restriction, "fields": fields}]},
        "reasoning": f"The question needs {', '.join(f['name'] for f in fields)} from each filing.",
    }


ASKED = re.compile(
    r"what (?:is|was|are|were) (?:the |\w+'s )?(?:(?:fy|fiscal year) ?\d{4} )?(.+?)(?: for | of | in |\?|\.|$)",
    re.I,
)
STOP = {
    "the",
    "and",
    "for",
    "what",
    "was",
    "are",
    "were",
    "from",
    "with",
    "that",
    "this",
    "its",
    "fy",
    "total",
}


def asked_metric(question: str) -> tuple[str, str]:
    """(field name, description) of the figure a question asks for, as a planner would name it: the words
    after 'what is the (FY2019)', at most six ('operating cash flow ratio'); else the question's opening."""
    found = ASKED.search(question)
    phrase = " ".join((found.group(1) if found else question).split()[:6]).strip(" ,")
    name = "_".join(re.findall(r"[a-z]+", phrase.lower())[:6]) or GENERIC_FIELD
    return name, phrase


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower().replace("_", " ")) if len(w) > 2 and w not in STOP}


def first_figure(spec: dict, passages: list[str]) -> dict[str, Any]:
    """The line of the best-ranked passages whose label shares the most words with the field (the first
    labelled figure when none does), as the field's value."""
    field = words(f"{spec.get('name', '')} {spec.get('description', '')}")
    best, best_overlap = None, -1
    for page, text in (split_passage(p) for p in passages):
        for line in text.splitlines():
            found = FIGURE.search(line)
            if not found or sum(c.isalpha() for c in line[: found.start()]) < 3:
                continue
            overlap = len(words(line[: found.start()]) & field)
            if overlap > best_overlap:
                best, best_overlap = (page, text, line, found.group()), overlap
    if best is not None:
        page, text, line, value = best
        return _found(spec.get("name", ""), value, text, "number", line, page)
    return {
        "field": spec.get("name", ""),
        "disclosed": False,
        "value": None,
        "unit": None,
        "quote": None,
        "page": None,
    }


def extract(inputs: dict) -> dict:
    passages = [p if isinstance(p, str) else str(p) for p in inputs.get("passages") or []]
    values = []
    for spec in inputs.get("field_specs") or []:
        spec = spec if isinstance(spec, dict) else {}
        known = rule_named(spec.get("name", ""), spec.get("description", "")) is not None
        found = extract_field(spec, passages) if known else {"disclosed": False}
        values.append(found if found.get("disclosed") else first_figure(spec, passages))
    return {"values": values}


class AnyFilingReader(Brain):
    """Brain for every stage but the plan and the extraction, which read any filing (above)."""

    def outputs(self, parsed: ParsedPrompt) -> dict[str, Any]:
        kind = kind_of_prompt(parsed)
        if kind not in ("plan", "extract"):
            return super().outputs(parsed)
        with self._lock:
            self.counts[kind] += 1
        produced = (plan if kind == "plan" else extract)(parsed.inputs)
        return {
            name: produced[name]
            if name in produced
            else f"Following the rules for a {kind} call."
            if name == "reasoning"
            else default_output(parsed.output_types.get(name, "str"))
            for name in parsed.output_fields
        }
