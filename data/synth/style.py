"""How one document is typeset: the layout habits real filings differ in, drawn once per document.

Real filings are consistent within a document and differ between issuers: one rules every row, another
only the header and total lines, a third draws a full grid; one prints the unit in the statement title,
another on its own line, a third in the header row. Each flag here is a difficulty seen in real SEC and
A-share filings that the first synthetic corpus did not have (issue 10). Tests force a flag by passing
a `Style` to `render`; a corpus draws it from the document's own "style" stream.

Three asked fields are printed in one of several ways real announcements and ESG reports print them
(issue 23): the dividend record date, the meeting attendance counts, GRI adoption (and the checkbox
form of the compilation questions). The ways come in two families. "dev" is the default corpus, the one
retrieval is measured and tuned on; "heldout" (`python -m data.synth --styles heldout`) draws only ways
dev never prints, with other labels (权益登记日, 股东及股东授权委托代表, GSSB/GRI Standards) and other
shapes (a section of its own, a transposed table, a report-information table, a multi-choice checkbox
list), so recall can be measured on layouts the retrieval code was not tuned to.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

RULES = ("none", "rows", "grid", "frame")  # frame: rules under the header and at total lines only
FAMILIES = ("dev", "heldout")
# Each way is one real-world printing (the layout modules say which filings print it so).
RECORD_DATE_WAYS = {
    "dev": ("sse_table", "szse_prose", "event_list", "ah_share_table"),
    "heldout": ("equity_section", "a_share_bullets", "schedule_table"),
}
ATTENDANCE_WAYS = {
    "dev": ("sse_table", "sentence", "column_table"),
    "heldout": ("szse_overall", "proxies_sentence", "transposed_table"),
}
GRI_WAYS = {"dev": ("basis_prose", "standards_list"), "heldout": ("info_table", "gssb_prose")}
BOX_FORMS = {"dev": ("colon",), "heldout": ("spaced", "multi_choice")}
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
    paired: bool = False  # two KPIs on one text line in ESG reports
    dollar_signs: bool = False  # US statements: "$" cells before the first and the total rows' amounts
    record_date: str = "sse_table"  # how a dividend notice prints its dates (RECORD_DATE_WAYS)
    attendance: str = "sse_table"  # how a meeting notice prints its attendance (ATTENDANCE_WAYS)
    gri: str = "basis_prose"  # how an ESG report states the standards it follows (GRI_WAYS)
    box_form: str = "colon"  # how checkboxes answer the compilation questions (BOX_FORMS)


def draw_style(rng: random.Random, english: bool, family: str = "dev") -> Style:
    """One document's habits; each difficulty in roughly half the documents (rules spread over four kinds).

    The ways of `family` are drawn last, so the flags above them stay what they were for the same stream.
    """
    if family not in FAMILIES:
        raise ValueError(f"unknown style family {family!r}: use one of {', '.join(FAMILIES)}")
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
        record_date=rng.choice(RECORD_DATE_WAYS[family]),
        attendance=rng.choice(ATTENDANCE_WAYS[family]),
        gri=rng.choice(GRI_WAYS[family]),
        box_form=rng.choice(BOX_FORMS[family]),
    )
