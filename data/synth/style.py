"""How one document is typeset: the layout habits real filings differ in, drawn once per document.

Real filings are consistent within a document and differ between issuers: one rules every row, another
only the header and total lines, a third draws a full grid; one prints the unit in the statement title,
another on its own line, a third in the header row. Each flag here is a difficulty seen in real SEC and
A-share filings that the first synthetic corpus did not have (issue 10). Tests force a flag by passing
a `Style` to `render`; a corpus draws it from the document's own "style" stream.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

RULES = ("none", "rows", "grid", "frame")  # frame: rules under the header and at total lines only
UNIT_PLACES = (
    "title",
    "line",
    "header",
)  # "合并利润表（单位：元）" / its own line / the header row's first cell


@dataclass(frozen=True)
class Style:
    rules: str = "rows"
    shade: bool = (
        False  # alternate body rows on a grey band (filled rectangles a ruling-line finder must ignore)
    )
    split: bool = (
        False  # long statements run over a page break; the header row is printed on the first page only
    )
    unit_place: str = "title"
    spaced_years: bool = (
        False  # "2024 年6 月15 日": digits set apart from 年/月/日, as many A-share PDFs extract
    )
    notes_before_values: bool = (
        False  # 附注 / 监管标准 cells ("七、43", "≥10.75（注 2）") before the values of a row
    )
    checkboxes: bool = False  # "□是 √否" answers in report notes
    paired: bool = False  # two metrics on one text line (KPI pairs, attendance counts in one sentence)
    dollar_signs: bool = False  # US statements: "$" cells before the first and the total rows' amounts


def draw_style(rng: random.Random, english: bool) -> Style:
    """One document's habits; each difficulty in roughly half the documents (rules spread over four kinds)."""
    return Style(
        rules=rng.choice(RULES),
        shade=rng.random() < 0.3,
        split=rng.random() < 0.5,
        unit_place=rng.choice(UNIT_PLACES),
        spaced_years=not english and rng.random() < 0.4,
        notes_before_values=rng.random() < 0.5,
        checkboxes=not english and rng.random() < 0.6,
        paired=rng.random() < 0.5,
        dollar_signs=english and rng.random() < 0.6,
    )
