"""A row of short column labels with no period in it: "股份类别 股权登记日 除权（息）日 现金红利发放日",
"Declaration date Record date Payment date Amount".

A dividend's schedule is such a table: its one row of dates says nothing without the labels above it, and
a chunk boundary between the two leaves the row unfindable by "股权登记日" (statements.column_header keeps
them together). By its form alone a line of short words may also be a title, a running header or a row
label wrapped before its figures; the guards here are on form (no digit, no punctuation of a sentence or a
label list, no connective words, not in capitals), and column_header asks in addition for a row of dates
right under it.
"""

from __future__ import annotations

import re

MIN_CELLS = 3
MAX_CELLS = 10  # Chinese cells
MAX_WORDS = 12  # English words: cells are not told apart, "Record date" is two
MAX_CELL_CHARS = 10  # "现金红利发放日" is 7, "除权（息）日" 6
# the punctuation of prose, of a label that introduces a list ("Current assets:") or of several clauses
_PROSE_MARKS = re.compile(r"[，。；：、！？,;:!?]|\.$")
_HAN = re.compile(r"[\u3400-\u9fff]")
_WORD = re.compile(r"^[A-Za-z][A-Za-z'’&/().-]*$")
# words that join a phrase or a sentence ("Notes to Consolidated Financial Statements", "Table of
# Contents", "The Board declared a dividend"); a row of cell labels strings nouns without them
_CONNECTIVES = frozenset(
    "a an and are as at be by for from in into is of on or our than that the their this to was we were "
    "which with its".split()
)


def label_header(line: str) -> bool:
    """A row of MIN_CELLS or more short labels, Chinese or English, and nothing else."""
    line = line.replace("|", " ").strip()
    if not line or re.search(r"\d", line) or _PROSE_MARKS.search(line):
        return False
    tokens = line.split()
    if _HAN.search(line):
        return MIN_CELLS <= len(tokens) <= MAX_CELLS and all(
            _HAN.search(t) and len(t) <= MAX_CELL_CHARS for t in tokens
        )
    return (
        MIN_CELLS <= len(tokens) <= MAX_WORDS
        and all(_WORD.match(t) for t in tokens)
        and tokens[0][:1].isupper()
        and not line.isupper()  # a company's name, a running title, "CASH FLOWS FROM OPERATING ACTIVITIES"
        and not any(t.lower() in _CONNECTIVES for t in tokens)
    )
