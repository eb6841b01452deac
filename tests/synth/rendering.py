"""Render one document with a forced `Style` and read it back as pypdfium2 extracts it (tests of data.synth)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pypdfium2 as pdfium

from data.synth.companies import make_companies
from data.synth.corpus import write_document
from data.synth.fields import US
from data.synth.seeding import rng_for
from data.synth.style import Style
from data.synth.values import a_share_history, us_history

YEAR = 2022
PLAIN = Style()


@dataclass
class Rendered:
    path: Path
    truth: dict[str, dict]  # field -> truth row
    facts: dict
    prior: dict
    texts: list[str]  # page texts as pypdfium2 extracts them

    def row(self, field: str) -> dict:
        return self.truth[field]

    def page(self, field: str) -> str:
        return self.texts[self.truth[field]["page"] - 1]


def squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def page_texts(path: Path) -> list[str]:
    pdf = pdfium.PdfDocument(str(path))
    try:
        return [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    finally:
        pdf.close()


def render(
    tmp_path: Path, doctype: str, style: Style, seed: int = 0, firm_index: int = 0, pages: int = 6
) -> Rendered:
    firms = make_companies(3, 3, rng_for(seed, "companies"))
    us, a_share = [f for f in firms if f.market == "US"], [f for f in firms if f.market != "US"]
    firm = (us if doctype == US else a_share)[firm_index]
    tmp_path.mkdir(parents=True, exist_ok=True)
    history = (us_history if doctype == US else a_share_history)(firm, [YEAR], seed)
    entry, rows, _ = write_document(tmp_path, firm, doctype, YEAR, history, seed, pages, style)
    path = tmp_path / f"{entry['id']}.pdf"
    rendered = Rendered(
        path, {r["field"]: r for r in rows}, history[YEAR], history[YEAR - 1], page_texts(path)
    )
    for row in rows:  # whatever the style, every truth string is on its page
        for s in row["strings"]:
            assert squash(s) in squash(rendered.texts[row["page"] - 1]), (row["field"], s, row["page"])
    return rendered
