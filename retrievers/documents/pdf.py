"""Parse a PDF into pages of text blocks: lines rebuilt from positions, ruled tables kept with their headers.

pypdfium2 gives the text runs ("rects") with their boxes, 10x+ faster than pdfplumber. We rebuild lines
from the boxes ourselves because a PDF that writes a table column by column comes out of pdfium's own
reading order as one column after another, which separates every value from its row label. Ruled
tables (a grid of lines) are found from pdfium's path objects too (retrievers/ruling.py); pdfplumber,
which read them before, is no longer needed to parse.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from retrievers.documents.ruling import SNAP, grid_tables, may_hold_grid, page_shapes

log = logging.getLogger(__name__)

# Bump when parsing output changes: the build cache then re-parses every document.
PARSER_VERSION = 5
# Header/footer detection: the first/last N lines of a page, repeating on at least this share of pages.
RUNNING_EDGE, RUNNING_SHARE = 2, 0.5
# Runs whose boxes overlap vertically by more than this share of the smaller height sit on one line.
SAME_LINE_TOLERANCE = 0.5
# Dot leaders between a row label and its value ("Cash ........ $ 876,560"): each dot is a word piece
# for MiniLM and a character of the chunk budget, and says nothing.
_LEADER = re.compile(r"(?:\s?\.){4,}")


class ParseError(Exception):
    """A document that cannot be read at all; `kind` names what happened and `fix` what to do."""

    def __init__(self, kind: str, message: str, fix: str):
        super().__init__(f"{kind}: {message}. Fix: {fix}")
        self.kind, self.message, self.fix = kind, message, fix


@dataclass
class Block:
    """A run of lines on one page: prose (`kind="text"`) or one table rendered cell by cell."""

    kind: str
    lines: list[str]
    header: str = ""  # a table's column headers, joined; empty for text


@dataclass
class Page:
    number: int  # 1-based
    blocks: list[Block] = field(default_factory=list)
    scanned: bool = False  # an image and no text layer, not read (no OCR asked, or OCR found no text)
    ocr: bool = False  # an image and no text layer, its text read by OCR (retrievers.documents.ocr)

    @property
    def text(self) -> str:
        return "\n".join(line for block in self.blocks for line in block.lines)


@dataclass
class ParsedDocument:
    pages: list[Page]
    warnings: list[str] = field(default_factory=list)

    @property
    def scanned_pages(self) -> list[int]:
        return [p.number for p in self.pages if p.scanned]

    @property
    def ocr_pages(self) -> list[int]:
        return [p.number for p in self.pages if p.ocr]

    @property
    def text_pages(self) -> int:
        return sum(1 for p in self.pages if p.blocks)


def parse_pdf(path: str | Path, ocr: Callable | None = None) -> ParsedDocument:
    """Read every page; raise ParseError when the document as a whole yields no text.

    ocr(pdfium page, page number) -> lines, each with .text and a box (.left .bottom .right .top in page
    points; retrievers.ocr_cache.PageOcr), reads the pages that are only images; without it they stay
    unread (`scanned`).
    """
    path = Path(path)
    if not path.is_file():
        raise ParseError("missing", f"no file at {path}", "put the PDF there or give its path in the catalog")
    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        raise _load_error(path, exc) from exc
    try:
        pages = [_parse_page(pdf, i, ocr) for i in range(len(pdf))]
    finally:
        pdf.close()
    _drop_running_lines(pages)
    doc = ParsedDocument(pages=pages)
    if doc.text_pages == 0:
        if doc.scanned_pages:
            raise ParseError(
                "scanned",
                f"all {len(pages)} pages are images without a text layer"
                + (", and OCR found no text on them" if ocr else ""),
                "check the scan is legible (OCR found nothing), or read it with another OCR tool (e.g. "
                "ocrmypdf), and rebuild"
                if ocr
                else "build with --ocr auto (pip install rapidocr-onnxruntime), or run OCR (e.g. ocrmypdf) "
                "on the file, and rebuild",
            )
        raise ParseError(
            "empty", f"none of the {len(pages)} pages holds text", "check the file is the right one"
        )
    if doc.scanned_pages:
        doc.warnings.append(
            f"{len(doc.scanned_pages)} scanned page(s) without text: {doc.scanned_pages[:10]}"
        )
    return doc


def parse_first_pages(path: str | Path, count: int) -> list[Page]:
    """The first `count` pages, parsed like parse_pdf's but with running lines kept: a cover's title
    ("璟丰商行 2021年年度报告 证券代码：000803") is often also the running header, and a reader of a
    document's identity (retrievers.catalog_draft.draft) needs it. Raises ParseError when the file cannot be opened."""
    path = Path(path)
    if not path.is_file():
        raise ParseError("missing", f"no file at {path}", "put the PDF there or give its path in the catalog")
    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as exc:
        raise _load_error(path, exc) from exc
    try:
        return [_parse_page(pdf, i) for i in range(min(count, len(pdf)))]
    finally:
        pdf.close()


