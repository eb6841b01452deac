"""A document's own structure: which lines are headings, how deep each one sits, and the path above a line.

A 10-K is "PART II > Item 7. Management's Discussion and Analysis ... > Liquidity and Capital Resources";
a Chinese annual report "第四节 管理层讨论与分析 > 一、报告期内公司所处行业情况 > （一）...". A question about
legal proceedings, customers or cyclicality names the section that answers it more often than any word
of its prose, so the chunker records each chunk's heading path and BM25 searches it (chunking.py, index.py).

The text of a PDF carries no font, so a heading is found by its form:
- numbered: PART I / 第三节 / 第三章 (depth 0), Item 7. / 一、 (1), （一） / Note 7 (2), 7. / 1、 (3),
  1.2 (4), （1） (5): the numbering gives the depth;
- unnumbered (depth 6): a statement title, a line in upper case, or a short line in Title Case that
  follows the end of a sentence and is followed by body text ("Company Overview", "Seasonality");
- a line the table of contents lists, on a page after it ("Management's discussion and analysis").
A line printed on many pages (a running title: "Table of Contents", the filer's name) is no heading.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from retrievers.documents.statements import amount_line, column_header, statement_title

PART, ITEM, SECTION, NUMBERED, DECIMAL, PAREN_NUMBER, TITLE = range(7)
MAX_HEADING_CHARS = 60
MAX_NUMBERED_TITLE_CHARS = (
    130  # "Item 7. Management's Discussion and Analysis of Financial Condition and ..."
)
MAX_TITLE_WORDS = 12
# A running line: on at least this many pages and this share of them ("Table of Contents" on 130 of a
# 10-K's 503 pages, "ADOBE SYSTEMS INCORPORATED" on 48 of 116); a heading opens its section once or twice.
RUNNING_PAGES, RUNNING_SHARE = 5, 0.1
MIN_BODY_WORDS = 8  # the line after a Title Case heading is prose
MIN_CONTENTS_ENTRIES = 5  # a page listing this many "title ... page" lines is a table of contents

_CN_NUM = "一二三四五六七八九十百零"
_NUMBERING = (
    (re.compile(rf"^(part\s+[ivx]+\b|第[{_CN_NUM}\d]+\s*(节|章|部分))", re.I), PART),
    (re.compile(rf"^(item\s+\d+[a-z]?\b|第[{_CN_NUM}\d]+\s*条|[{_CN_NUM}]+\s*[、.．])", re.I), ITEM),
    (re.compile(rf"^([（(][{_CN_NUM}]+[）)]|note\s+\d+\b)", re.I), SECTION),
    # section numbers run to two digits: "2021. amount to ..." and "101.SCH" are no section
    (re.compile(r"^\d{1,2}\.\d{1,2}(\.\d{1,2})*[、.．]?\s*(?=\S)"), DECIMAL),
    (re.compile(r"^\d{1,2}\s*[、.．]\s*(?=\S)"), NUMBERED),
    (re.compile(r"^[（(]\d+[）)]\s*(?=\S)"), PAREN_NUMBER),
)
# a title that ends with a period is still a title when its numbering says so ("Item 2. Properties.")
_PERIOD_OK = (PART, ITEM, SECTION)
_SENTENCE_END = re.compile(r"[。；;，,:：.!?！？]$")
_MINOR = frozenset(
    "a an and as at by for from in into of on or per the to via vs with without over under our its their".split()
)
_ENTRY = re.compile(r"^(?P<title>.*?[A-Za-z\u4e00-\u9fff)）].*?)[\s.·…]+(?P<page>\d{1,3})$")


@dataclass(frozen=True)
class Heading:
    text: str
    level: int


def numbering_level(line: str) -> int | None:
    """The depth its numbering gives a line ("Item 7." 1, "（一）" 2), or None when it is not numbered."""
    for pattern, level in _NUMBERING:
        if pattern.match(line):
            return level
    return None


def title_case(text: str) -> bool:
    """ "Liquidity and Capital Resources", "We Face Intense Competition": every word but the small ones
    capitalized, the first one too."""
    words = [w.strip("()[]\"'“”‘’—–-&/") for w in text.split()]
    words = [w for w in words if any(ch.isalpha() for ch in w)]
    if not words or not words[0][:1].isupper():
        return False
    return all(w[:1].isupper() or w.lower() in _MINOR for w in words) and any(len(w) >= 3 for w in words)


def upper_case(text: str) -> bool:
    """ "CONSOLIDATED BALANCE SHEETS (in thousands)": upper case once a parenthetical is set aside."""
    title = re.sub(r"\([^)]*\)", "", text)
    letters = re.sub(r"[^A-Za-z]", "", title)
    return len(letters) >= 4 and letters.isupper() and len(title.split()) <= 8


def _figures(line: str) -> bool:
    """A row of figures rather than a title: "1,234,567", "2022 | ...", "2017 2016 (1)", "$ 500",
    "QFNA 604 — 7 — 611"."""
    return bool(
        re.match(r"^[\d,.\s%$|-]+$", line)
        or sum(1 for t in line.split() if re.fullmatch(r"\(?[\d,.]*\d[\d,.]*\)?", t)) >= 2
        or "|" in line
        or column_header(line)
        or re.search(r"[$%％]", line)
        or sum(map(amount_line, line.split())) >= 2
    )


def _numbers(line: str) -> bool:
    """A line with a table's signs ($, %, |) or two or more numbers: no Title Case heading, though one
    may name a period ("For the Full Year of Fiscal 2022")."""
    return (
        bool(re.search(r"[$%％|]", line))
        or sum(1 for t in line.split() if re.fullmatch(r"\(?[\d,.]*\d[\d,.]*\)?", t)) >= 2
    )


def _body(line: str) -> bool:
    """Prose: enough words, a third or more of them in lower case (a row of figures has few)."""
    words = line.split()
    return len(words) >= MIN_BODY_WORDS and sum(1 for w in words if w[:1].islower()) >= len(words) / 3


def heading_level(line: str, before: str = "", after: str = "") -> int | None:
    """The depth of `line` if it is a heading, else None. `before` and `after` are the lines around it
    (on its page; "" at an edge): an unnumbered Title Case line is a heading only between a sentence's
    end (or a heading) and prose."""
    line = line.strip()
    if not line:
        return None
    level = numbering_level(line)
    if level is not None:
        return level if _numbered_title(line, level) else None
    if len(line) <= MAX_NUMBERED_TITLE_CHARS and statement_title(line) and not _figures(line):
        return TITLE  # "Consolidated Statements of Income Corning Incorporated and Subsidiary Companies"
    if len(line) > MAX_HEADING_CHARS or _SENTENCE_END.search(line):
        return None
    if not _figures(line) and upper_case(line):
        return TITLE
    if len(line.split()) <= MAX_TITLE_WORDS and not _numbers(line) and title_case(line) and _body(after):
        before = before.strip()
        opens = not before or _SENTENCE_END.search(before) or before.endswith(("”", '"'))
        # or it follows another heading: a short title, not a line of prose in capitals ("Management VaR
        # and Regulatory VaR. Refer to JPMorgan" runs on into "Chase’s Basel III Pillar 3 ...")
        after_title = len(before) <= MAX_HEADING_CHARS and not re.search(r"[.;:!?]\s", before)
        if opens or (after_title and (title_case(before) or upper_case(before))):
            return TITLE
    return None


def _numbered_title(line: str, level: int) -> bool:
    """A numbered line that is a title: short, not a sentence, not a row of figures; in English its title
    starts with a capital ("Note 1 – Basis of presentation", not "Note 10 for additional information" nor
    "Part II, Item 1A, Risk Factors on pages 172-173"), and a Part's or an Item's is in Title Case or
    upper case ("Item 2. Properties.", not "Item 8 for more information.")."""
    limit = MAX_NUMBERED_TITLE_CHARS if level in (PART, ITEM) else MAX_HEADING_CHARS
    if len(line) > limit or _figures(line):
        return False
    rest = numbering_rest(line)
    if rest and not re.search(r"[A-Za-z\u3400-\u9fff]", rest):
        return level in (PART, ITEM) and not _SENTENCE_END.search(
            line
        )  # "2016.*" is no heading, "PART II" is
    latin = bool(re.match(r"[\W\d]*[A-Za-z]", rest))
    if latin and not re.match(r"[\"“‘'(\[]?[A-Z\d]", rest):
        return False
    if latin and level in (PART, ITEM) and not (title_case(rest.rstrip(".")) or upper_case(rest)):
        return False
    if not _SENTENCE_END.search(line):
        return True
    return level in _PERIOD_OK and line.endswith(".") and not line.endswith("..") and latin


def numbering_rest(line: str) -> str:
    """What follows a line's numbering: "Properties." of "Item 2. Properties."."""
    for pattern, _level in _NUMBERING:
        m = pattern.match(line)
        if m:
            return line[m.end() :].lstrip(" .:—–-、．")
    return line


