"""Hedged answers: several alternatives offered for one value.

"共有1家或2家或3家", "1.7935或3.2个百分点", "约1.2或1.5", "1, 2 or 3 companies", "601398或601939": an answer
that offers the gold value among others has not given it. This module finds the groups of items (numbers,
dates or company mentions) joined by an "or" word; whether a group is a hedge (its alternatives differ)
and whether it touches a gold fact is decided by the matcher (evaluate/matching/final_match.py), which knows
when two numbers are the same value ("-0.14或-14%" states one growth rate twice, not two).

A range ("1至3家", "从10%到15%") is not read as alternatives: "from 10% to 15%" states a change.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evaluate.matching.answer_view import AnswerView
from evaluate.matching.gold_facts import GoldFacts
from evaluate.matching.number_match import same_number

# Between two alternatives: an "or" word, maybe with "about" before the second ("1.2或约1.5").
OR_GAP = re.compile(
    r"^\s*[,，]?\s*(?:或者|或是|抑或|还是|或|\bor\b)\s*(?:约为|约|大约|大概|\babout\b|\baround\b|"
    r"\bapproximately\b|\broughly\b|~)?\s*$",
    re.I,
)
# Between the earlier alternatives of "1, 2 or 3": list punctuation only.
LIST_GAP = re.compile(r"^\s*[,，、]\s*$")


def alternatives(text: str, spans: Sequence[tuple[int, int]]) -> list[list[int]]:
    """Groups (indices into `spans`, sorted by start) of two or more items joined by "or" words: a
    chain of items whose every gap is an "or" or list punctuation, with at least one "or"."""
    groups: list[list[int]] = []
    chain: list[int] = []
    has_or = False

    def close() -> None:
        if len(chain) > 1 and has_or:
            groups.append(list(chain))

    for i, (start, _) in enumerate(spans):
        if chain:
            gap = text[spans[chain[-1]][1] : start]
            if OR_GAP.match(gap):
                chain.append(i)
                has_or = True
                continue
            if LIST_GAP.match(gap):
                chain.append(i)
                continue
            close()
        chain, has_or = [i], False
    close()
    return groups


def _same(a, b, growth_quirk: bool) -> bool:
    return same_number(a, b, growth_quirk) or same_number(b, a, growth_quirk)


def hedged_gold(facts: GoldFacts, view: AnswerView, growth_quirk: bool) -> str | None:
    """Why the answer hedges on a gold fact (offers it among different alternatives), or None."""
    quantities = view.quantities
    for group in alternatives(view.text, [(q.start, q.end) for q in quantities]):
        values = [quantities[i] for i in group]
        if all(_same(values[0], v, growth_quirk) for v in values[1:]):
            continue  # one value stated twice ("-0.14或-14%"), not alternatives
        if any(same_number(g, v, growth_quirk) for g, _ in facts.quantities for v in values):
            return "hedges between " + " / ".join(v.text.strip() for v in values) + " for one value"
    dates = view.dates
    for group in alternatives(view.text, [(d.start, d.end) for d in dates]):
        stated = {(dates[i].month, dates[i].day) for i in group}  # a gold date may have no year
        if len(stated) > 1 and stated & {(d.month, d.day) for d, _ in facts.dates}:
            return "hedges between the dates " + " / ".join(dates[i].iso() for i in group)
    mentions = view.mentions
    for group in alternatives(view.text, [(m.start, m.end) for m in mentions]):
        symbols = list(dict.fromkeys(mentions[i].symbol for i in group))
        if len(symbols) > 1 and set(symbols) & set(facts.entities):
            return "hedges between the companies " + " or ".join(symbols)
    return None
