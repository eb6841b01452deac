"""A model answer read once for the matcher: its companies, lists, numbers, dates and counts."""

from __future__ import annotations

import re
from collections.abc import Iterable

from evaluate.matching.counts import find_counts
from evaluate.matching.entities import by_sentence, enumerations, find_mentions, ordered_symbols, owner_at
from evaluate.matching.quantities import find_dates, find_quantities, fold

NUMBERING = re.compile(r"(?m)^\s*\d{1,2}[.)、]\s")  # "1. 601398": list numbering, not a number of the answer


class AnswerView:
    def __init__(self, answer: str, symbols: Iterable[str] | None, gold_entities: list[str]):
        self.text = fold(answer)
        self.mentions = find_mentions(self.text, symbols)
        self.entities = ordered_symbols(self.mentions)
        self.runs = enumerations(self.text, self.mentions)  # "A、B、C": the lists the answer gives
        self.sentences = by_sentence(self.text, self.mentions)  # the companies each sentence names
        self.dates = find_dates(self.text)
        taken = [(m.start, m.end) for m in self.mentions] + [(d.start, d.end) for d in self.dates]
        numbering = [(m.start(), m.end()) for m in NUMBERING.finditer(self.text)]
        self.quantities = find_quantities(self.text, taken + numbering)
        self.counts = find_counts(self.text, taken + numbering)
        self.keep = set(gold_entities)

    def owner(self, position: int) -> str | None:
        """The gold company a number at `position` belongs to: the last one named before it."""
        return owner_at(position, self.mentions, self.keep)
