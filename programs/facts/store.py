"""The fact store: every extracted value with its provenance, in SQLite, reused across questions.

A fact is keyed by (document, the document's content hash, field name, field description) and carries
the model and extractor prompt version that produced it. The content hash (the build's sha256 of the
file, in the index's catalog) ties a fact to the bytes it was read from: a filing replaced under the
same id and rebuilt has another hash, so its old facts are never reused (they answered questions with
values on none of its current pages, issue 33), and a fact stored before hashes were kept (content
"") serves only a document whose catalog has no hash either. Otherwise: a later question that needs the same value of the same document
reuses it instead of asking the LM again, and a run that died resumes asking only for what is
missing. Reuse never crosses a model or prompt change unless asked (an optimized extractor must not be
scored on the old one's facts). A reworded description of the same field (same name, type and unit)
is matched by meaning when a FieldMatcher is given (programs.facts.field_match), and every such
merge is reported with both descriptions. Writes are serialized by a lock so extractor threads can
share it; the latest extraction of a key replaces the previous one.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from programs.facts import repair_history
from programs.facts.field_match import FieldMatcher
from signatures.errors import BadInput
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
    field_type TEXT NOT NULL DEFAULT '',
    field_unit TEXT NOT NULL DEFAULT '',
    verdict TEXT NOT NULL DEFAULT '',
    verdict_reason TEXT NOT NULL DEFAULT '',
    scale REAL,
    scale_source TEXT NOT NULL DEFAULT '',
    content_hash TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (doc_id, content_hash, field, description)
)
"""
FROZEN_FIELDS = "fields_at_start"  # the TEMP table known_fields() reads while frozen
# A store written before content hashes were kept has them outside its key: its table is copied into
# the new one (their facts with content "", reused only for documents without a hash).
MIGRATE_CONTENT_HASH = (
    "ALTER TABLE facts RENAME TO facts_before_content_hash",
    SCHEMA,
    "INSERT INTO facts ({columns}, created_at) SELECT {old}, created_at FROM facts_before_content_hash",
    "DROP TABLE facts_before_content_hash",
)
# Columns added after the first release: a store written before them gains them on open.
ADDED_COLUMNS = {
    "field_type": "TEXT NOT NULL DEFAULT ''",
    "field_unit": "TEXT NOT NULL DEFAULT ''",
    "verdict": "TEXT NOT NULL DEFAULT ''",
    "verdict_reason": "TEXT NOT NULL DEFAULT ''",
    "scale": "REAL",
    "scale_source": "TEXT NOT NULL DEFAULT ''",
}
COLUMNS = (
    "doc_id",
    "field",
    "description",
    "disclosed",
    "value",
    "unit",
    "quote",
    "page",
    "model",
    "prompt_version",
    "field_type",
    "field_unit",
    "verdict",
    "verdict_reason",
    "scale",
    "scale_source",
    "content_hash",
)


@dataclass(frozen=True)
class Reuse:
    """Which stored facts a lookup may return: those of this model and extractor prompt (unless
    any_model), by exact description, or by meaning when a matcher is given. `also`: the other
    (model, prompt) pairs of an extraction cascade (programs/stages/cascade.py), whose strong model's
    facts an escalated document reuses; a fact of any model outside these is never reused."""

    model: str = ""
    prompt_version: str = ""
    any_model: bool = False
    matcher: FieldMatcher | None = None  # None = exact descriptions only
    also: tuple[tuple[str, str], ...] = ()

    def allows(self, fact: Fact) -> bool:
        made_by = (fact.model, fact.prompt_version)
        return self.any_model or made_by == (self.model, self.prompt_version) or made_by in self.also


@dataclass
class Merge:
    """A stored fact reused for a reworded field: shown in the trace so a wrong merge can be seen and undone."""

    doc_id: str
    field: str
    asked: str  # the description the plan asked for
    stored: str  # the description the fact was extracted under
    how: str  # why code took them as the same


class FactStoreError(BadInput):  # a ValueError too, as before
    """The fact store cannot be opened or written; the message names the fix."""