def _running_key(line: str) -> str:
    """Digits as "#", a page number before or after words dropped: "38 Verizon 2022 Annual Report" on even
    pages and "Verizon 2022 Annual Report 39" on odd ones are one running line (each is on half the pages)."""
    tokens = re.sub(r"\d+", "#", line).split()
    if any(ch.isalpha() for ch in line):  # a bare number ("38", "2022 2021") keeps its shape
        while tokens and tokens[0] == "#":
            tokens.pop(0)
        while tokens and tokens[-1] == "#":
            tokens.pop()
    return " ".join(tokens)


def _drop_running_lines(pages: list[Page]) -> None:
    """Remove page headers and footers: edge lines that repeat (digits aside) on most pages.

    They carry no facts, and in every chunk they would make each query term of the report title
    ("社会责任", "Form 10-K") match everywhere. A page whose only text is such lines keeps them: on a
    statement whose every page is one templated line that line is the content, and removing it lost
    the whole document ("none of the pages holds text"). (PARSER_VERSION is not bumped: documents that
    failed so have no index and are retried by every build; elsewhere only a divider page's header
    comes back.)
    """
    texts = [p for p in pages if p.blocks]
    if len(texts) < 3:
        return
    edges = []
    for page in texts:
        lines = [line for b in page.blocks if b.kind == "text" for line in b.lines]
        edges.append({_running_key(x) for x in lines[:RUNNING_EDGE] + lines[-RUNNING_EDGE:]})
    counts = Counter(key for keys in edges for key in keys)
    running = {k for k, n in counts.items() if n >= max(3, RUNNING_SHARE * len(texts))}
    if not running:
        return
    for page, keys in zip(texts, edges, strict=True):
        drop = keys & running
        kept = [
            [x for x in b.lines if _running_key(x) not in drop] if b.kind == "text" else b.lines
            for b in page.blocks
        ]
        if not any(kept):
            continue  # the running lines are all this page says: they stay
        for block, lines in zip(page.blocks, kept, strict=True):
            block.lines = lines
        page.blocks = [b for b in page.blocks if b.lines]


def _has_encrypt(path: Path) -> bool:
    """Does the file hold an /Encrypt dictionary (every encrypted PDF's trailer names one)?"""
    try:
        return b"/Encrypt" in path.read_bytes()
    except OSError:
        return True  # cannot tell: keep pdfium's word


