"""A symbol a filing does not print, read from another filing of the same company in the folder.

A 10-K filed before 2019 may name its symbol nowhere (PG&E's for 2015: no "Trading Symbol(s)" table,
no "under the symbol"), and a press release may print no exchange tag (McDonald's). The same folder
often holds a filing of the same company that does: the company is known by what its covers print
and no other company shares, the SEC Commission File Number ("001-12609", written "1-12609" too) and
the IRS Employer Identification Number ("94-3234914"), or else by its registrant name. Taken only
when every filing sharing the key agrees on one symbol, and marked for a check (sure=False): no list of
companies, only what the filings in the folder print.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Protocol

from retrievers.catalog_draft.finding import Finding


class DraftRow(Protocol):  # retrievers.catalog_draft.draft.DraftRow, which imports this module
    found: dict[str, Finding]
    problem: str
    text: str


# A cover's identifiers: a Commission File Number (1-3 digits, a dash, 4-6 digits; the prefix's zeros
# vary: "001-12609" and "1-12609") and an IRS number (2 digits, a dash, 7). A telephone number
# ("973-1000", "(415) 901-7000") has 3 then 4 digits and is left out by the 5-digit minimum.
_FILE_NUMBER = re.compile(r"(?<![\d-])(\d{1,3})-(\d{5,6})(?![\d-])")
_IRS_NUMBER = re.compile(r"(?<![\d-])(\d{2}-\d{7})(?![\d-])")
# The cover ends where its check boxes begin; a file number further on may be another company's.
_COVER_END = re.compile(r"Indicate\s+by\s+check\s+mark|Check\s+the\s+appropriate\s+box", re.I)
_LEGAL = {
    "the",
    "inc",
    "incorporated",
    "corp",
    "corporation",
    "co",
    "company",
    "ltd",
    "plc",
    "llc",
    "holdings",
}


def cover_keys(text: str) -> set[str]:
    end = _COVER_END.search(text)
    cover = text[: end.start() if end else 4000]
    keys = {f"file:{int(a)}-{b}" for a, b in _FILE_NUMBER.findall(cover)}
    return keys | {f"irs:{n}" for n in _IRS_NUMBER.findall(cover)}


def name_key(name: str) -> str | None:
    words = [w for w in re.findall(r"[a-z0-9]+", name.casefold().replace("’", "'").replace("'", "")) if w]
    words = [w for w in words if w not in _LEGAL]
    return "name:" + "".join(words) if words else None


def symbols_from_folder(rows: Sequence[DraftRow]) -> int:
    """Give each readable row without a symbol the one its company's other filings print; returns how many."""
    by_key: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        symbol = row.found.get("symbol")
        if symbol is None or not symbol.sure or row.problem:
            continue
        for key in _keys(row):
            by_key[key].add(str(symbol.value))
    given = 0
    for row in rows:
        if "symbol" in row.found or row.problem or not row.text:
            continue
        for kind, rule in (("covers", "folder:same-cover-numbers"), ("name", "folder:same-registrant-name")):
            keys = [k for k in _keys(row) if (k.startswith("name:") == (kind == "name"))]
            found = set().union(*(by_key.get(k, set()) for k in keys)) if keys else set()
            if len(found) == 1:
                row.found["symbol"] = Finding(found.pop(), rule, sure=False)
                given += 1
                break
    return given


def _keys(row: DraftRow) -> set[str]:
    keys = cover_keys(row.text)
    company = row.found.get("company")
    named = name_key(str(company.value)) if company else None
    return keys | {named} if named else keys
