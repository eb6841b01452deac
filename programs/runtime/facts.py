"""The fact store: every extracted value with its provenance, in SQLite, reused across questions.

A fact is keyed by (document, field name, field description): a later question that needs the same
value of the same document reuses it instead of asking the LM again, and a run that died resumes
asking only for what is missing. Writes are serialized by a lock so extractor threads can share it.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

from signatures.types import Fact, FieldSpec

logger = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS facts (
    doc_id TEXT NOT NULL,
    field TEXT NOT NULL,
    description TEXT NOT NULL,
    disclosed INTEGER NOT NULL,
    value TEXT, unit TEXT, quote TEXT, page INTEGER,
    model TEXT NOT NULL DEFAULT '',
    prompt_version TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL DEFAULT (datetime('now')),
    PRIMARY KEY (doc_id, field, description)
)
"""
COLUMNS = ("doc_id", "field", "description", "disclosed", "value", "unit", "quote", "page", "model", "prompt_version")


class FactStoreError(ValueError):
    """The fact store cannot be opened or written; the message names the fix."""


class FactStore:
    """SQLite-backed facts; `path=None` keeps them in memory (tests, throwaway runs).

    Opening checks that the store is usable (a SQLite file we can write), so a run fails before its
    first LM call rather than after paying for every extraction.
    """

    def __init__(self, path: str | Path | None = None):
        self.path = str(path) if path else ":memory:"
        self._lock = threading.Lock()
        try:
            if path:
                if Path(path).is_dir():
                    raise FactStoreError(f"fact store {path} is a folder: pass a file path such as {Path(path) / 'facts.sqlite'}")
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            if path:
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(SCHEMA)
            self._conn.execute("BEGIN IMMEDIATE")  # takes the write lock: fails now if the file is read-only
            self._conn.execute("ROLLBACK")
        except (sqlite3.Error, OSError) as e:
            raise FactStoreError(
                f"cannot use fact store {path}: {e}; pass a writable file with --fact-store (COLLATE_FACT_STORE), "
                "or move a damaged one aside (facts are a cache: a new store re-asks what it needs)"
            ) from None

    def __deepcopy__(self, memo):
        return self  # one store shared by every copy of the program (DSPy optimizers deep-copy)

    def get(self, doc_id: str, field: str, description: str) -> Fact | None:
        with self._lock:
            row = self._conn.execute(
                f"SELECT {', '.join(COLUMNS)} FROM facts WHERE doc_id=? AND field=? AND description=?",
                (doc_id, field, description),
            ).fetchone()
        return _to_fact(row) if row else None

    def lookup(self, doc_id: str, specs: list[FieldSpec]) -> dict[str, Fact]:
        """Known facts of a document for these fields, by field name."""
        known = {}
        for spec in specs:
            fact = self.get(doc_id, spec.name, spec.description)
            if fact is not None:
                known[spec.name] = fact
        return known

    def put_many(self, facts: list[Fact]) -> None:
        rows = [
            (f.doc_id, f.field, f.description, int(f.disclosed), f.value, f.unit, f.quote, f.page, f.model,
             f.prompt_version)
            for f in facts
        ]  # fmt: skip
        with self._lock:
            self._conn.executemany(
                f"INSERT OR REPLACE INTO facts ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                rows,
            )
        logger.debug("stored %d facts in %s", len(rows), self.path)

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM facts").fetchone()[0]

    def __bool__(self) -> bool:
        return True  # an empty store is still a store (`facts or default` must not replace it)

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _to_fact(row) -> Fact:
    data = dict(zip(COLUMNS, row, strict=True))
    data["disclosed"] = bool(data["disclosed"])
    return Fact(**data)
