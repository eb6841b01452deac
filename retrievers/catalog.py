"""The catalog: which documents exist and their metadata (id, symbol, fiscal year, doctype, language).

Loaded from a MuDABench dataset JSON (its metadata rows, every gold `value_*` and `schema` ignored), a CSV
or a JSONL file; kept in the index folder as SQLite. Rows are held in memory once loaded (a collection is
hundreds of documents), so queries are plain Python and safe from any thread.
"""

from __future__ import annotations

import csv
import errno
import io
import json
import os
import sqlite3
from collections import Counter
from pathlib import Path
from typing import cast

from retrievers.doc_ids import folder_clash, id_problem
from retrievers.textfile import EncodingProblem, read_text
from retrievers.years import fiscal_year
from signatures.errors import BadInput
from signatures.types import IDENTITY_FIELDS, Document, Language, Restriction

CATALOG_FILE = "catalog.sqlite"
FIELDS = (*IDENTITY_FIELDS[1:], "language")  # what a restriction may name: the identity besides id
ENGLISH_DOCTYPES = {"US Stock Annual Report"}
_COLUMNS = (*IDENTITY_FIELDS, "language", "path", "pages", "content_hash")


class CatalogError(BadInput):  # a ValueError too, as before
    """Bad catalog input; the message says which row and how to fix it."""