class FactStore:
    """SQLite-backed facts; `path=None` keeps them in memory (tests, throwaway runs).

    Opening checks that the store is usable (a SQLite file we can write), so a run fails before its
    first LM call rather than after paying for every extraction.
    """

    def __init__(self, path: str | Path | None = None):
        self.path = str(path) if path else ":memory:"
        self._lock = threading.Lock()
        self._frozen = False  # known_fields() reads the copy frozen_fields() made
        self.write_failures = 0  # saves that failed (disk full): the run went on with those facts in memory
        try:
            if path:
                if Path(path).is_dir():
                    raise FactStoreError(
                        f"fact store {path} is a folder: pass a file path such as {Path(path) / 'facts.sqlite'}"
                    )
                Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            if path:
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(SCHEMA)
            self._conn.execute(repair_history.TABLE)
            present = {row[1] for row in self._conn.execute("PRAGMA table_info(facts)")}
            for column, kind in ADDED_COLUMNS.items():
                if column not in present:
                    self._conn.execute(f"ALTER TABLE facts ADD COLUMN {column} {kind}")
            if "content_hash" not in present:
                self._migrate_content_hash()
            self._conn.execute("BEGIN IMMEDIATE")  # takes the write lock: fails now if the file is read-only
            self._conn.execute("ROLLBACK")
        except (sqlite3.Error, OSError) as e:
            raise FactStoreError(
                f"cannot use fact store {path}: {e}; pass a writable file with --fact-store (COLLATE_FACT_STORE), "
                "or move a damaged one aside (facts are a cache: a new store re-asks what it needs)"
            ) from None

    def _migrate_content_hash(self) -> None:
        """Move a store written before content hashes into the keyed table, in one transaction."""
        old = [c for c in COLUMNS if c != "content_hash"]
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in MIGRATE_CONTENT_HASH:
                self._conn.execute(statement.format(columns=", ".join(old), old=", ".join(old)))
            self._conn.execute("COMMIT")
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise

    def __deepcopy__(self, memo):
        return self  # one store shared by every copy of the program (DSPy optimizers deep-copy)

    def get(self, doc_id: str, field: str, description: str, content_hash: str = "") -> Fact | None:
        """The fact read from this content of the document (content_hash "": a document without a hash)."""
        with self._lock:
            row = self._conn.execute(
                f"SELECT {', '.join(COLUMNS)} FROM facts WHERE doc_id=? AND content_hash=? AND field=? AND description=?",
                (doc_id, content_hash, field, description),
            ).fetchone()
        return _to_fact(row) if row else None

    def lookup(
        self, doc_id: str, specs: list[FieldSpec], reuse: Reuse | None = None, content_hash: str = ""
    ) -> tuple[dict[str, Fact], list[Merge]]:
        """Known facts of a document for these fields (by field name), and the merges made to find them:
        only facts read from the content `content_hash` (the catalog's hash of the file the index holds).
        reuse=None: any stored fact with the exact description (the policy of the first release)."""
        reuse = reuse or Reuse(any_model=True)
        known, merges = {}, []
        for spec in specs:
            fact = self.get(doc_id, spec.name, spec.description, content_hash)
            if fact is not None and reuse.allows(fact) and asked_as(fact, spec):
                known[spec.name] = fact
                continue
            if reuse.matcher is None:
                continue
            for candidate in self.same_field(doc_id, spec, content_hash):
                if not reuse.allows(candidate):
                    continue
                same, how = reuse.matcher.same_meaning(spec.description, candidate.description)
                if same:
                    known[spec.name] = candidate.model_copy(update={"description": spec.description})
                    merges.append(Merge(doc_id, spec.name, spec.description, candidate.description, how))
                    logger.info(
                        "reusing %s.%s: %r as %r (%s)",
                        doc_id,
                        spec.name,
                        spec.description,
                        candidate.description,
                        how,
                    )
                    break
        return known, merges

    def same_field(self, doc_id: str, spec: FieldSpec, content_hash: str = "") -> list[Fact]:
        """Stored facts of this content of the document with this field's name, type and unit, under any
        description."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {', '.join(COLUMNS)} FROM facts WHERE doc_id=? AND content_hash=? AND field=? "
                "AND field_type=? AND field_unit=? ORDER BY created_at DESC",
                (doc_id, content_hash, spec.name, spec.type, spec.unit),
            ).fetchall()
        return [_to_fact(r) for r in rows]

    def known_fields(self, doc_ids: list[str] | None = None, limit: int = 50) -> list[FieldSpec]:
        """The fields held for these documents (all when None), one description each, most used first:
        what the planner is shown so it can name an existing field instead of inventing a new one.
        While frozen (`frozen_fields`), the fields as they stood when the freeze began."""
        where = ""
        args: tuple[str, ...] = ()
        if doc_ids is not None:
            where, args = f"WHERE doc_id IN ({', '.join('?' * len(doc_ids))}) AND ", tuple(doc_ids)
        else:
            where = "WHERE "
        with self._lock:
            table = FROZEN_FIELDS if self._frozen else "facts"
            rows = self._conn.execute(
                f"SELECT field, field_type, field_unit, MIN(description), COUNT(*) AS n FROM {table} {where}field_type != '' "
                "GROUP BY field, field_type, field_unit ORDER BY n DESC, field LIMIT ?",
                (*args, limit),
            ).fetchall()
        return [FieldSpec(name=f, type=t, unit=u, description=d) for f, t, u, d, _ in rows]

    @contextmanager
    def frozen_fields(self) -> Iterator[None]:
        """known_fields() as the store stands now, for the whole block, whatever is stored meanwhile.

        Why: a dataset run plans its questions in waves (programs/batch.py); a later wave's planner must be
        shown what the first wave's was, or its prompts (and plans) would depend on the wave size. A copy of
        the (document, field, type, unit, description) columns in a TEMP table of this connection: on disk
        beside SQLite's temp files, not in Python's memory. Nested freezes keep the outer one."""
        with self._lock:
            if self._frozen:
                outer = True
            else:
                outer = False
                try:
                    self._conn.execute(f"DROP TABLE IF EXISTS temp.{FROZEN_FIELDS}")
                    self._conn.execute(
                        f"CREATE TEMP TABLE {FROZEN_FIELDS} AS SELECT doc_id, field, field_type, field_unit, "
                        "description FROM facts"
                    )
                    self._frozen = True
                except (
                    sqlite3.Error,
                    OSError,
                ) as exc:  # no room for the copy: later waves see the live store
                    logger.warning("fact store %s: cannot freeze the known fields (%s)", self.path, exc)
        try:
            yield
        finally:
            if not outer and self._frozen:
                with self._lock:
                    self._frozen = False
                    try:
                        self._conn.execute(f"DROP TABLE IF EXISTS temp.{FROZEN_FIELDS}")
                    except sqlite3.Error:  # the store was closed meanwhile: its TEMP table went with it
                        pass

    def put_many(self, facts: list[Fact]) -> None:
        rows = [
            (
                f.doc_id,
                f.field,
                f.description,
                int(f.disclosed),
                f.value,
                f.unit,
                f.quote,
                f.page,
                f.model,
                f.prompt_version,
                f.field_type,
                f.field_unit,
                f.verdict,
                f.verdict_reason,
                f.scale,
                f.scale_source,
                f.content_hash,
            )
            for f in facts
        ]
        try:
            with self._lock:
                self._conn.executemany(
                    f"INSERT OR REPLACE INTO facts ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                    rows,
                )
        except (sqlite3.Error, OSError) as exc:
            # The store is a cache: a full disk must not throw away facts already paid for. The caller keeps
            # them in memory for this run; only their reuse by a later run is lost.
            self.write_failures += 1
            logger.warning(
                "fact store %s: could not save %d fact(s) (%s); this run goes on with them in memory, "
                "a later run will extract them again. Free disk space to keep them.",
                self.path,
                len(rows),
                exc,
            )
            return
        logger.debug("stored %d facts in %s", len(rows), self.path)

    def record_extractions(self, model: str, asked: list[str], repaired: list[str]) -> None:
        """Which documents one extraction asked the model and which it asked again (repair_history.py)."""
        if not asked:
            return
        try:
            with self._lock:
                repair_history.record(self._conn, model, asked, repaired)
        except (sqlite3.Error, OSError) as exc:  # the history only informs quotes: never fail a run over it
            logger.warning("fact store %s: could not record the extraction calls (%s)", self.path, exc)

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM facts").fetchone()[0]

    def __bool__(self) -> bool:
        return True  # an empty store is still a store (`facts or default` must not replace it)

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def asked_as(fact: Fact, spec: FieldSpec) -> bool:
    """The fact was extracted as this type and unit (a fact stored before they were kept says nothing)."""
    return fact.field_type in ("", spec.type) and fact.field_unit in ("", spec.unit)


def _to_fact(row) -> Fact:
    data = dict(zip(COLUMNS, row, strict=True))
    data["disclosed"] = bool(data["disclosed"])
    return Fact(**data)
