"""Is a statement's figure the one asked for: the row's label and the column's period, read by code.

A real figure of the wrong row or column, quoted with its own line, passes "is the value printed in
the quote" (a proxy corrupting a cheap extractor's replies got 22 of 23 such documents past the
cascade). On a statement row ("Net revenue $ 3,991 $ 5,506 $ 5,299" under a header "2015 2014 2013")
code can say more:
- column: the value's cell stands under a year; when one column is the asked period's, the value must be
  in it. The filing's latest column is its own period (a fiscal year ending in January is labelled
  by the filing's year, not the calendar's: Salesforce's "January 31, 2023" is fiscal 2023, Ulta's
  "February 3, 2024" fiscal 2023), so header years are shifted by the period minus the latest year
  when that latest year is the period or the next one.
- row: the label's words against the field's (name and description): a label with none of the field's
  words, or with a word that makes it another line item ("operating", "gross", "per share", "other",
  "acquired" ...) that the field does not have, is another row.
Both only decide where the page is a table row under a header of years; elsewhere they stay silent.
"""

from __future__ import annotations

import re

# A table cell of an amount: 1,234 / (1,234) / 1,234.5 / — ; a percent cell is no period's amount.
CELL = re.compile(
    r"\(\s*\d[\d,]*(?:\.\d+)?\s*\)|(?<![\w.,])\d[\d,]*(?:\.\d+)?(?![\w.,]*\d)(?!\s*%)|(?<!\w)[—–-](?!\w)"
)
YEAR = re.compile(r"(?<![\d,.$])(?:19|20)\d\d(?![\d,]|\.\d)")
# Words of a header line besides its years ("Year Ended December 26,", "At", "Fiscal Year Ended January 31,").
HEADER_WORDS = re.compile(
    r"^(?:\s|\||,|\d{1,2}\b|years?|fiscal|ended|ending|as|of|at|and|three|six|nine|twelve|months?|weeks?|"
    r"quarters?|period|change|%|january|february|march|april|may|june|july|august|september|october|"
    r"november|december|\(?(?:dollars\s+)?in\s+(?:thousands|millions|billions)[^)]*\)?|"
    r"年度?|月|日|末|项目|本期|上期|本年|上年|金额|期末|期初|余额|发生额|数|[（()）])*$",
    re.I,
)
# A header's column that is no period's ("2023 2022 Change", "$ Change % Change"): cells after the years'.
CHANGE_COLUMN = re.compile(r"\bchange\b", re.I)
FOOTNOTE_MARK = re.compile(r"\(\s*\d{1,2}\s*\)")
LOOK_UP = 80  # lines above the row searched for its header of years (a balance sheet has ~50 rows)