class Catalog:
    def __init__(self, documents: list[Document]):
        self._docs: dict[str, Document] = {}
        for doc in documents:
            self._docs.setdefault(doc.id, doc)  # load() lets an id repeat only as the same document

    def __deepcopy__(self, memo):
        return self  # read-only once loaded: every copy of a program (DSPy optimizers copy) shares it

    # ---- loading and saving -------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path) -> Catalog:
        """From dataset.json (MuDABench), .csv or .jsonl; raises CatalogError naming the fix."""
        path = Path(path)
        if not path.is_file():
            raise CatalogError(f"catalog file not found: {path} (give a dataset.json, .csv or .jsonl file)")
        suffix = path.suffix.lower()
        if suffix not in (".json", ".jsonl", ".csv"):
            raise CatalogError(
                f"unknown catalog format {suffix!r} for {path}: use .json (MuDABench), .csv or .jsonl"
            )
        try:
            text = read_text(path)  # UTF-8 with or without BOM, GB18030/GBK, Latin-1
        except EncodingProblem as exc:
            raise CatalogError(str(exc)) from None
        if suffix == ".json":
            rows = _dataset_rows(path, text)
        elif suffix == ".jsonl":
            rows = _jsonl_rows(path, text)
        else:
            rows = _csv_rows(text)
        if not rows:
            raise CatalogError(f"{path} lists no documents")
        catalog = cls(_distinct_documents(path.name, rows))
        clash = folder_clash([d.id for d in catalog.documents()])
        if clash:
            raise CatalogError(
                f"{path.name}: ids {clash[0]!r} and {clash[1]!r} differ only in letter case, and on a "
                "case-insensitive disk (macOS, Windows) would share one index folder: rename one of them"
            )
        return catalog

    @classmethod
    def open(cls, index_dir: str | Path) -> Catalog:
        db = Path(index_dir) / CATALOG_FILE
        if not db.is_file():
            raise CatalogError(f"no catalog in {index_dir}: build the index first (collate build)")
        try:
            with sqlite3.connect(db) as conn:
                rows = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM documents ORDER BY rowid").fetchall()
        except sqlite3.DatabaseError as exc:
            raise CatalogError(
                f"{db} is unreadable ({exc}): rebuild the index with collate build "
                "(unchanged documents are not redone)"
            ) from None
        return cls([Document(**dict(zip(_COLUMNS, row, strict=True))) for row in rows])

    def save(self, index_dir: str | Path) -> Path:
        """Write the catalog aside (same folder), then rename it over the old one: readers never see half
        a catalog, and a failed save (a full disk) leaves the old one whole and no temp file. Raises
        OSError, ENOSPC for a full disk, naming the catalog file."""
        db = Path(index_dir) / CATALOG_FILE
        db.parent.mkdir(parents=True, exist_ok=True)
        tmp = db.with_suffix(".tmp")
        leftovers = (tmp, tmp.with_name(tmp.name + "-journal"))  # sqlite's rollback journal beside it
        try:
            tmp.unlink(missing_ok=True)
            self._write(tmp)
            tmp.replace(db)
        except (sqlite3.Error, OSError) as exc:
            for leftover in leftovers:
                leftover.unlink(missing_ok=True)
            raise _os_error(exc, db) from exc
        return db

    def _write(self, path: Path) -> None:
        conn = sqlite3.connect(path)
        try:
            conn.execute(
                "CREATE TABLE documents (id TEXT PRIMARY KEY, symbol TEXT NOT NULL, year INTEGER NOT NULL, "
                "doctype TEXT NOT NULL, language TEXT NOT NULL, path TEXT, pages INTEGER, content_hash TEXT)"
            )
            conn.executemany(
                f"INSERT INTO documents VALUES ({', '.join('?' * len(_COLUMNS))})",
                [tuple(getattr(d, c) for c in _COLUMNS) for d in self._docs.values()],
            )
            conn.commit()
        finally:
            conn.close()

    # ---- queries --------------------------------------------------------------------------
    def documents(self) -> list[Document]:
        return list(self._docs.values())

    def __len__(self) -> int:
        return len(self._docs)

    def __contains__(self, doc_id: str) -> bool:
        return doc_id in self._docs

    def get(self, doc_id: str) -> Document:
        try:
            return self._docs[doc_id]
        except KeyError:
            raise KeyError(f"document {doc_id!r} is not in the catalog") from None

    def update(self, doc_id: str, **changes) -> Document:
        """Record what the build learned (pages, content_hash)."""
        doc = self.get(doc_id).model_copy(update=changes)
        self._docs[doc_id] = doc
        return doc

    def _scope(self, within: list[str] | None) -> list[Document]:
        if within is None:
            return self.documents()
        return [self._docs[i] for i in within if i in self._docs]

    def select(
        self, restriction: Restriction | None = None, within: list[str] | None = None
    ) -> list[Document]:
        """Documents matching every given filter of the restriction (None = no filter on that field)."""
        r = restriction or Restriction()
        symbols = {str(s) for s in r.symbols} if r.symbols is not None else None
        return [
            d
            for d in self._scope(within)
            if (r.doctypes is None or d.doctype in r.doctypes)
            and (r.years is None or d.year in r.years)
            and (symbols is None or d.symbol in symbols)
        ]

    def distinct(self, field: str, within: list[str] | None = None) -> dict:
        """Value -> number of documents, most common first."""
        if field not in FIELDS:
            raise ValueError(f"unknown catalog field {field!r}: use one of {', '.join(FIELDS)}")
        return _counts(field, self._scope(within))

    def summary(self, within: list[str] | None = None) -> str:
        """The planner's view of the collection, a few compact lines."""
        docs = self._scope(within)
        lines = [f"{len(docs)} documents"]
        for field in ("doctype", "year", "language"):
            counts = _counts(field, docs)
            lines.append(f"{field}: " + ", ".join(f"{v} ({n})" for v, n in sorted(counts.items(), key=str)))
        symbols = sorted({d.symbol for d in docs})
        shown = ", ".join(symbols[:40]) + (f", ... ({len(symbols)} in all)" if len(symbols) > 40 else "")
        lines.append(f"symbols: {shown}")
        return "\n".join(lines)


_SQLITE_FULL = 13  # sqlite's primary result code for "database or disk is full"


def _os_error(exc: Exception, db: Path) -> OSError:
    """What a failed save raises: an OSError naming the catalog, ENOSPC for a full disk (sqlite reports
    it as its own OperationalError, which a command's OSError handler would not catch)."""
    if isinstance(exc, OSError):
        return exc if exc.filename else OSError(exc.errno, exc.strerror or str(exc), str(db))
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF == _SQLITE_FULL or "disk is full" in str(exc):
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(db))
    return OSError(errno.EIO, f"cannot write the catalog ({exc})", str(db))


