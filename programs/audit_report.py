"""One self-contained HTML file that lets a person audit an answer down to the printed page.

The question, the answer (and its coverage line), the code that computed it and its output, the
records table where each value links to its fact's quote, and for each quote the page it stands on,
rendered by pdfium as a base64 PNG with the quote's character boxes drawn over it. No script, no
external file or font: it opens offline, from a mail attachment or an MLflow artifact.

A pure renderer of plain dicts (a fact is {"doc_id", "field", "value", "unit", "quote", "page",
optionally "verdict": {"status", "page", "reason"}}, as Fact.model_dump() plus
factcheck.check.Verdict.to_dict()), so it can be called from programs.ask, evaluate.run or a
notebook alike. The boxes come from pdfium's text page: the quote is located in the page's own text
layer the way the fact check locates it (factcheck.quotes), and pdfium gives the rectangles of
those characters. A quote in the parsed table reading ("2022年 | 资本充足率 | 15.44%") is not one run
of the text layer, so its cells are located and boxed one by one. A page read by OCR has no text layer:
its quote is located in the lines OCR read (`ocr_lookup`, IndexStore.ocr_lines) and boxed from theirs.

The markup is a Jinja2 template, programs/templates/audit_report.html.j2 (package data), rendered with
autoescape on: this module hands it plain strings and numbers, so no value (a question, a record cell or a
quote holding "<script>") can become markup, and the look is edited in one file of HTML and CSS.
"""

from __future__ import annotations

import base64
import io
import logging
import re
import unicodedata
from collections.abc import Callable, Mapping
from pathlib import Path

import pypdfium2 as pdfium
from jinja2 import Environment, PackageLoader, StrictUndefined
from PIL import Image

from factcheck.quotes import fold, fold_with_offsets, locate
from retrievers.catalog_draft.rules_en import read_us_filing
from retrievers.catalog_draft.rules_zh import read_a_share
from retrievers.documents.ocr_lines import OcrLine, quote_rects
from signatures.types import IDENTITY_FIELDS

log = logging.getLogger(__name__)