class Outline:
    """The headings open above the current line, outermost first."""

    def __init__(self):
        self.open: list[Heading] = []

    def enter(self, heading: Heading) -> None:
        """A heading closes every open one as deep as it or deeper, then opens."""
        while self.open and self.open[-1].level >= heading.level:
            self.open.pop()
        self.open.append(heading)

    def leave(self, level: int) -> None:
        """Close the open headings at `level` or deeper (a statement that ended)."""
        while self.open and self.open[-1].level >= level:
            self.open.pop()

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(h.text for h in self.open)


def _key(text: str) -> str:
    """A title as a table of contents and the body both print it: case, punctuation and spacing aside."""
    return re.sub(r"[\W_]+", " ", text.lower()).strip()


@dataclass(frozen=True)
class Contents:
    """The document's table of contents: the pages it takes and the titles it lists (as `_key`s)."""

    pages: frozenset[int] = frozenset()
    titles: frozenset[str] = frozenset()

    def lists(self, line: str) -> bool:
        """A line that prints, as a title (no bullet, no sentence end), a title the contents list."""
        line = line.strip()
        title = line[:1].isalnum() and not _SENTENCE_END.search(line.rstrip("."))
        return bool(title) and _key(line) in self.titles

    def entry(self, line: str, page: int) -> bool:
        """A line of the table of contents itself: it lists a heading, it does not open one."""
        return page in self.pages and contents_entry(line) is not None