def singular(word: str) -> str:
    """A label's or a field's word in the singular ("receivables" -> "receivable", "losses" -> "loss")."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("sses", "xes")):
        return word[:-2]
    return word[:-1]


# Words that make a label another line item than a field without them.
QUALIFIERS = frozenset(
    "operating gross comprehensive acquired acquisition noncontrolling minority before after other per share "
    "shares basic diluted cost costs provision tax taxes interest current noncurrent deferred accumulated "
    "discontinued preferred treasury unrealized average weighted less cash dividends marketing research "
    "general administrative depreciation amortization impairment restructuring liabilities equity expense "
    "gain gains investment investments".split()
)
# A field with one of these is another line item than a row without it ("cost of sales" is not "Net sales").
REQUIRED = frozenset(
    "provision tax taxes per share cost costs comprehensive noncontrolling gross before after".split()
)
# The head of a line item: a row and a field each with one, and none in common, are different items.
HEADS = frozenset(
    "income expense revenue cost asset liability equity tax provision margin dividend debt".split()
)
SYNONYMS = {
    "sales": "revenue",
    "revenues": "revenue",
    "turnover": "revenue",
    "profit": "income",
    "earnings": "income",
    "loss": "income",
    "losses": "income",
    "operations": "operating",
    "expenses": "expense",
    "costs": "cost",
    "assets": "asset",
    "inventories": "inventory",
    "liabilities": "liability",
}
STOP = frozenset(
    "the of and for to in from a an total net consolidated company s on by as its at amount value".split()
)
# Compared in the singular, as _words gives them ("Dividends declared" for "dividend_per_share").
QUALIFIERS = frozenset(singular(w) for w in QUALIFIERS)
REQUIRED = frozenset(singular(w) for w in REQUIRED)
HEADS = frozenset(singular(w) for w in HEADS)
SYNONYMS |= {singular(k): v for k, v in SYNONYMS.items() if singular(k) not in SYNONYMS}


def _words(text: str) -> set[str]:
    out = set()
    # "Cash dividends declared" is the dividends line itself, not a cash item beside it
    text = re.sub(r"\bcash\s+(?=dividends?\b)", "", text.lower().replace("_", " "))
    for w in re.findall(r"[a-z]+", text):
        if w in STOP:
            continue
        w = SYNONYMS.get(w, w)
        w = SYNONYMS.get(singular(w), singular(w))  # "Dividends" is the field's "dividend"
        if w not in STOP and len(w) > 1:
            out.add(w)
    return out


def _qualifiers(words: set[str]) -> set[str]:
    return {w for w in words if w in QUALIFIERS or SYNONYMS.get(w) in QUALIFIERS}


def label_of(line: str) -> str:
    first = CELL.search(line)
    dollar = line.find("$")
    end = min(x for x in (first.start() if first else len(line), dollar if dollar >= 0 else len(line)))
    return line[:end].strip(" |:")


def is_row(line: str) -> bool:
    """A statement row: a label, then only amount cells ($, %, dashes, cell bars between them)."""
    label = label_of(line)
    rest = line[line.find(label) + len(label) :] if label else line
    return (
        bool(re.search(r"[A-Za-z\u4e00-\u9fff]", label))
        and bool(CELL.search(rest))
        and not re.search(r"[A-Za-z\u4e00-\u9fff]{2,}", CELL.sub(" ", rest))
    )


def label_check(line: str, field_words: str, description: str = "") -> str:
    """'' when the row's label may be the field; else why it is another row. `field_words`: the field's
    name; `description`: its description, whose words may excuse a label's but never require one."""
    label, name = _words(label_of(line)), _words(field_words)
    field = name | _words(description)
    if not label or not field:
        return ""
    english_field = bool(re.search(r"[a-z]", field_words + description, re.I))
    if not english_field:
        return ""
    if not label & field:
        return f"the quoted row {label_of(line)!r} is not {field_words.strip()!r}"
    extra = (_qualifiers(label) - field) | {w for w in name - label if w in REQUIRED}
    if not extra and label & HEADS and field & HEADS and not label & field & HEADS:
        extra = (label | field) & HEADS
    if extra:
        return (
            f"the quoted row {label_of(line)!r} is another line item than {field_words.strip()!r} "
            f"({', '.join(sorted(extra))})"
        )
    return ""


def _row_cells(line: str, width: int) -> list[float] | None:
    """The last `width` amount cells of a statement row as numbers ("—" is 0); None for no such row."""
    label = label_of(line)
    if not re.search(r"[A-Za-z]", label):
        return None
    cells = [m.group() for m in CELL.finditer(line) if m.start() >= len(label)]
    if len(cells) < width:
        return None
    out = []
    for cell in cells[-width:]:
        digits = re.sub(r"[^\d.]", "", cell)
        out.append(0.0 if not digits else (-1 if cell.startswith("(") else 1) * float(digits))
    return out