def _load_error(path: Path, exc: pdfium.PdfiumError) -> ParseError:
    code = getattr(exc, "err_code", None)
    if code in (pdfium_c.FPDF_ERR_PASSWORD, pdfium_c.FPDF_ERR_SECURITY) and not _has_encrypt(path):
        # pdfium refuses a PDF with no pages without setting its (process-wide) last error: the code is
        # then whatever failed before, e.g. an encrypted file drafted just before it
        code = pdfium_c.FPDF_ERR_SUCCESS
    if code == pdfium_c.FPDF_ERR_PASSWORD:
        return ParseError(
            "encrypted", "the PDF needs a password", "supply a decrypted copy (e.g. qpdf --decrypt)"
        )
    if code == pdfium_c.FPDF_ERR_SUCCESS:  # opened fine but has no page
        return ParseError("empty", "the PDF has no pages", "check the file is the right one")
    if code == pdfium_c.FPDF_ERR_SECURITY:
        return ParseError("encrypted", "unsupported security handler", "supply a decrypted copy")
    return ParseError(
        "corrupt",
        f"cannot be read as PDF, the file is damaged or cut short ({exc})",
        f"re-download the file, or repair it with `qpdf {path.name} repaired.pdf` and index the repaired copy",
    )


def _parse_page(pdf, index: int, ocr: Callable | None = None) -> Page:
    page = pdf[index]
    textpage = page.get_textpage()
    read_by_ocr = False
    try:
        height = page.get_height()
        shapes = page_shapes(page)
        runs = _text_runs(textpage)
        if not runs and shapes.images > 0 and ocr is not None:
            runs = _ocr_runs(ocr(page, index + 1))
            read_by_ocr = bool(runs)
        tables = []
        if runs and not read_by_ocr and may_hold_grid(shapes):
            try:
                tables = [
                    (bbox, rows)
                    for bbox, rows in grid_tables(shapes, textpage, height)
                    if _useful(rows) and _holds_its_text(runs, bbox, height)
                ]
            except Exception as exc:  # a table pass that fails still leaves the page's text
                log.warning("table detection failed on page %d: %s", index + 1, exc)
    finally:
        textpage.close()
        page.close()
    result = Page(number=index + 1, ocr=read_by_ocr)
    if not runs:
        result.scanned = shapes.images > 0
        return result
    result.blocks = _blocks(runs, tables, height)
    return result


def _ocr_runs(lines) -> list[tuple[float, float, float, float, str]]:
    """OCR'd lines as text runs (the boxes are in page points already): lines and chunks come out as
    from a text layer, without ruled tables (the grid of a scan is pixels, not paths)."""
    runs = []
    for line in lines:
        text = _LEADER.sub(" ", line.text).strip()
        if text:
            runs.append((line.left, line.bottom, line.right, line.top, text))
    return runs


def _text_runs(textpage) -> list[tuple[float, float, float, float, str]]:
    """pdfium's own text lines, each with its loose box: (left, bottom, right, top, text).

    pdfium orders ordinary prose well and knows its spacing; what it gets wrong is a table written
    column by column, where each cell comes out as its own line. Keeping each pdfium line with its
    position lets `_lines` put cells that share a baseline back on one row.
    """
    count = textpage.count_chars()
    if count <= 0:
        return []
    text = textpage.get_text_range().replace("\x02", "-")  # pdfium's mark for a hyphen at a line break
    if len(text) != count:  # rare: pdfium dropped or inserted chars; rebuild index-aligned text
        text = "".join(chr(pdfium_c.FPDFText_GetUnicode(textpage, i) or 32) for i in range(count))
    runs, pos = [], 0
    for segment in re.split(r"(\r\n|\n|\r)", text):
        if segment in ("\r\n", "\n", "\r"):
            pos += len(segment)
            continue
        stripped = _LEADER.sub(" ", segment).strip()
        if stripped:
            first = pos + len(segment) - len(segment.lstrip())
            last = pos + len(segment.rstrip()) - 1
            try:
                left, bottom, _r, top = textpage.get_charbox(first, loose=True)
                _l, bottom2, right, top2 = textpage.get_charbox(last, loose=True)
            except pdfium.PdfiumError:
                left = bottom = right = top = bottom2 = top2 = 0.0
            runs.append((left, min(bottom, bottom2), right, max(top, top2), stripped))
        pos += len(segment)
    return runs