def contents_entry(line: str) -> tuple[str, int] | None:
    """ "Item 1A. Risk Factors 11", "第三节 管理层讨论与分析 ...... 9": the title and page of a contents line.
    A title ends in a word, not a figure ("Weighted average shares basic 843 857" is a table row)."""
    m = _ENTRY.match(line.strip())
    if not m:
        return None
    title = m.group("title").strip()
    if len(title) > MAX_NUMBERED_TITLE_CHARS or _figures(title) or re.search(r"\d$", title):
        return None
    return title, int(m.group("page"))


def find_contents(page_lines: list[tuple[int, list[str]]]) -> Contents:
    """The table of contents: pages (of the first fifth of the document) with MIN_CONTENTS_ENTRIES or more
    "title page" lines whose page numbers do not decrease and stay within the document; the titles listed."""
    pages: set[int] = set()
    titles: set[str] = set()
    limit = max(3, len(page_lines) // 5)
    for number, lines in page_lines[:limit]:
        entries = [e for line in lines if (e := contents_entry(line)) and e[1] <= len(page_lines)]
        numbers = [n for _, n in entries]
        rising = sum(1 for a, b in zip(numbers, numbers[1:], strict=False) if b >= a)
        if len(entries) >= MIN_CONTENTS_ENTRIES and rising >= 0.8 * (len(entries) - 1):
            pages.add(number)
            titles.update(_key(e) for e, _ in entries)
    return Contents(frozenset(pages), frozenset(t for t in titles if t))


def running_lines(page_lines: list[tuple[int, list[str]]]) -> frozenset[str]:
    """Lines printed on many pages (RUNNING_PAGES and RUNNING_SHARE): running titles, never headings."""
    counts = Counter(key for _, lines in page_lines for key in {line.strip() for line in lines})
    floor = max(RUNNING_PAGES, RUNNING_SHARE * len(page_lines))
    return frozenset(line for line, n in counts.items() if n >= floor)
