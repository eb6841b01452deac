"""Which MLflow store a run goes to, and whether it can take one, checked in seconds before anything is spent.

Why: a read-only store, a server that is down, a `file://` store (refused by MLflow 3.17) or a mistyped
scheme used to surface as a traceback after the run had answered every question (106-251 s measured,
issue 22). No mlflow import here: the check must be fast, and evaluate/tracking/__init__.py stays the one mlflow user.
"""

from __future__ import annotations

import os
import tempfile
import urllib.request
from pathlib import Path
from urllib.parse import urlparse

from signatures import environment
from signatures.errors import BadInput

DEFAULT_STORE_FILE = "mlflow.db"
DATABASE_SCHEMES = ("postgresql", "mysql", "mssql")  # checked by MLflow itself when the run starts
FIX = "set MLFLOW_TRACKING_URI to a store you can write (e.g. sqlite:///$PWD/mlflow.db), or unset it"


def tracking_uri() -> str:
    """The store runs go to: MLFLOW_TRACKING_URI, else sqlite:///<cwd>/mlflow.db (absolute, so it is printable)."""
    return environment.read("MLFLOW_TRACKING_URI") or f"sqlite:///{Path.cwd() / DEFAULT_STORE_FILE}"


def check_store(uri: str | None = None, timeout: float = 3.0) -> str:
    """The store's URI when a run can be logged there; BadInput naming the fix otherwise."""
    uri = uri or tracking_uri()
    scheme = urlparse(uri).scheme.split("+")[0]
    if scheme == "sqlite":
        _check_writable(Path(uri[len("sqlite:///") :]), uri)
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
