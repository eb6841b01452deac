"""Pages -> chunks that follow sections and tables. Pure and deterministic: same pages, same chunks.

Every chunk starts with the title of the section it sits in, so a passage about "资本充足率" under
"主要会计数据和财务指标" can be found by either; table chunks repeat the table's header line.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from retrievers.documents.headings import (
    TITLE,
    Contents,
    Heading,
    Outline,
    find_contents,
    heading_level,
    numbering_level,
    running_lines,
)
from retrievers.documents.pdf import Page, is_han
from retrievers.documents.statements import (
    column_header,
    dated_row,
    period_header,
    statement_kind,
    states_amounts,
    unit_line,
)

# Bump when chunk output changes: the build cache then re-chunks and re-embeds every document.
CHUNKER_VERSION = (
    8  # 6: heading paths (retrievers/headings.py); 7: label headers over rows of dates; 8: whole
)
# numbers under 1,000 in table rows are amounts (statements.amount_line): units and columns head them, MiniLM reads them
# Sizes in characters. MiniLM reads ~256 word pieces; a Chinese character is at least one piece, an
# English word of ~5 letters about one: so ASCII characters count ASCII_WEIGHT of a character toward
# TARGET_CHARS and an English chunk holds ~2x the characters of a Chinese one (~840, ~200 pieces).
# Measured on the FinanceBench dev filings (2026-12-03): ~11 -> 3.8-5.9 chunks a page, so MiniLM, the
# largest part of an English build once parsing is fast, runs about half as often; and BM25 page recall@5
# of the 38 questions 0.632 vs 0.579 with ASCII counted in full (bench/README.md).
TARGET_CHARS = 420
MAX_CHARS = 700
ASCII_WEIGHT = 0.5
MIN_WRAPPED_CHARS = 20  # shorter lines ended where the writer ended them, not at the margin
PATH_SEPARATOR = " > "


@dataclass(frozen=True)
class Chunk:
    text: str
    page: int  # 1-based first page
    page_end: int
    section: str = ""
    kind: str = "text"  # "text" or "table"
    # words a reader may search this chunk by that it does not print: the usual names of its statement
    # ("balance sheet" for "Statement of Financial Position"). BM25 indexes them; MiniLM does not embed
    # them (a long shared line made every chunk of a statement alike to it) and readers never see them.
    terms: str = ""
    # the headings above the chunk, outermost first, joined by PATH_SEPARATOR ("PART I > Item 3. Legal
    # Proceedings"; retrievers/headings.py): BM25 searches them, the text (what is quoted) stays as printed
    path: str = ""

    def to_dict(self) -> dict:
        return asdict(self)


def is_heading(line: str) -> bool:
    """A short line that opens a numbered section, or a title-like line (without the lines around it)."""
    return heading_level(line) is not None


def _sub_heading(line: str, pages_after_title: int) -> bool:
    """ "ASSETS", "LIABILITIES AND STOCKHOLDERS' EQUITY" under a statement's title (on its page or the
    next): a part of the statement, not a new section. A numbered heading ("Item 8.", "Note 3") or the
    notes' title ends the statement."""
    return pages_after_title <= 1 and numbering_level(line) is None and not re.match(r"notes?\b", line, re.I)


def _weight(text: str) -> float:
    ascii_chars = sum(1 for ch in text if ch.isascii())
    return len(text) - (1 - ASCII_WEIGHT) * ascii_chars


