"""The documents a question names: what the quote of an ask over the whole catalog expects the plan to read.

Without a dataset item's documents an ask's scope is the whole catalog, and the planner's restriction
(years, symbols, doctypes; applied by code) usually narrows it: a question naming one company and one
fiscal year reads one filing of the 22 FinanceBench dev filings, one of thousands in a real collection.
The quote cannot plan, so its total stays the whole catalog (an upper bound, said so) and this gives the
likely figure beside it: the documents of the fiscal years the question names ("2023", "FY2015",
"2021年") and, where it names companies, of those companies (a symbol or code as a whole word, or the
first distinctive word of a symbol that is a name: "Adobe" for "Adobe Inc."). Nothing named: no likely
figure (every document may be read).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from signatures.types import Document
from signatures.vocabulary import fold

YEAR = re.compile(r"(?<!\d)(19[5-9]\d|20\d\d)(?!\d)")
# Words of a company's name that do not tell it apart from others.
GENERIC = {
    "inc", "incorporated", "corp", "corporation", "co", "company", "group", "holdings", "holding", "ltd",
    "limited", "plc", "the", "and", "sa", "ag", "nv", "lp", "llc", "international", "global",
}  # fmt: skip
WORD = re.compile(r"[A-Za-z][A-Za-z&'.-]*")


def named_documents(question: str, documents: Sequence[Document]) -> tuple[list[Document], str]:
    """The documents of the years and companies the question names, and how they were named ("" and
    every document when it names neither)."""
    text = fold(question)
    years = {int(y) for y in YEAR.findall(text)} & {d.year for d in documents}
    symbols = {d.symbol for d in documents if names(text, d.symbol)}
    if not years and not symbols:
        return list(documents), ""
    chosen = [d for d in documents if (not years or d.year in years) and (not symbols or d.symbol in symbols)]
    how = [f"years {', '.join(map(str, sorted(years)))}"] if years else []
    how += [f"{', '.join(sorted(symbols))}"] if symbols else []
    return chosen, "; ".join(how)


def names(text: str, symbol: str) -> bool:
    """Whether the question names this symbol: a code or ticker ("601536", "DUNM") as a whole word, a name
    ("Adobe Inc.") by its first distinctive word, any case ("Adobe's", "ADOBE")."""
    symbol = fold(symbol).strip()
    if not symbol:
        return False
    if not re.search(r"[a-z]", symbol) or (" " not in symbol and len(symbol) <= 5):  # a code or a ticker
        # bounded by no letter or digit: "601536的" and "DUNM's" name them, "600015366" does not
        return re.search(rf"(?<![A-Za-z0-9]){re.escape(symbol)}(?![A-Za-z0-9])", text) is not None
    words = [w.strip(".'&-").lower() for w in WORD.findall(symbol)]
    distinctive = [w for w in words if len(w) >= 3 and w not in GENERIC]
    if not distinctive:
        return symbol.casefold() in text.casefold()
    return re.search(rf"(?<![a-z]){re.escape(distinctive[0])}(?![a-z])", text.casefold()) is not None