def part_check(text: str, value_cell: tuple[int, int], field_words: str) -> str:
    """'' unless the field asks a total and the value's row is one of the parts that add up to the total
    printed below it ("Net service sales" for "total net sales": 118,573 + 59,293 = 177,866)."""
    if "total" not in field_words.lower() or "total" in label_of(_line_at(text, value_cell[0])).lower():
        return ""
    lines = text.split("\n")
    row = text.count("\n", 0, value_cell[0])
    line = lines[row]
    width = len([m for m in CELL.finditer(line) if m.start() >= len(label_of(line))])
    if width < 1:
        return ""
    where = value_cell[0] - (text.rfind("\n", 0, value_cell[0]) + 1)
    cells = [m for m in CELL.finditer(line) if m.start() >= len(label_of(line))]
    column = next((i for i, m in enumerate(cells) if m.start() <= where < m.end()), None)
    if column is None:
        return ""
    for below in range(row + 1, min(len(lines), row + 12)):
        label = label_of(lines[below])
        total = _row_cells(lines[below], width)
        if total is None or not label.lower().startswith("total"):
            continue
        parts, up = [], below - 1
        while (
            up >= 0
            and (cells_up := _row_cells(lines[up], width)) is not None
            and not label_of(lines[up]).lower().startswith("total")
        ):
            parts.append(cells_up[column])
            up -= 1
        if up < row and len(parts) >= 2 and abs(sum(parts) - total[column]) <= 0.5 * len(parts):
            return f"the quoted row {label_of(line)!r} is a part of {label!r} (its parts add up to it): give the total"
        return ""
    return ""


def _line_at(text: str, at: int) -> str:
    start = text.rfind("\n", 0, at) + 1
    end = text.find("\n", at)
    return text[start : end if end >= 0 else len(text)]


def _header_years(lines: list[str], row: int, header: list[str] | None = None) -> list[int]:
    """The years of the header above the row (in the order printed), [] when there is none near it;
    `header` gets the header's lines."""
    years: list[int] = []
    for i in range(row - 1, max(-1, row - 1 - LOOK_UP), -1):
        line = lines[i]
        found = [int(y) for y in YEAR.findall(line)]
        rest = YEAR.sub(" ", line)
        if found and HEADER_WORDS.match(rest):
            years = found + years
            if header is not None:
                header.append(line)
            continue
        if years:
            if HEADER_WORDS.match(line):
                if header is not None:
                    header.append(line)
                continue
            break
        if found:  # a year in a label or prose above the header: not a table header
            return []
    return years


def column_check(
    text: str, value_cell: tuple[int, int], period: int | None, fiscal_year: int | None = None
) -> str:
    """'' when the value's column may be the asked period's; else why it is another period's.
    `value_cell`: where in the page's `text` the value's printed number stands; `fiscal_year`: the filing's
    own year, which the header's latest year is aligned to (None: the asked period is the filing's own)."""
    if period is None:
        return ""
    line_start = text.rfind("\n", 0, value_cell[0]) + 1
    line_end = text.find("\n", value_cell[1])
    line_end = len(text) if line_end < 0 else line_end
    line = text[line_start:line_end]
    lines_above = text[:line_start].split("\n")[:-1]
    header: list[str] = []
    years = _header_years([*lines_above, line], len(lines_above), header)
    if len(years) < 2:
        return ""
    cells = [m for m in CELL.finditer(line) if m.start() >= len(label_of(line))]
    if len(cells) < len(years):
        return ""
    if len(cells) > len(years) and CHANGE_COLUMN.search(" ".join(header)):
        while len(cells) > len(years) and FOOTNOTE_MARK.fullmatch(cells[0].group()):
            cells = cells[1:]  # "Net revenue (1) $ 3,991": the label's footnote mark is no cell
        cells = cells[: len(years)]  # "2023 2022 Change": the change cells come after the years'
    else:
        cells = cells[-len(years) :]  # numbers in the label come first ("interest of $9.5, $6.8 and $6.0")
    where = value_cell[0] - line_start
    index = next((i for i, m in enumerate(cells) if m.start() <= where < m.end()), None)
    if index is None:
        return ""
    latest = max(years)
    # Aligned to the filing's own year, not the asked one: "revenue_2020" from a 2021 10-K stands in the
    # 2020 column (aligned to 2020, its header 2021 2020 2019 would read as fiscal 2020 2019 2018).
    own = period if fiscal_year is None else fiscal_year
    shift = own - latest if latest in (own, own + 1) else 0
    labels = [y + shift for y in years]
    if period not in labels or labels[index] == period:
        return ""
    return (
        f"the value stands in the {years[index]} column (fiscal {labels[index]}), "
        f"not the {period} one: give the {period} figure of the row"
    )
