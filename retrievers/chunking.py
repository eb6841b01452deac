"""Pages -> chunks that follow sections and tables. Pure and deterministic: same pages, same chunks.

Every chunk starts with the title of the section it sits in, so a passage about "资本充足率" under
"主要会计数据和财务指标" can be found by either; table chunks repeat the table's header line.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from retrievers.pdf import Page, is_han

# Bump when chunk output changes: the build cache then re-chunks and re-embeds every document.
CHUNKER_VERSION = 3
# Sizes in characters. MiniLM reads ~256 word pieces; a Chinese character is at least one piece.
TARGET_CHARS = 420
MAX_CHARS = 700
MAX_HEADING_CHARS = 60
MIN_WRAPPED_CHARS = 20  # shorter lines ended where the writer ended them, not at the margin

_HEADING = re.compile(
    r"^(第[一二三四五六七八九十百零\d]+[节章部分条]"  # 第三节 管理层讨论与分析
    r"|[一二三四五六七八九十]+[、.．]"  # 一、公司信息
    r"|[（(][一二三四五六七八九十]+[）)]"  # （一）主要会计数据
    r"|item\s+\d+[a-z]?[.:]?\s"  # Item 7. Management's Discussion
    r"|part\s+[ivx]+\b"  # PART II
    r"|\d+(\.\d+)*[、.．]?\s*\S"  # 1.2 Capital adequacy
    r")",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[。；;，,:：.!?！？]$")


@dataclass(frozen=True)
class Chunk:
    text: str
    page: int  # 1-based first page
    page_end: int
    section: str = ""
    kind: str = "text"  # "text" or "table"

    def to_dict(self) -> dict:
        return asdict(self)


def is_heading(line: str) -> bool:
    """A short line that opens a numbered section, or a short title-like line."""
    line = line.strip()
    if not line or len(line) > MAX_HEADING_CHARS or _SENTENCE_END.search(line):
        return False
    if _HEADING.match(line):
        # "1,234,567" or "2022 | ..." are numbers, not numbered headings
        return not re.match(r"^[\d,.\s%$|-]+$", line) and "|" not in line
    # "CONSOLIDATED BALANCE SHEETS (in thousands)": upper case once the parenthetical is set aside
    title = re.sub(r"\([^)]*\)", "", line)
    letters = re.sub(r"[^A-Za-z]", "", title)
    return len(letters) >= 4 and letters.isupper() and len(title.split()) <= 8


class _Builder:
    def __init__(self):
        self.chunks: list[Chunk] = []
        self.section = ""
        self.lines: list[str] = []
        self.size = 0
        self.first_page = self.last_page = 0

    def add(self, line: str, page: int, kind: str = "text", header: str = "") -> None:
        for piece in _split_long(line):
            if self.lines and self.size + len(piece) > TARGET_CHARS:
                self.flush(kind, header)
            if not self.lines:
                self.first_page = page
            self.lines.append(piece)
            self.size += len(piece) + 1
            self.last_page = page

    def flush(self, kind: str = "text", header: str = "") -> None:
        if not self.lines:
            return
        prefix = [p for p in (self.section, header) if p and p != self.lines[0]]
        text = "\n".join(prefix + [_join_wrapped(self.lines)] if kind == "text" else prefix + self.lines)
        self.chunks.append(Chunk(text, self.first_page, self.last_page, self.section, kind))
        self.lines, self.size = [], 0


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
    b = _Builder()
    for page in pages:
        for block in page.blocks:
            if block.kind == "table":
                b.flush()
                for line in block.lines:
                    b.add(line, page.number, "table", block.header)
                b.flush("table", block.header)
                continue
            for line in block.lines:
                if is_heading(line):
                    b.flush()
                    b.section = line.strip()
                b.add(line, page.number)
    b.flush()
    return b.chunks
