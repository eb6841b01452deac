"""How often a model's facts needed a repair: one row per document a model was asked, kept in the fact store.

Why: a fact that fails the check against its page is asked once more (programs/stages/extract_repair.py),
and whether it fails is known only from the reply, so a first quote counts no repairs. That is most of
what a quote misses on real filings: the any-filing reader on the FinanceBench filings repaired 4-8 of 22
documents a command, 15-22% of its tokens (bench/estimate_accuracy.py --real). What a model did on the
documents of this fact store is the best guess of what it will do next, so the extractor writes a row per
document it asks and the quote (programs/quote/questions.py) reads the model's latest rows. Rows are per
model, never per prompt version: every compile changes the prompt, the reading is the model's.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

TABLE = """
CREATE TABLE IF NOT EXISTS extraction_calls (
    model TEXT NOT NULL,
    doc_id TEXT NOT NULL,
    repaired INTEGER NOT NULL,
    created_at TEXT NOT NULL DEFAULT (datetime('now'))
)
"""
RECENT = 500  # the latest documents a rate is read from: a model's recent runs, not its first ones


@dataclass(frozen=True)
class RepairHistory:
    """Of a model's latest `documents` asked in this store, how many needed a second call."""

    model: str
    documents: int
    repaired: int

    @property
    def share(self) -> float:
        return self.repaired / self.documents if self.documents else 0.0


def record(conn: sqlite3.Connection, model: str, asked: list[str], repaired: list[str]) -> None:
    """One row per document asked in one extraction (in the order asked)."""
    again = set(repaired)
    conn.executemany(
        "INSERT INTO extraction_calls (model, doc_id, repaired) VALUES (?, ?, ?)",
        [(model, doc_id, int(doc_id in again)) for doc_id in asked],
    )


def read(path: str | Path | None, model: str | None) -> RepairHistory | None:
    """The model's latest rows in the fact store at `path`, opened read-only (a quote writes nothing);
    None when there is no such store, no such table (a store from before) or no row of the model."""
    if not path or not model or not Path(path).is_file():
        return None
    try:
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)
        try:
            documents, repaired = conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(repaired), 0) FROM (SELECT repaired FROM extraction_calls "
                "WHERE model=? ORDER BY rowid DESC LIMIT ?)",
                (model, RECENT),
            ).fetchone()
        finally:
            conn.close()
    except sqlite3.Error:  # no table yet, or a store another process holds mid-write: nothing known
        return None
    return RepairHistory(model, documents, repaired) if documents else None
