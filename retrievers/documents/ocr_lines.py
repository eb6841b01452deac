"""Text lines read by OCR, with their boxes in page coordinates, and where a quote sits among them.

An OCR engine returns boxes of text (a line of prose, or one cell of a table row) in image pixels;
retrievers.documents.ocr turns them into page coordinates (points, origin bottom-left: pdfium's text-layer
system), so an OCR'd page is parsed (retrievers.documents.pdf) and drawn over (programs.audit_report) like a page
with a text layer. Plain data, no OCR engine: the audit report reads these from the index, where a
built document keeps them in one file (DOCUMENT_FILE).
"""

from __future__ import annotations

import json
import re
from dataclasses import astuple, dataclass
from pathlib import Path

from factcheck.quotes import fold, locate

# Boxes whose vertical overlap exceeds this share of the smaller height sit on one visual row: the rule
# retrievers.documents.pdf applies to text-layer runs (SAME_LINE_TOLERANCE), so a quote is searched in the order the
# parsed page reads.
SAME_ROW = 0.5
MIN_PIECE = 2  # folded characters a table cell needs before it is located on its own


@dataclass(frozen=True)
class OcrLine:
    text: str
    left: float
    bottom: float
    right: float
    top: float
    score: float = 1.0  # the engine's confidence, 0..1

    def to_list(self) -> list:
        return [self.text, *(round(v, 2) for v in astuple(self)[1:5]), round(self.score, 3)]

    @classmethod
    def from_list(cls, row: list) -> OcrLine:
        left, bottom, right, top = (float(v) for v in row[1:5])
        return cls(str(row[0]), left, bottom, right, top, float(row[5]) if len(row) > 5 else 1.0)


def rows(lines: list[OcrLine]) -> list[list[OcrLine]]:
    """Lines grouped into visual rows, top to bottom, each left to right."""
    grouped: list[list] = []  # [bottom, top, members]
    for line in sorted(lines, key=lambda x: -(x.bottom + x.top) / 2):
        if grouped:
            last = grouped[-1]
            overlap = min(last[1], line.top) - max(last[0], line.bottom)
            if overlap > SAME_ROW * min(line.top - line.bottom, last[1] - last[0]):
                last[2].append(line)
                continue
        grouped.append([line.bottom, line.top, [line]])
    return [sorted(members, key=lambda x: x.left) for _b, _t, members in grouped]


def quote_rects(lines: list[OcrLine], quote: str) -> list[tuple[float, float, float, float]]:
    """Boxes (left, bottom, right, top in page points) of the part of each line the quote covers.

    The quote is located in the page's OCR text read row by row (as the parsed page reads it), the way
    the fact check locates it; a quote that spans cells of a table row covers several lines. Within a
    line, the covered characters' share of its width is boxed (OCR gives no box per character). A quote
    in the table reading of a text-layer page ("2022年 | 资本充足率 | 15.44%") is located cell by cell.
    """
    text = ""
    owner: list[
        tuple[OcrLine, int] | None
    ] = []  # (line, index of the character in it) for text[i]; None: a gap
    for row in rows(lines):
        for line in row:
            if owner:
                text += " "
                owner.append(None)
            text += line.text
            owner += [(line, i) for i in range(len(line.text))]
        text += "\n"
        owner.append(None)
    spans = []
    match = locate(quote, text)
    if match is not None:
        spans.append((match.start, match.end))
    else:
        for piece in _pieces(quote):
            found = locate(piece, text)
            if found is not None:
                spans.append((found.start, found.end))
    covered: dict[int, tuple[OcrLine, int, int]] = {}  # id(line) -> (line, first char, last char + 1)
    for start, end in spans:
        for at in range(start, end):
            char = owner[at]
            if char is None:
                continue
            line, i = char
            first, last = covered.get(id(line), (line, i, i + 1))[1:]
            covered[id(line)] = (line, min(first, i), max(last, i + 1))
    boxes = []
    for line, first, last in covered.values():
        width = (line.right - line.left) / max(1, len(line.text))
        boxes.append((line.left + first * width, line.bottom, line.left + last * width, line.top))
    return boxes


def _pieces(quote: str) -> list[str]:
    return [p for p in re.split(r"\s*\|\s*|\s{2,}|\n", quote) if len(fold(p)) >= MIN_PIECE]


# A built document keeps its OCR'd pages' lines in its own index folder: the builder writes them
# (retrievers.building.jobs), the index serves them to the audit report (retrievers.indexing.store).
DOCUMENT_FILE = "ocr.json"


def save_document_lines(folder: str | Path, lines: dict[int, list[OcrLine]]) -> None:
    """A built document's OCR'd pages, kept in its index folder for the audit report."""
    rows = {str(n): [x.to_list() for x in page] for n, page in sorted(lines.items()) if page}
    (Path(folder) / DOCUMENT_FILE).write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")


def load_document_lines(folder: str | Path) -> dict[int, list[OcrLine]]:
    """{page: lines} of a document's OCR'd pages; {} when it has none (or the file is unreadable)."""
    try:
        rows = json.loads((Path(folder) / DOCUMENT_FILE).read_text(encoding="utf-8"))
        return {int(n): [OcrLine.from_list(r) for r in page] for n, page in rows.items()}
    except (OSError, ValueError, TypeError, IndexError, AttributeError):
        return {}