def _counts(field: str, docs: list[Document]) -> dict:
    return dict(Counter(getattr(d, field) for d in docs).most_common())


def _dataset_rows(path: Path, text: str) -> list[tuple[str, dict]]:
    try:
        items = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CatalogError(f"{path} is not valid JSON ({exc}): give a MuDABench dataset.json") from exc
    if isinstance(items, dict):
        items = [items]
    if not isinstance(items, list) or not all(isinstance(i, dict) and "metadata" in i for i in items):
        raise CatalogError(
            f"{path} is not a MuDABench dataset (a list of items with 'metadata'); use .jsonl or .csv"
        )
    # Only the metadata a system may see; value_* gold fields and schema are never read.
    return [
        (
            f"item {i + 1} metadata row {j + 1}",
            {k: row.get(k) for k in (*IDENTITY_FIELDS, "language", "path")},
        )
        for i, item in enumerate(items)
        for j, row in enumerate(item["metadata"])
    ]


def _jsonl_rows(path: Path, text: str) -> list[tuple[str, dict]]:
    rows = []
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise CatalogError(f"{path} line {n} is not JSON ({exc}): one object per line") from exc
            if not isinstance(row, dict):
                raise CatalogError(f'{path} line {n} is not a JSON object: one {{"id": ...}} object per line')
            rows.append((f"line {n}", row))
    return rows


def _csv_rows(text: str) -> list[tuple[str, dict]]:
    reader = csv.DictReader(io.StringIO(text, newline=""))
    return [(f"line {reader.line_num}", row) for row in reader]  # line_num: where the row ends


# What two rows of one id may not disagree on, and how a message names each field's values.
_CLASHES = {
    "symbol": "companies",
    "year": "years",
    "doctype": "document types",
    "language": "languages",
    "path": "files",
}


def _distinct_documents(name: str, rows: list[tuple[str, dict]]) -> list[Document]:
    """One Document per id. A dataset lists a document once per question that uses it, so an id may
    repeat with the same row; one id for two different documents would silently drop one of them."""
    first: dict[str, tuple[str, Document]] = {}
    for place, row in rows:
        doc = _document(row, f"{name} {place}")
        if doc.id not in first:
            first[doc.id] = (place, doc)
            continue
        earlier_place, earlier = first[doc.id]
        for field, noun in _CLASHES.items():
            a, b = getattr(earlier, field), getattr(doc, field)
            if a != b:
                raise CatalogError(
                    f"{name} {place}: id {doc.id!r} is given twice with different {noun} ({a}, {b}), "
                    f"first on {earlier_place}: give each document its own id"
                )
    return [doc for _, doc in first.values()]


def _document(row: dict, where: str) -> Document:
    missing = [k for k in IDENTITY_FIELDS if row.get(k) in (None, "")]
    if missing:
        raise CatalogError(
            f"{where} lacks {', '.join(missing)}: every document needs id, symbol, year, doctype"
        )
    try:
        year = fiscal_year(row["year"])
    except ValueError as exc:
        raise CatalogError(f"{where}: {exc}") from None
    doctype = str(row["doctype"]).strip()
    symbol = str(row["symbol"]).strip()
    if symbol.isdigit() and doctype.startswith("A股"):
        symbol = symbol.zfill(6)  # A-share codes read from CSV/JSON as numbers lose their leading zeros
    language = (row.get("language") or ("en" if doctype in ENGLISH_DOCTYPES else "zh")).strip()
    if language not in ("zh", "en"):
        raise CatalogError(f"{where}: language {language!r} must be zh or en")
    doc_id = str(row["id"]).strip()
    problem = id_problem(doc_id)
    if problem:
        raise CatalogError(f"{where}: {problem}")
    pages = row.get("pages")
    return Document(
        id=doc_id,
        symbol=symbol,
        year=year,
        doctype=doctype,
        language=cast(Language, language),  # checked to be zh or en above
        path=(str(row["path"]).strip() or None) if row.get("path") else None,
        pages=int(pages) if pages not in (None, "") else None,
        content_hash=row.get("content_hash") or None,
    )
