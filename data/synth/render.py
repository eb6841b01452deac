"""One document: choose its font and page budget, run its doctype's layout, return pages and truth."""

from __future__ import annotations

import logging
import os
import random

from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.cidfonts import UnicodeCIDFont
from reportlab.pdfbase.ttfonts import TTFont

from .fields import ANNUAL, DIVIDEND, ESG, MEETING, US
from .filler import Filler
from .layout_annual import write_annual
from .layout_dividend import write_dividend
from .layout_esg import write_esg
from .layout_meeting import write_meeting
from .layout_us import write_us
from .page import DocSpec, Page
from .writer import DocWriter, TruthHit

log = logging.getLogger(__name__)
CJK_TTF = "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc"
CJK_TTF_NAME, CJK_CID_NAME = "WenQuanYiZenHei", "STSong-Light"
# Realistic page budgets per doctype when --pages is not given (announcements are short, reports long).
DEFAULT_PAGES = {US: (28, 44), ANNUAL: (28, 44), ESG: (14, 24), DIVIDEND: (10, 13), MEETING: (10, 14)}
# One layout per doctype; each imports only shared helpers (page, writer, fmt), never this module.
LAYOUTS = {
    US: write_us,
    ANNUAL: write_annual,
    ESG: write_esg,
    DIVIDEND: write_dividend,
    MEETING: write_meeting,
}
_registered: set[str] = set()


def cjk_fonts() -> list[str]:
    """Embedded TrueType when the machine has it, reportlab's built-in CID font always."""
    if CJK_CID_NAME not in _registered:
        pdfmetrics.registerFont(UnicodeCIDFont(CJK_CID_NAME))
        _registered.add(CJK_CID_NAME)
    if CJK_TTF_NAME not in _registered and os.path.exists(CJK_TTF):
        try:
            pdfmetrics.registerFont(TTFont(CJK_TTF_NAME, CJK_TTF, subfontIndex=0))
            _registered.add(CJK_TTF_NAME)
        except Exception as exc:  # a broken font file must not stop the corpus
            log.warning("cannot load %s (%s); using %s only", CJK_TTF, exc, CJK_CID_NAME)
    return [name for name in (CJK_TTF_NAME, CJK_CID_NAME) if name in _registered]


def page_budget(doctype: str, pages: int | None, rng: random.Random) -> int:
    if pages is not None:
        return pages
    low, high = DEFAULT_PAGES[doctype]
    return rng.randint(low, high)


def render(spec: DocSpec, path: str) -> tuple[int, dict[str, TruthHit]]:
    rng = spec.rng
    c = spec.company
    if spec.doctype == US:
        font, bold = rng.choice([("Helvetica", "Helvetica-Bold"), ("Times-Roman", "Times-Bold")])
        header = (c.name, f"Form 10-K  Fiscal {spec.year}")
        footer = rng.choice([lambda n: str(n), lambda n: f"Page {n}"])
    else:
        # Draw between both kinds even when the TTF is missing, so the rest of the layout stays the same.
        wanted = rng.choice([CJK_TTF_NAME, CJK_CID_NAME])
        font = bold = wanted if wanted in cjk_fonts() else CJK_CID_NAME
        header = (f"{c.short_name}  {spec.year}{_title(spec.doctype)}", f"证券代码：{c.symbol}")
        footer = rng.choice([lambda n: f"第 {n} 页", lambda n: f"- {n} -", lambda n: str(n)])
    st = spec.style
    writer = DocWriter(
        path,
        font,
        bold,
        header,
        footer,
        size=rng.choice([9.5, 10.0, 10.5]),
        rules=st.rules,
        shade=st.shade,
        spaced_years=st.spaced_years,
    )
    page = Page(writer, spec, Filler(rng, "en" if spec.doctype == US else "zh"))
    LAYOUTS[spec.doctype](page)
    writer.fill_until(spec.pages, page.fill)
    return writer.save(), writer.truth


def _title(doctype: str) -> str:
    return {
        ANNUAL: "年年度报告",
        ESG: "年度社会责任（ESG）报告",
        DIVIDEND: "年度权益分派相关公告",
        MEETING: "年股东大会相关公告",
    }[doctype]
