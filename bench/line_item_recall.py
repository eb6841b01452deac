"""Line items on filings no one tuned to: is a row printing the item, with its amounts, among the top k?

    python -m bench.line_item_recall --index DIR [--k 5] [--show-misses]

The extractor searches each document with a field's plain description ("total assets", "net income"),
as the planner writes it, not with a FinanceBench question. This bench asks that question of every
document of an index (build one with `collate build --catalog CATALOG --pdf-dir DIR --index DIR`, e.g. over
`../shared/realdocs/financebench-more`, whose companies no rule or setting was tuned on) for nine line
items of the primary statements. The truth is decided by the page, not by the ranking: a chunk holds the
item when one of its lines starts with the item's usual labels (FIELDS: "Total net sales", "Net
revenues", "Income from operations", "Purchases of property and equipment", ...) and prints an amount on
that line. A document with no such line for an item is not asked about it.

Printed per mode (hybrid as shipped, BM25 alone): hits / items asked. `terms` is the hybrid search as
the extractor sends it when the planner adds search terms (FieldSpec.search_terms: "the line item's usual
names and the statement or section it sits in"): the description and, as terms, TERMS' textbook names of
the item and its statement, the same for every filing (not read from any of them).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

# an amount on the label's own line: 1,234 (with $ or a parenthesis before it) or "$ 5"
_AMOUNT = r"[^\n]*?(?:\(?\d{1,3}(?:,\d{3})+|\s\$\s*\(?\d)"
FIELDS = {
    "total revenue": r"(?:total\s+)?(?:net\s+)?(?:operating\s+)?(?:revenues?|sales)\b",
    "net income": r"net\s+income(?:\s*\(loss\))?\b",
    "total assets": r"total\s+assets\b",
    "total liabilities": r"total\s+liabilities\b(?!\s+and)",
    "cash and cash equivalents": r"cash\s+and\s+cash\s+equivalents\b",
    "operating income": r"(?:operating\s+income|income\s+from\s+operations)\b",
    "net cash provided by operating activities": (
        r"(?:net\s+)?cash\s+(?:provided\s+by|from|generated\s+(?:by|from))\s+(?:\w+\s+)?operating\s+activities"
    ),
    "total stockholders' equity": r"total\s+(?:\w+\s+)?(?:stockholders|shareholders|shareowners)['’]?\s+equity\b",
    "capital expenditures": (
        r"(?:purchases?\s+of\s+property|capital\s+expenditures|payments\s+for\s+(?:acquisition\s+of\s+)?property)"
    ),
}
# a planner's search terms for each item: its usual names in US GAAP statements, then the statement
TERMS = {
    "total revenue": ["Total revenues", "Net sales", "Consolidated Statements of Operations"],
    "net income": ["Net income", "Consolidated Statements of Operations"],
    "total assets": ["Total assets", "Consolidated Balance Sheets"],
    "total liabilities": ["Total liabilities", "Consolidated Balance Sheets"],
    "cash and cash equivalents": ["Cash and cash equivalents", "Consolidated Balance Sheets"],
    "operating income": [
        "Operating income",
        "Income from operations",
        "Consolidated Statements of Operations",
    ],
    "net cash provided by operating activities": [
        "Net cash provided by operating activities",
        "Consolidated Statements of Cash Flows",
    ],
    "total stockholders' equity": ["Total stockholders' equity", "Consolidated Balance Sheets"],
    "capital expenditures": [
        "Purchases of property and equipment",
        "Capital expenditures",
        "Consolidated Statements of Cash Flows",
    ],
}
_ROWS = {field: re.compile(rf"^[ \t]*{label}{_AMOUNT}", re.I | re.M) for field, label in FIELDS.items()}


def holding(texts: list[str], field: str) -> set[int]:
    """The chunks (indices) with a line that starts with the field's label and prints an amount."""
    return {i for i, text in enumerate(texts) if _ROWS[field].search(text)}


def measure(index: Path, k: int, show_misses: bool) -> dict[str, list[bool]]:
    from retrievers.indexing.store import IndexStore

    store = IndexStore.open(index)
    hits: dict[str, list[bool]] = defaultdict(list)
    for doc in sorted(d.id for d in store.catalog.documents() if d.id not in store.failures()):
        idx = store.index(doc)
        texts = [c.text for c in idx.chunks]
        for field in FIELDS:
            truth = holding(texts, field)
            if not truth:
                continue
            vector = idx.query_vector(field) if idx.has_dense else None
            for mode in ("hybrid", "bm25", "terms"):
                side = "bm25" if mode == "bm25" or not idx.has_dense else "hybrid"
                scores = idx.ranked(field, side, vector, terms=TERMS[field] if mode == "terms" else None)
                order = [int(i) for i in np.argsort(-scores, kind="stable")]
                hit = bool(truth & set(order[:k]))
                hits[mode].append(hit)
                if show_misses and mode != "bm25" and not hit:
                    best = min(order.index(i) for i in truth) + 1
                    print(
                        f"MISS {mode} {doc} {field!r}: first row holding it at rank {best}", file=sys.stderr
                    )
    return hits


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.line_item_recall", description=__doc__.split("\n")[0])
    p.add_argument("--index", type=Path, required=True, help="an index built with collate build")
    p.add_argument("--k", type=int, default=5, help="passages read per search (default 5, as the extractor)")
    p.add_argument("--show-misses", action="store_true", help="name each item whose row is not in the top k")
    args = p.parse_args(argv)
    if not (args.index / "manifest.json").is_file():
        print(
            f"error: {args.index} is no index: build one with collate build --index {args.index}",
            file=sys.stderr,
        )
        return 2
    hits = measure(args.index, args.k, args.show_misses)
    for mode, got in hits.items():
        print(f"{mode:<7} @{args.k} {sum(got)}/{len(got)} = {sum(got) / max(len(got), 1):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
