"""What a layout works with: the document's spec (company, year, facts, style, page budget) and the page.

Its own module so that render.py can import every layout and every layout can import `Page` without
either importing the other back (issue 20: render and the five layouts were an import cycle).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from .companies import Company
from .filler import Filler
from .style import Style
from .writer import DocWriter


@dataclass
class DocSpec:
    doc_id: str
    company: Company
    year: int
    doctype: str
    facts: dict
    prior: dict
    rng: random.Random
    pages: int
    style: Style = field(default_factory=Style)


@dataclass
class Page:
    """What a layout works with: the writer, the spec, and the running-text filler."""

    w: DocWriter
    spec: DocSpec
    fill: Filler

    @property
    def style(self) -> Style:
        return self.spec.style

    def section_done(self, index: int, total: int) -> None:
        """Running text so that section `index` of `total` ends near its share of the page budget."""
        self.w.fill_until(max(1, round(self.spec.pages * (index + 1) / total)), self.fill)
