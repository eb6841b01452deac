"""Issue 33 item 8: a fault of the MLflow store is one line, never costs the run its scores, and is logged later.

Before: a store locked by another process mid-run ended `collate run` with exit 1, an 829-line traceback,
no scores printed and the MLflow run left RUNNING; a garbage or locked `mlflow.db` at the start was a
91-line traceback (the store check caught neither).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine

from collate import run as collate_run
from evaluate import tracking
from evaluate.runs import evaluation
from evaluate.tracking.store_check import check_store

LIMIT = 2


def _args(small_corpus, out: Path, *extra: str) -> list[str]:
    corpus, index = small_corpus
    return ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out),
            "--limit", str(LIMIT), "--no-progress", "--no-autolog", "--no-judge", *extra]  # fmt: skip


@contextlib.contextmanager
def _locked(db: Path):
    """Another process's write transaction on the store (as a second `collate run`, or a sqlite3 shell
    left open, holds it): every writer waits for it, then gets 'database is locked'."""
    holder = sqlite3.connect(db, timeout=0, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        yield holder
    finally:
        holder.rollback()
        holder.close()


@pytest.fixture(scope="module")
def made_store(tmp_path_factory) -> Path:
    """An empty store made by MLflow, once for this file: its schema migrations take 3-10 s a store."""
    db = tmp_path_factory.mktemp("made_store") / "mlflow.db"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{db}")
        tracking.use_store("made")  # the schema, and an experiment the tests do not use
    return db


def _store(tmp_path, monkeypatch, made_store: Path) -> Path:
    """A store of this test's own, a copy of one made by MLflow (so locking it does not touch the session's)."""
    db = tmp_path / "store" / "mlflow.db"
    db.parent.mkdir()
    shutil.copyfile(made_store, db)
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{db}")
    tracking.use_store()  # creates the experiment, its artifacts beside this copy
    return db


@pytest.fixture
def short_lock_wait():
    """MLflow's SQLite sessions wait 20 s for a lock (`PRAGMA busy_timeout = 20000` on each); here 0.1 s,
    so a locked store fails as it would, 20 s sooner. Yields the waits MLflow asked for."""
    asked: list[str] = []

    def shorten(conn, cursor, statement, parameters, context, executemany):
        if statement.lstrip().upper().startswith("PRAGMA BUSY_TIMEOUT"):
            asked.append(statement)
            statement = "PRAGMA busy_timeout = 100;"
        return statement, parameters

    event.listen(Engine, "before_cursor_execute", shorten, retval=True)
    try:
        yield asked
    finally:
        event.remove(Engine, "before_cursor_execute", shorten)


def test_a_garbage_store_file_is_one_line_naming_the_file_before_anything_is_spent(tmp_path, monkeypatch):
    db = tmp_path / "mlflow.db"
    db.write_bytes(b"this is not a database, just text someone saved here\n" * 200)
    with pytest.raises(Exception) as caught:
        check_store(f"sqlite:///{db}")
    message = str(caught.value)
    assert type(caught.value).__name__ == "BadInput" and "\n" not in message
    assert str(db) in message and "not an SQLite database" in message and "mv " in message


def test_a_store_locked_at_the_start_is_one_line_and_exit_2(
    small_corpus, brain_server, tmp_path, monkeypatch, capsys, made_store
):
    db = _store(tmp_path, monkeypatch, made_store)
    capsys.readouterr()  # MLflow's own lines about the schema it made
    monkeypatch.setattr("evaluate.tracking.store_check.LOCK_WAIT_SECONDS", 0.2)
    with _locked(db):
        code = collate_run.main(_args(small_corpus, tmp_path / "run"))
    err = capsys.readouterr().err.strip()
    assert code == 2 and "Traceback" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("error: the MLflow store") and "locked by another process" in err and str(db) in err
    assert not brain_server.records or all(r.kind == "preflight" for r in brain_server.records)


def test_a_store_locked_mid_run_prints_the_scores_keeps_them_and_a_rerun_logs_them(
    small_corpus, brain_server, tmp_path, monkeypatch, capsys, made_store, short_lock_wait
):
    db = _store(tmp_path, monkeypatch, made_store)
    capsys.readouterr()  # MLflow's own lines about the schema it made
    monkeypatch.setattr(tracking, "RETRY_WAITS", ())  # one attempt (MLflow's own wait: short_lock_wait)
    out = tmp_path / "run"
    held: dict[str, sqlite3.Connection] = {}
    real = evaluation.answer_all

    def answer_then_lock(*args, **kwargs):  # another process takes the store while the questions are asked
        answers = real(*args, **kwargs)
        held["lock"] = sqlite3.connect(db, timeout=0, check_same_thread=False)
        held["lock"].execute("BEGIN EXCLUSIVE")
        return answers

    monkeypatch.setattr(evaluation, "answer_all", answer_then_lock)
    try:
        code = collate_run.main(_args(small_corpus, out))
    finally:
        if "lock" in held:
            held["lock"].rollback()
            held["lock"].close()
    captured = capsys.readouterr()
    assert "lock" in held
    assert short_lock_wait, "MLflow set no lock wait of its own to shorten: this test waits 20 s again"
    errors = [line for line in captured.err.splitlines() if line.strip()]
    assert code == 1 and "Traceback" not in captured.err, captured.err[-3000:]
    assert len([e for e in errors if "MLflow" in e]) == 1, errors
    fault = next(e for e in errors if "MLflow" in e)
    assert "database is locked" in fault and str(out) in fault and "--log-only" in fault
    assert "final accuracy" in captured.out, "the scores are printed even though the store failed"
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["n"] == LIMIT
    pending = json.loads((out / "mlflow.json").read_text(encoding="utf-8"))
    assert pending["logged"] is False and "database is locked" in pending["fault"]

    # Later, with the store free: --log-only asks nothing and logs the kept run into the same MLflow run.
    brain_server.records.clear()
    monkeypatch.setattr(evaluation, "answer_all", real)
    assert collate_run.main(_args(small_corpus, out, "--log-only")) == 0, capsys.readouterr().err
    assert not brain_server.records, "--log-only sent the LM a request"
    runs = [r for r in tracking.runs() if r.data.tags.get("out") == str(out)]
    assert [r.info.status for r in runs] == ["FINISHED"], "no run left RUNNING, and no second run"
    assert runs[0].info.run_id == pending["run_id"]
    assert runs[0].data.metrics["answers/n"] == LIMIT
    assert json.loads((out / "mlflow.json").read_text(encoding="utf-8"))["logged"] is True


def test_log_only_refuses_a_folder_with_questions_still_to_ask(small_corpus, brain_server, tmp_path, capsys):
    code = collate_run.main(_args(small_corpus, tmp_path / "fresh", "--log-only"))
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "--log-only" in err and "not answered" in err
    assert not brain_server.records


def test_a_store_fault_is_retried_and_then_one_line_with_the_reason(monkeypatch):
    import sqlalchemy.exc

    locked = sqlalchemy.exc.OperationalError(
        "INSERT INTO runs ...", {}, sqlite3.OperationalError("database is locked")
    )
    calls, retries = [], []

    def flaky(failures: int):
        def attempt():
            calls.append(1)
            if len(calls) <= failures:
                raise locked
            return "logged"

        return attempt

    assert tracking.with_retries(flaky(2), waits=(0, 0), on_retry=lambda r, w: retries.append(r)) == "logged"
    assert len(calls) == 3 and retries == ["database is locked"] * 2
    calls.clear()
    with pytest.raises(tracking.StoreFault) as fault:
        tracking.with_retries(flaky(9), waits=(0, 0))
    assert str(fault.value) == "database is locked" and len(calls) == 3
    with pytest.raises(ZeroDivisionError):  # a bug is not a store fault: never retried, never hidden
        tracking.with_retries(lambda: 1 / 0, waits=(0, 0))
