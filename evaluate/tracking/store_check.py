"""Which MLflow store a run goes to, and whether it can take one, checked in seconds before anything is spent.

Why: a read-only store, a server that is down, a `file://` store (refused by MLflow 3.17) or a mistyped
scheme used to surface as a traceback after the run had answered every question (106-251 s measured,
issue 22). No mlflow import here: the check must be fast, and evaluate/tracking/__init__.py stays the one mlflow user.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

from signatures import environment
from signatures.errors import BadInput

DEFAULT_STORE_FILE = "mlflow.db"
DATABASE_SCHEMES = ("postgresql", "mysql", "mssql")  # checked by MLflow itself when the run starts
# How long the check waits for another process's write to the store to end: MLflow itself waits 20 s a
# statement, then fails with a traceback; a lock held longer than this at the start is not a passing one.
LOCK_WAIT_SECONDS = 10.0
FIX = "set MLFLOW_TRACKING_URI to a store you can write (e.g. sqlite:///$PWD/mlflow.db), or unset it"


def tracking_uri() -> str:
    """The store runs go to: MLFLOW_TRACKING_URI, else sqlite:///<cwd>/mlflow.db (absolute, so it is printable)."""
    return environment.read("MLFLOW_TRACKING_URI") or f"sqlite:///{Path.cwd() / DEFAULT_STORE_FILE}"


def check_store(uri: str | None = None, timeout: float = 3.0) -> str:
    """The store's URI when a run can be logged there; BadInput naming the fix otherwise."""
    uri = uri or tracking_uri()
    scheme = urlparse(uri).scheme.split("+")[0]
    if scheme == "sqlite":
        db_file = Path(uri[len("sqlite:///") :])
        _check_writable(db_file, uri)
        _check_database(db_file, uri)
    elif scheme in ("http", "https"):
        _check_server(uri, timeout)
    elif scheme in ("file", ""):
        if environment.read("MLFLOW_ALLOW_FILE_STORE").lower() != "true":
            raise BadInput(
                f"MLFLOW_TRACKING_URI={uri} is a file store, which MLflow 3 refuses: use "
                f"sqlite:///{Path(urlparse(uri).path or uri).resolve()}/mlflow.db (or set MLFLOW_ALLOW_FILE_STORE=true)"
            )
        _check_writable(Path(urlparse(uri).path or uri) / "probe", uri)
    elif scheme not in DATABASE_SCHEMES:
        raise BadInput(
            f"MLFLOW_TRACKING_URI={uri}: {scheme!r} is not a store MLflow knows (sqlite:///, http(s)://, "
            f"postgresql://, mysql://, mssql://): {FIX}"
        )
    return uri


def _check_writable(db_file: Path, uri: str) -> None:
    folder = db_file.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".collate-probe-"):
            pass
        if db_file.exists() and not os.access(db_file, os.W_OK):
            raise PermissionError(13, "the store file is read-only", str(db_file))
    except OSError as exc:
        raise BadInput(f"cannot write the MLflow store {uri} ({exc.strerror or exc}): {FIX}") from None


def _check_server(uri: str, timeout: float) -> None:
    try:
        with urllib.request.urlopen(uri.rstrip("/") + "/health", timeout=timeout) as reply:
            reply.read(64)
    except Exception as exc:  # refused, timed out, DNS, an HTTP error: all mean no run can be logged
        raise BadInput(
            f"cannot reach the MLflow server at {uri} ({type(exc).__name__}: {exc}): start it "
            f"(mlflow server --backend-store-uri sqlite:///mlflow.db) or {FIX}"
        ) from None


def _check_database(db_file: Path, uri: str) -> None:
    """An existing store file must be an SQLite database no other process is writing: a garbage file or a
    lock held by another process surfaced as a traceback from inside MLflow (issue 33)."""
    if not db_file.is_file() or db_file.stat().st_size == 0:  # absent or empty: MLflow makes the schema
        return
    try:
        connection = sqlite3.connect(f"file:{db_file}?mode=rw", uri=True, timeout=LOCK_WAIT_SECONDS)
        try:
            connection.execute("PRAGMA schema_version").fetchone()  # reads the header: garbage fails here
            connection.execute("BEGIN IMMEDIATE")  # the write lock MLflow will need
            connection.rollback()
        finally:
            connection.close()
    except sqlite3.DatabaseError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            raise BadInput(
                f"the MLflow store {db_file} is locked by another process (still after {LOCK_WAIT_SECONDS:g} s): "
                f"let it finish (another collate run, an open sqlite3 shell), or {FIX}"
            ) from None
        raise BadInput(
            f"{db_file} is not an SQLite database ({exc}), so MLflow cannot keep runs in it: move it aside "
            f"(mv {db_file} {db_file}.bad) and run again, or {FIX}"
        ) from None