class _Builder:
    def __init__(self):
        self.chunks: list[Chunk] = []
        self.section = ""
        self.outline = Outline()
        # what heads the table the lines belong to: the usual names of the section's statement, its
        # unit line and its column headers; kept until the next heading, across page breaks
        self.context: dict[str, str] = {}
        self.lines: list[str] = []
        self.size = 0.0
        self.first_page = self.last_page = self.statement_page = self.context_page = 0

    def heading(self, line: str, page: int, level: int) -> bool:
        """Open a section at `line`; False when it is only a sub-heading inside a statement."""
        line = line.strip()
        kind = statement_kind(line)
        if not kind and self.context.get("kind") and _sub_heading(line, page - self.statement_page):
            return False
        self.flush()
        self.section = line
        self.outline.enter(Heading(line, level))
        self.context = {"kind": kind} if kind else {}
        if kind:
            self.statement_page = page
        return True

    def note(self, line: str, page: int, after: str = "") -> None:
        """Remember a unit line or a column header line that heads the lines after it (`after`, the next
        line, tells a row of labels over dates from a title)."""
        if unit_line(line):
            self.context["unit"] = line.strip()
            self.context_page = page
        elif column_header(line, after):
            self.context["columns"] = line.strip()
            self.context_page = page

    def page_break(self, page: int) -> None:
        """A table's head carries over to the next page (a statement's second page), not further."""
        if self.context and page - max(self.context_page, self.statement_page) > 1:
            self.flush()  # the lines before the break still belong under this head
            if self.context.get("kind"):
                self.section = ""  # the statement ended: its title would head the notes after it
                self.outline.leave(TITLE)
            self.context = {}

    def add(self, line: str, page: int, kind: str = "text", header: str = "") -> None:
        for piece in _split_long(line):
            weight = _weight(piece)
            if self.lines and self.size + weight > TARGET_CHARS:
                self.flush(kind, header)
            if not self.lines:
                self.first_page = page
            self.lines.append(piece)
            self.size += weight + 1
            self.last_page = page

    def flush(self, kind: str = "text", header: str = "") -> None:
        if not self.lines:
            return
        # the unit and the column headers only where they head amounts, not prose after a table; a row of
        # labels ("股权登记日 除权除息日") also heads a chunk that holds one of its rows of dates: a dividend's
        # schedule is often one row ("A股 2023/7/20 2023/7/21 2023/7/26"), a chunk of its own
        columns = self.context.get("columns", "")
        labels = bool(columns) and not period_header(columns)
        figures = states_amounts(self.lines) or (labels and any(map(dated_row, self.lines)))
        keys = ("unit", "columns") if figures else ()
        context = [self.context.get(k, "") for k in keys]
        prefix = []
        for p in [self.section, *context, header]:
            if p and p not in prefix and p not in self.lines:
                prefix.append(p)
        text = "\n".join(prefix + [_join_wrapped(self.lines)] if kind == "text" else prefix + self.lines)
        terms = self.context.get("kind", "")
        path = PATH_SEPARATOR.join(self.outline.path)
        self.chunks.append(Chunk(text, self.first_page, self.last_page, self.section, kind, terms, path))
        self.lines, self.size = [], 0.0


def _wrapped(prev: str, line: str) -> bool:
    """Does `line` continue Chinese prose that the page wrapped after `prev`?

    A wrapped line is long and has no cell gaps; a table row ("项目 2021年 2020年") has spaces
    between its cells and must keep its line break, or its last cell runs into the next row's label.
    """
    return (
        len(prev) >= MIN_WRAPPED_CHARS
        and " " not in prev
        and is_han(prev[-1])
        and is_han(line[0])
        and not is_heading(prev)
    )


def _join_wrapped(lines: list[str]) -> str:
    """Rejoin prose that the page wrapped: Chinese runs on without a break, so "消费\n者" is "消费者" again."""
    text = lines[0]
    for prev, line in zip(lines, lines[1:], strict=False):
        text += ("" if _wrapped(prev, line) else "\n") + line
    return text


def _split_long(line: str) -> list[str]:
    if len(line) <= MAX_CHARS:
        return [line]
    # Cut at sentence ends when possible, else hard: a run-on line must still fit the embedder.
    parts, current = [], ""
    for sentence in re.split(r"(?<=[。；;.!?！？])\s*", line):
        while len(sentence) > MAX_CHARS:
            parts.append(sentence[:MAX_CHARS])
            sentence = sentence[MAX_CHARS:]
        if current and len(current) + len(sentence) > TARGET_CHARS:
            parts.append(current)
            current = ""
        current += sentence
    if current:
        parts.append(current)
    return parts


def chunk_pages(pages: list[Page]) -> list[Chunk]:
    """Split at headings and around tables; text may run across a page break within a section."""
    page_lines = [(p.number, [x for b in p.blocks if b.kind == "text" for x in b.lines]) for p in pages]
    contents, running = find_contents(page_lines), running_lines(page_lines)
    b = _Builder()
    for page, (_, lines) in zip(pages, page_lines, strict=True):
        b.page_break(page.number)
        at = 0  # the line's place among the page's text lines: the lines around a heading
        for block in page.blocks:
            if block.kind == "table":
                b.flush()
                for line in block.lines:
                    b.add(line, page.number, "table", block.header)
                b.flush("table", block.header)
                continue
            for line in block.lines:
                before, after = lines[at - 1] if at else "", lines[at + 1] if at + 1 < len(lines) else ""
                at += 1
                level = _heading_level(line, before, after, page.number, contents, running)
                if not (level is not None and b.heading(line, page.number, level)):
                    # a running line ("Acme Holdings Annual Report" on every page) heads no table
                    b.note(line, page.number, "" if line.strip() in running else after)
                b.add(line, page.number)
    b.flush()
    return b.chunks


def _heading_level(
    line: str, before: str, after: str, page: int, contents: Contents, running: frozenset[str]
) -> int | None:
    """The depth of `line` as a heading in its document, or None: not a line of the table of contents (it
    lists a heading, it does not open one), not a running title unless numbered; a line the contents list
    is a heading after it even where its form alone would not say so."""
    if contents.entry(line, page):
        return None
    level = heading_level(line, before, after)
    if level is not None:
        return level if level != TITLE or line.strip() not in running else None
    if contents.pages and page > max(contents.pages) and contents.lists(line):
        level = numbering_level(line.strip())
        return TITLE if level is None else level
    return None