def _lines(runs) -> list[tuple[float, str]]:
    """Group runs into visual lines (top to bottom), each ordered left to right: (line top, text)."""
    ordered = sorted(runs, key=lambda r: -(r[1] + r[3]) / 2)
    lines: list[list] = []
    for run in ordered:
        if lines:
            last = lines[-1]
            overlap = min(last[1], run[3]) - max(last[0], run[1])
            if overlap > SAME_LINE_TOLERANCE * min(run[3] - run[1], last[1] - last[0]):
                last[2].append(run)
                continue
        lines.append([run[1], run[3], [run]])
    out = []
    for _bottom, top, members in lines:
        members.sort(key=lambda r: r[0])
        out.append((top, " ".join(m[4] for m in members)))
    return out


def _useful(rows) -> bool:
    cells = [c for row in rows for c in row if c and c.strip()]
    return len(rows) >= 2 and len(cells) >= 3


def _inside(run, bbox, height) -> bool:
    x0, top, x1, bottom = bbox  # origin top-left
    cx, cy = (run[0] + run[2]) / 2, height - (run[1] + run[3]) / 2
    return x0 <= cx <= x1 and top <= cy <= bottom


def _holds_its_text(runs, bbox, height) -> bool:
    """No text line runs out of the grid: rules that cut through text (a partly ruled layout, rules
    under a header only) are not a table's cells, and reading them as cells would cut words."""
    x0, top, x1, bottom = bbox
    for run in runs:
        left, right, middle = run[0], run[2], height - (run[1] + run[3]) / 2
        if top <= middle <= bottom and right > x0 and left < x1 and (left < x0 - SNAP or right > x1 + SNAP):
            return False
    return True


def _blocks(runs, tables, height) -> list[Block]:
    """Text lines and rendered tables in reading order (top to bottom)."""
    free = [r for r in runs if not any(_inside(r, bbox, height) for bbox, _ in tables)]
    items: list[tuple[float, str, object]] = [(top, "line", text) for top, text in _lines(free)]
    items += [(height - bbox[1], "table", rows) for bbox, rows in tables]
    items.sort(key=lambda item: -item[0])
    blocks: list[Block] = []
    for _top, _kind, payload in items:
        if not isinstance(payload, str):  # a table's rows
            header, lines = render_table(payload)  # type: ignore[arg-type]  # rows as pdfplumber gives them
            blocks.append(Block("table", lines, header=header))
        elif blocks and blocks[-1].kind == "text":
            blocks[-1].lines.append(payload)
        else:
            blocks.append(Block("text", [payload]))
    return blocks


def _cell(value) -> str:
    """A cell's wrapped lines joined: no space between two Chinese characters, one elsewhere."""
    if value is None:
        return ""
    text = ""
    for part in str(value).replace("\x02", "-").split():
        if text and not (is_han(text[-1]) and is_han(part[0])):
            text += " "
        text += part
    return text


def is_han(ch: str) -> bool:
    """A Chinese character or full-width punctuation: two of them join without a space when a line wraps."""
    return "\u3400" <= ch <= "\u9fff" or "\uf900" <= ch <= "\ufaff" or ch in "，。、；：（）％"


def render_table(rows: list[list[str | None]]) -> tuple[str, list[str]]:
    """One line per value with its column header and row label: "2022年 | 资本充足率 | 15.44%".

    The first row is taken as the header and the first column as the row label. A header cell
    that is empty (a merged cell) inherits the one to its left, so no value loses its column.
    """
    clean = [[_cell(c) for c in row] for row in rows]
    width = max(len(r) for r in clean)
    clean = [r + [""] * (width - len(r)) for r in clean]
    header = clean[0]
    for j in range(1, width):
        header[j] = header[j] or header[j - 1]
    lines = []
    for row in clean[1:]:
        label = row[0]
        values = [(header[j], row[j]) for j in range(1, width) if row[j]]
        if not values:
            if label:
                lines.append(label)  # a sub-heading row inside the table
            continue
        for head, value in values:
            lines.append(" | ".join(part for part in (head, label, value) if part))
    return " | ".join(h for h in header if h), lines