# Page images at 100 dpi in 16 grays: the quote's digits stay legible and an A4 page is ~70 kB of PNG
# (measured on a synthetic annual report page: full colour 372 kB, 256 grays 117 kB, 16 grays 72 kB).
# The highlight is drawn by the HTML over the image, so the image needs no colour.
RENDER_SCALE = 100 / 72
GRAYS = 16
# The 16 grays are even steps mapped by a lookup table, not a palette PIL's median cut picks per page: PNGs
# of the same size (0.99x) in 14.3 instead of 96.4 CPU ms a 10-K page (bench/audit_report_speed.py); the
# median cut was two thirds of a report's time. Even steps keep pure white and black as printed.
_GRAY_INDEX = [v * GRAYS // 256 for v in range(256)]
_GRAY_PALETTE = [round(i * 255 / (GRAYS - 1)) for i in range(GRAYS) for _ in range(3)]
MIN_PIECE = 2  # folded characters a table cell needs before it is boxed on its own
# A table line's cells are boxed where they stand together: a cell found farther than this (characters
# of the page's text) from the line's rarest cell is some other occurrence (a year in the prose above).
NEAR_CELL = 400
ASCII_WORD = re.compile(r"[0-9A-Za-z]")

PdfLookup = Callable[[str], "str | Path | None"] | Mapping[str, "str | Path"]
OcrLookup = Callable[[str, int], "list[OcrLine]"]  # (doc id, page) -> what OCR read there, [] if not OCR'd

# autoescape: every value is text; StrictUndefined: a name the template expects and is not given fails
TEMPLATES = Environment(
    loader=PackageLoader("programs", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def render_report(
    path: str | Path,
    question: str,
    answer: str,
    code: str = "",
    code_output: str = "",
    records: list[dict] | None = None,
    facts: list[dict] | None = None,
    pdf_lookup: PdfLookup | None = None,
    coverage: str = "",
    title: str = "",
    unit_mismatches: list[dict] | None = None,
    ocr_lookup: OcrLookup | None = None,
) -> Path:
    """Write the report to `path` (one .html file) and return the path. `unit_mismatches` (from the
    answer's coverage) marks the record cells read in other units than the rest of their field."""
    path = Path(path)
    facts = list(facts or [])
    records = list(records or [])
    anchors = {(f.get("doc_id"), f.get("field")): f"q-{i}" for i, f in enumerate(facts, start=1)}
    pages = _PageCache(pdf_lookup, ocr_lookup)
    try:
        names = _document_names(records, facts, pages)
        table = _records_table(records, facts, anchors, names, unit_mismatches or [])
        quotes = [_quote_section(f, anchors[(f.get("doc_id"), f.get("field"))], pages, names) for f in facts]
    finally:
        pages.close()
    document = TEMPLATES.get_template("audit_report.html.j2").render(
        lang="zh" if re.search(r"[\u4e00-\u9fff]", question) else "en",
        page_title=title or question[:80],
        title=title or "Audit report",
        question=question,
        answer=answer,
        coverage=coverage,
        code=code or "(no code)",
        code_output=code_output or "(no output)",
        table=table,
        quotes=quotes,
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document, encoding="utf-8")
    return path


def _text(value) -> str:
    return "" if value is None else str(value)


NUMBER = re.compile(r"-?\d+(\.\d+)?")


def as_printed(value) -> str:
    """A value the way a filing prints it: 496571000.0 -> 496,571,000; 15.880 -> 15.88; text unchanged."""
    if isinstance(value, bool) or value is None:
        return "" if value is None else str(value)
    if isinstance(value, str):
        if not NUMBER.fullmatch(value.strip()):
            return value
        value = float(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return str(value)
        if value.is_integer() and abs(value) < 1e18:
            value = int(value)
        else:  # the shortest digits that read back as the value: 55,783,534,981.8, not ...981.800003
            shortest = f"{value:,}"
            return shortest if "e" not in shortest else f"{value:,.2f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _document_names(records: list[dict], facts: list[dict], pages: _PageCache) -> dict[str, str]:
    """doc_id -> "Company (SYMBOL, 2022)": the symbol and year from the records, the company from the
    record when it has one, else as the filing's cover prints it (the catalog drafter's rules)."""
    names = {}
    by_id = {str(r.get("id", r.get("doc_id"))): r for r in records}
    for doc_id in dict.fromkeys([*by_id, *(str(f.get("doc_id")) for f in facts)]):
        record = by_id.get(doc_id, {})
        company = record.get("company") or pages.company(doc_id)
        tags = ", ".join(str(record[k]) for k in ("symbol", "year") if record.get(k) not in (None, ""))
        if company and tags:
            names[doc_id] = f"{company} ({tags})"
        elif company or tags:
            names[doc_id] = str(company or tags)
        else:
            names[doc_id] = doc_id
    return names


def _status(fact: dict) -> tuple[str, str, int | None]:
    """(status, reason, page the quote is on) of a fact, from its verdict when it has one."""
    verdict = fact.get("verdict")
    if isinstance(verdict, Mapping):
        return (
            str(verdict.get("status") or "unchecked"),
            str(verdict.get("reason") or ""),
            verdict.get("page"),
        )
    if isinstance(verdict, str):
        return verdict, "", fact.get("page")
    return "unchecked", "", fact.get("page")


def _records_table(
    records: list[dict], facts: list[dict], anchors: dict, names: dict[str, str], unit_mismatches: list[dict]
) -> dict | None:
    """The records table's columns and cells (None: no records): each cell its text as printed, whether it
    is a number, its fact's quote anchor and check status, and why its units differ from its field's."""
    if not records:
        return None
    by_key = {(f.get("doc_id"), f.get("field")): f for f in facts}
    off_unit = {
        (doc_id, m["field"]): f"~{round(m['ratio']):,}x {m['side']} the other {m['others']}"
        for m in unit_mismatches
        for doc_id in m.get("doc_ids", [])
    }
    columns: list[str] = ["document"]
    for record in records:
        columns += [c for c in record if c not in columns]
    rows = []
    for record in records:
        cells = []
        doc_id = record.get("id", record.get("doc_id"))
        for column in columns:
            value = names.get(str(doc_id), "") if column == "document" else record.get(column)
            fact = by_key.get((doc_id, column))
            cells.append(
                {
                    "text": _text(value if column in IDENTITY_FIELDS else as_printed(value)),
                    "num": isinstance(value, (int, float)) and not isinstance(value, bool),
                    "anchor": anchors[(doc_id, column)] if fact is not None else None,
                    "status": _status(fact)[0] if fact is not None else None,
                    "units": off_unit.get((doc_id, column)),
                }
            )
        rows.append(cells)
    return {"columns": columns, "rows": rows}


def _quote_section(fact: dict, anchor: str, pages: _PageCache, names: dict[str, str]) -> dict:
    """One quote's section: the fact, its check, its scale and the page it stands on with the quote boxed."""
    status, reason, page = _status(fact)
    doc_id, quote = fact.get("doc_id"), fact.get("quote") or ""
    page = page or fact.get("page")
    scale_line = None
    if fact.get("scale_source"):  # the amount's scale and where it was read, or why it could not be
        scale = fact.get("scale")
        said = f"scale x{scale:,.0f}: " if isinstance(scale, (int, float)) and scale != 1 else "scale: "
        scale_line = said + str(fact["scale_source"])
    return {
        "anchor": anchor,
        "doc_id": _text(doc_id),
        "name": _text(names.get(str(doc_id), doc_id)),
        "field": _text(fact.get("field")),
        "value": as_printed(fact.get("value")),
        "unit": f" {fact['unit']}" if fact.get("unit") else "",
        "page": page if page else "?",
        "status": status,
        "quote": quote,
        "reason": reason,
        "scale": scale_line,
        "figure": pages.figure(str(doc_id), int(page), quote) if quote and page and doc_id else None,
    }


class _PageCache:
    """Open PDFs and rendered page PNGs, reused across the quotes of one report."""

    def __init__(self, lookup: PdfLookup | None, ocr_lookup: OcrLookup | None = None):
        self.lookup, self.ocr_lookup = lookup, ocr_lookup
        self.pdfs: dict[str, pdfium.PdfDocument | None] = {}
        self.images: dict[tuple[str, int], tuple[str, float, float]] = {}

    def _pdf(self, doc_id: str) -> pdfium.PdfDocument | None:
        if doc_id not in self.pdfs:
            where = None
            if callable(self.lookup):
                where = self.lookup(doc_id)
            elif self.lookup is not None:
                where = self.lookup.get(doc_id)
            try:
                self.pdfs[doc_id] = (
                    pdfium.PdfDocument(str(where)) if where and Path(where).is_file() else None
                )
            except pdfium.PdfiumError as exc:
                log.warning("cannot open %s for the report: %s", where, exc)
                self.pdfs[doc_id] = None
        return self.pdfs[doc_id]

    def company(self, doc_id: str) -> str | None:
        """The company as the filing's first page names it (None when no rule reads it there)."""
        pdf = self._pdf(doc_id)
        if pdf is None or len(pdf) == 0:
            return None
        page = pdf[0]
        try:
            textpage = page.get_textpage()
            text = unicodedata.normalize("NFKC", textpage.get_text_range())
            textpage.close()
        finally:
            page.close()
        han = len(re.findall(r"[\u4e00-\u9fff]", text))
        found = (read_a_share if han > len(text) * 0.05 else read_us_filing)(text).get("company")
        return str(found.value) if found else None

    def figure(self, doc_id: str, number: int, quote: str) -> dict:
        """The page as a PNG (base64) with the quote's boxes in image pixels, or {"missing": why not}."""
        pdf = self._pdf(doc_id)
        if pdf is None:
            return {"missing": f"(page image unavailable: no PDF found for {doc_id})"}
        if not 1 <= number <= len(pdf):
            return {"missing": f"(page {number} is outside the document's {len(pdf)} pages)"}
        page = pdf[number - 1]
        try:
            key = (doc_id, number)
            if key not in self.images:
                image = in_grays(page.render(scale=RENDER_SCALE, grayscale=True).to_pil())
                buffer = io.BytesIO()
                image.save(buffer, format="PNG")
                self.images[key] = (
                    base64.b64encode(buffer.getvalue()).decode("ascii"),
                    image.width,
                    image.height,
                )
            data, width, height = self.images[key]
            boxes = quote_boxes(page, quote)
            if not boxes and self.ocr_lookup is not None:  # a page read by OCR: no text layer to box from
                boxes = ocr_quote_boxes(self.ocr_lookup(doc_id, number), quote, page.get_height())
        finally:
            page.close()
        return {"number": number, "width": width, "height": height, "data": data, "boxes": boxes}

    def close(self) -> None:
        for pdf in self.pdfs.values():
            if pdf is not None:
                pdf.close()


def in_grays(image: Image.Image) -> Image.Image:
    """A grayscale page image as a palette image of GRAYS even grays (a small PNG)."""
    indexed = Image.frombytes("P", image.size, image.convert("L").point(_GRAY_INDEX).tobytes())
    indexed.putpalette(_GRAY_PALETTE)
    return indexed


def quote_boxes(page, quote: str, scale: float = RENDER_SCALE) -> list[tuple[float, float, float, float]]:
    """Boxes (left, top, width, height in image pixels) of the quote's characters on a pdfium page.

    Only where the quote stands as whole tokens: '3,916' is not boxed inside '323,916'. A table line
    as parsed ("2022年 | 资本充足率 | 15.44%") is not one run of the text layer: its cells are boxed one
    by one, each where it stands nearest the line's rarest cell."""
    textpage = page.get_textpage()
    try:
        text = textpage.get_text_range()
        if len(text) != textpage.count_chars():
            return []  # pdfium's text and its character indices disagree: no reliable boxes
        whole = token_spans(quote, text)
        spans = whole[:1] or table_cells(quote, text)
        # The image shows the crop box; characters stand in page space. Verizon's 2022 10-K crops 9 pt off
        # every side: measured from the page's height, each box sat 9 pt (about a row) too high.
        crop_left, _, _, crop_top = page.get_cropbox()
        boxes = []
        for start, end in spans:
            for i in range(textpage.count_rects(start, end - start)):
                left, bottom, right, top = textpage.get_rect(i)
                boxes.append(
                    (
                        (left - crop_left) * scale,
                        (crop_top - top) * scale,
                        (right - left) * scale,
                        (top - bottom) * scale,
                    )
                )
        return boxes
    finally:
        textpage.close()


def token_spans(piece: str, text: str) -> list[tuple[int, int]]:
    """Every (start, end) where `piece` stands in `text` as whole tokens (folded as the fact check folds),
    in order of position; where it occurs nowhere exactly, the fact check's fuzzy match, if any."""
    needle = fold(piece)
    hay, where = fold_with_offsets(text)
    if not needle or not hay:
        return []
    spans, at = [], hay.find(needle)
    while at >= 0:
        start, end = where[at], where[at + len(needle) - 1] + 1
        if _stands_alone(text, start, end):
            spans.append((start, end))
        at = hay.find(needle, at + 1)
    if spans or needle in hay:
        return spans
    fuzzy = locate(piece, text)
    return [(fuzzy.start, fuzzy.end)] if fuzzy is not None else []


def _stands_alone(text: str, start: int, end: int) -> bool:
    """No letter or digit of the same word, and no digit group of the same number, just outside the span."""
    first, last = text[start], text[end - 1]
    before, after = text[start - 1] if start else "", text[end] if end < len(text) else ""
    if ASCII_WORD.match(first) and ASCII_WORD.match(before or " "):
        return False
    if ASCII_WORD.match(last) and ASCII_WORD.match(after or " "):
        return False
    if first.isdigit() and before in ",." and start >= 2 and text[start - 2].isdigit():
        return False  # '916' after '323,'
    return not (last.isdigit() and after in ",." and end + 1 < len(text) and text[end + 1].isdigit())


def table_cells(quote: str, text: str) -> list[tuple[int, int]]:
    """The cells of a table line, each at its occurrence nearest the rarest cell's (within NEAR_CELL)."""
    found = [
        spans
        for piece in re.split(r"\s*\|\s*|\s{2,}|\n", quote)
        if len(fold(piece)) >= MIN_PIECE and (spans := token_spans(piece, text))
    ]
    if not found:
        return []
    # The rarest cell, and of those the longest (the value, usually): pdfium may give a table column by
    # column, so a row's label can stand farther from its column's header than the prose above does.
    anchor = min(found, key=lambda spans: (len(spans), -(spans[0][1] - spans[0][0])))[0][0]
    cells = []
    for spans in found:
        start, end = min(spans, key=lambda s: abs(s[0] - anchor))
        if abs(start - anchor) <= NEAR_CELL:
            cells.append((start, end))
    return cells


def ocr_quote_boxes(
    lines: list[OcrLine], quote: str, height: float, scale: float = RENDER_SCALE
) -> list[tuple[float, float, float, float]]:
    """Boxes (left, top, width, height in image pixels) of the quote on a page read by OCR, from its lines."""
    return [
        (left * scale, (height - top) * scale, (right - left) * scale, (top - bottom) * scale)
        for left, bottom, right, top in quote_rects(lines, quote)
    ]


def report_facts(facts: list[dict]) -> list[dict]:
    """Facts as the program returns them (Fact.model_dump(): verdict and verdict_reason flat) in the
    renderer's shape (verdict as {status, page, reason})."""
    shaped = []
    for f in facts:
        status = f.get("verdict") if isinstance(f.get("verdict"), str) else None
        verdict = {
            "status": status or "unchecked",
            "page": f.get("page"),
            "reason": f.get("verdict_reason") or "",
        }
        shaped.append({**f, "verdict": verdict} if not isinstance(f.get("verdict"), Mapping) else f)
    return shaped


def write_program_report(
    path: str | Path,
    question: str,
    outputs: Mapping,
    pdf_lookup: PdfLookup | None,
    ocr_lookup: OcrLookup | None = None,
) -> Path:
    """The report of one answered question, from the program's outputs as plain data (the keys of
    collate ask --json, or of evaluate.runs.answering.Answered): answer, coverage_line, coverage, code,
    result, records, facts."""
    return render_report(
        path,
        question,
        str(outputs.get("answer") or ""),
        code=str(outputs.get("code") or ""),
        code_output=str(outputs.get("result") or ""),
        records=list(outputs.get("records") or []),
        facts=report_facts([f for f in outputs.get("facts") or [] if f.get("disclosed", True)]),
        pdf_lookup=pdf_lookup,
        coverage=str(outputs.get("coverage_line") or ""),
        unit_mismatches=list((outputs.get("coverage") or {}).get("unit_mismatches") or []),
        ocr_lookup=ocr_lookup,
    )
