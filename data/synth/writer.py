"""A small page-layout engine over reportlab's canvas that knows which page every truth string lands on.

Layouts hand it headings, paragraphs and tables made of plain strings and `Mark`s. A `Mark` is a string
that states a truth value: it is never broken across lines, and the page it is drawn on is recorded
against its field(s). Tables can be drawn row by row or column by column (then the PDF's text order
runs down each column, as in some real filings).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from reportlab.lib.pagesizes import A4
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfgen import canvas

PAGE_W, PAGE_H = A4
MARGIN_X, TOP, BOTTOM = 62.0, PAGE_H - 70.0, 64.0
TEXT_W = PAGE_W - 2 * MARGIN_X
_ASCII_RUN = re.compile(r"[\x21-\x7e]+ ?| ")
# Chinese typesetting never starts a line with closing punctuation: these stay on the previous line.
_NO_LINE_START = set("。，、；：？！）》」”’%")
_YEAR_UNIT = re.compile(r"(?<=\d)(?=[年月日])")  # "2024年" -> "2024 年" in documents typeset that way
SHADE_GREY = 0.9


@dataclass(frozen=True)
class Mark:
    """Text that states the value of `fields` (one or more truth fields)."""

    text: str
    fields: tuple[str, ...]


def mark(text: str, *fields: str) -> Mark:
    return Mark(text, tuple(fields))


Part = str | Mark


@dataclass
class TruthHit:
    page: int
    strings: list[str] = field(default_factory=list)


class DocWriter:
    def __init__(
        self,
        path: str,
        font: str,
        bold_font: str,
        header: tuple[str, str],
        footer: Callable[[int], str],
        size: float = 10.0,
        rules: str = "rows",
        shade: bool = False,
        spaced_years: bool = False,
    ):
        self.canvas = canvas.Canvas(path, pagesize=A4, invariant=1, pageCompression=1)
        self.canvas.setAuthor("collate synthetic corpus")
        self.font, self.bold_font, self.size = font, bold_font, size
        self.header, self.footer, self.rules, self.shade = header, footer, rules, shade
        self.spaced_years = spaced_years
        self.page, self.y = 1, TOP
        self.truth: dict[str, TruthHit] = {}
        self._widths: dict[tuple[str, float], dict[str, float]] = {}
        self._page_started = False

    def typeset(self, text: str) -> str:
        """The document's habits applied to any text it prints (a Mark's recorded string included)."""
        return _YEAR_UNIT.sub(" ", text) if self.spaced_years else text

    # ---- measuring -----------------------------------------------------------------------------------
    def width(self, text: str, font: str | None = None, size: float | None = None) -> float:
        font, size = font or self.font, size or self.size
        cache = self._widths.setdefault((font, size), {})
        total = 0.0
        for ch in text:
            w = cache.get(ch)
            if w is None:
                w = cache[ch] = pdfmetrics.stringWidth(ch, font, size)
            total += w
        return total

    def _tokens(self, parts: list[Part]) -> list[Part]:
        """Break points: between CJK characters, after ASCII words; never inside a Mark."""
        tokens: list[Part] = []
        for part in parts:
            if isinstance(part, Mark):
                tokens.append(Mark(self.typeset(part.text), part.fields))
                continue
            part = self.typeset(part)
            pos = 0
            for m in _ASCII_RUN.finditer(part):
                tokens.extend(part[pos : m.start()])
                tokens.append(m.group())
                pos = m.end()
            tokens.extend(part[pos:])
        return tokens

    def wrap(
        self,
        parts: list[Part],
        max_w: float,
        font: str | None = None,
        size: float | None = None,
        first_indent: float = 0.0,
    ) -> list[list[Part]]:
        lines: list[list[Part]] = [[]]
        used = first_indent
        for tok in self._tokens(parts):
            text = tok.text if isinstance(tok, Mark) else tok
            w = self.width(text, font, size)
            if lines[-1] and used + w > max_w and text != " " and text not in _NO_LINE_START:
                lines.append([])
                used = 0.0
            if not lines[-1] and text == " ":
                continue
            lines[-1].append(tok)
            used += w
        return [ln for ln in lines if ln]

    # ---- pages ---------------------------------------------------------------------------------------
    def _start_page(self) -> None:
        if self._page_started:
            return
        c = self.canvas
        c.setFont(self.font, 8)
        c.drawString(MARGIN_X, PAGE_H - 40, self.typeset(self.header[0]))
        c.drawRightString(PAGE_W - MARGIN_X, PAGE_H - 40, self.header[1])
        c.setLineWidth(0.5)
        c.line(MARGIN_X, PAGE_H - 46, PAGE_W - MARGIN_X, PAGE_H - 46)
        self._page_started = True

    def _end_page(self) -> None:
        self._start_page()
        self.canvas.setFont(self.font, 8)
        self.canvas.drawCentredString(PAGE_W / 2, 36, self.footer(self.page))
        self.canvas.showPage()
        self._page_started = False

    def new_page(self) -> None:
        self._end_page()
        self.page += 1
        self.y = TOP

    def _room(self, height: float) -> None:
        if self.y - height < BOTTOM:
            self.new_page()
        self._start_page()

    def _record(self, line: list[Part]) -> None:
        for tok in line:
            if isinstance(tok, Mark):
                for name in tok.fields:
                    hit = self.truth.setdefault(name, TruthHit(self.page))
                    if hit.page == self.page and tok.text not in hit.strings:
                        hit.strings.append(tok.text)

    def _draw_line(self, x: float, y: float, line: list[Part], font: str, size: float) -> None:
        text = "".join(t.text if isinstance(t, Mark) else t for t in line).rstrip()
        self.canvas.setFont(font, size)
        self.canvas.drawString(x, y, text)
        self._record(line)

    # ---- blocks --------------------------------------------------------------------------------------
    def heading(self, text: Part, size: float = 13.0, gap: float = 10.0) -> None:
        self._room(size * 1.6 + gap + self.size * 3)  # keep a heading with the start of its text
        self.y -= gap
        text = Mark(self.typeset(text.text), text.fields) if isinstance(text, Mark) else self.typeset(text)
        self._draw_line(MARGIN_X, self.y - size, [text], self.bold_font, size)
        self.y -= size * 1.7

    def paragraph(self, parts: list[Part] | str, indent: bool = True, size: float | None = None) -> None:
        parts = [parts] if isinstance(parts, str) else parts
        size = size or self.size
        lead = size * 1.55
        first = 2 * self.width("中", size=size) if indent else 0.0
        for i, line in enumerate(self.wrap(parts, TEXT_W, size=size, first_indent=first)):
            self._room(lead)
            self.y -= lead
            self._draw_line(MARGIN_X + (first if i == 0 else 0.0), self.y, line, self.font, size)
        self.y -= size * 0.5

    def table(
        self,
        rows: list[list[Part]],
        widths: list[float],
        header_rows: int = 1,
        by_column: bool = False,
        size: float | None = None,
        align_right_from: int = 1,
        totals: tuple[int, ...] = (),
        repeat_header: bool = True,
        break_after: int | None = None,
    ) -> None:
        """Rows of cells (a cell is a string or a Mark); `widths` are fractions of the text width.

        `totals` are row indices of total lines (ruled above in the "frame" style). A table longer than the
        page continues on the next one, its header rows repeated unless `repeat_header` is false; with
        `break_after` it breaks after that many body rows even when it would fit (a statement that starts
        low on a page and runs on, as in real filings).
        """
        size = size or self.size - 1
        lead = size * 1.45
        cols = [w * TEXT_W for w in widths]
        wrapped = [
            [self.wrap([cell], cw - 6, size=size) or [[""]] for cell, cw in zip(row, cols, strict=True)]
            for row in rows
        ]
        heights = [max(len(cell) for cell in row) * lead + 4 for row in wrapped]
        start, first = header_rows, True
        while True:
            head = list(range(header_rows)) if first or repeat_header else []
            head_h = sum(heights[r] for r in head)
            self._room(head_h + heights[min(start, len(rows) - 1)])
            room = self.y - BOTTOM - head_h
            limit = (
                len(rows) if break_after is None or not first else min(len(rows), header_rows + break_after)
            )
            end = start
            while end < limit and sum(heights[start : end + 1]) <= room:
                end += 1
            end = max(end, start + 1) if start < len(rows) else end  # a row taller than a page still goes
            self._draw_table_chunk(
                wrapped,
                heights,
                cols,
                head + list(range(start, end)),
                header_rows,
                by_column,
                size,
                lead,
                align_right_from,
                set(totals),
            )
            start, first = end, False
            if start >= len(rows):
                break
            self.new_page()
        self.y -= size

    def _draw_table_chunk(
        self, wrapped, heights, cols, chunk, header_rows, by_column, size, lead, right_from, totals
    ):
        tops, y = {}, self.y
        for r in chunk:
            tops[r] = y
            y -= heights[r]
        xs = [MARGIN_X + sum(cols[:i]) for i in range(len(cols))]
        if self.shade:  # grey bands under every other body row, drawn first so the text sits on top
            self.canvas.setFillGray(SHADE_GREY)
            for k, r in enumerate(r for r in chunk if r >= header_rows):
                if k % 2 == 0:
                    self.canvas.rect(MARGIN_X, tops[r] - heights[r], sum(cols), heights[r], stroke=0, fill=1)
            self.canvas.setFillGray(0)
        order = (
            [(c, r) for c in range(len(cols)) for r in chunk]
            if by_column
            else [(c, r) for r in chunk for c in range(len(cols))]
        )
        for c, r in order:
            font = self.bold_font if r < header_rows else self.font
            for k, line in enumerate(wrapped[r][c]):
                base = tops[r] - 2 - lead * (k + 1) + 3
                if c >= right_from and r >= header_rows and len(wrapped[r][c]) == 1:
                    text = "".join(t.text if isinstance(t, Mark) else t for t in line)
                    x = xs[c] + cols[c] - 4 - self.width(text, font, size)
                else:
                    x = xs[c] + 3
                self._draw_line(x, base, line, font, size)
        self._rule_chunk(tops, heights, y, xs, cols, chunk, header_rows, right_from, totals)
        self.y = y

    def _rule_chunk(self, tops, heights, bottom, xs, cols, chunk, header_rows, right_from, totals):
        c, right = self.canvas, MARGIN_X + sum(cols)
        c.setLineWidth(0.4)
        if self.rules in ("rows", "grid"):
            for r in chunk:
                c.line(MARGIN_X, tops[r], right, tops[r])
            c.line(MARGIN_X, bottom, right, bottom)
        if self.rules == "grid":
            for x in [*xs, right]:
                c.line(x, tops[chunk[0]], x, bottom)
        if (
            self.rules == "frame"
        ):  # real statements: a rule under the header, short rules over the figures of totals
            figures = xs[min(right_from, len(xs) - 1)]
            for r in chunk:
                if r == header_rows - 1:
                    c.line(MARGIN_X, tops[r] - heights[r], right, tops[r] - heights[r])
                elif r in totals:
                    c.line(figures, tops[r], right, tops[r])
            if chunk[-1] in totals:  # the closing double rule under the last total
                c.line(figures, bottom - 1, right, bottom - 1)
                c.line(figures, bottom - 2.6, right, bottom - 2.6)

    def fill_until(self, page: int, make_block: Callable[[DocWriter], None]) -> None:
        """Running text until the writer reaches `page` (the filler a real filing is mostly made of)."""
        guard = 0
        while self.page < page and guard < 10_000:
            make_block(self)
            guard += 1

    def centered(self, text: str, size: float, gap: float = 8.0) -> None:
        self._room(size * 1.5 + gap)
        self.y -= size + gap
        self.canvas.setFont(self.bold_font, size)
        self.canvas.drawCentredString(PAGE_W / 2, self.y, self.typeset(text))

    def aside(self, text: str, align: str = "right", size: float | None = None) -> None:
        """One short line set right or centred: a unit line ("单位：元  币种：人民币", "(In millions)")."""
        size = size or self.size - 1
        self._room(size * 1.6)
        self.y -= size * 1.6
        self.canvas.setFont(self.font, size)
        text = self.typeset(text)
        if align == "center":
            self.canvas.drawCentredString(PAGE_W / 2, self.y, text)
        else:
            self.canvas.drawRightString(PAGE_W - MARGIN_X, self.y, text)
        self.y -= size * 0.4  # clear of the descenders before a table's top rule

    def save(self) -> int:
        self._end_page()
        self.canvas.save()
        return self.page
