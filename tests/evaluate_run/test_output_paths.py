"""Output paths and numeric flags are checked before anything is spent (issue 22 items 2, 8, 9).

Each case gives a dataset and index that do not exist: a check that ran after loading them (let alone
after the optimization) would report those instead, so the message proves the order."""

from __future__ import annotations

from pathlib import Path

import pytest

import collate.compile as compile_cli
import collate.run as run_cli
from programs.compiled import save_or_keep
from tests.conftest import mount_tmpfs

COMMON = ["--dataset", "/nonexistent/ds.json", "--index", "/nonexistent/index"]


@pytest.fixture
def read_only(tmp_path):
    unmount = mount_tmpfs(tmp_path / "ro", "ro,size=64k")
    yield tmp_path / "ro"
    unmount()


def _compile(out, capsys, *extra):
    code = compile_cli.main([*COMMON, "--optimizer", "bootstrap", "--out", str(out), *extra])
    return code, capsys.readouterr().err


def test_compile_out_in_a_read_only_folder_is_refused_first(read_only, capsys):
    code, err = _compile(read_only / "compiled.json", capsys)
    assert code == 2 and "--out" in err and "cannot write in" in err and "ds.json" not in err


def test_compile_out_under_a_file_or_naming_a_folder_is_refused_first(tmp_path, capsys):
    (tmp_path / "plain").write_text("x")
    code, err = _compile(tmp_path / "plain" / "compiled.json", capsys)
    assert code == 2 and "is a file, not a folder" in err
    code, err = _compile(tmp_path, capsys)
    assert code == 2 and "is a folder: give a file name" in err


@pytest.mark.parametrize(
    "flags, words",
    [
        (["--max-demos", "-1"], "--max-demos must be 0 or more"),
        (["--threshold", "7"], "--threshold must be between 0 and 1"),
        (["--threads", "0"], "--threads must be at least 1"),
    ],
)
def test_compile_flags_that_would_compile_nothing_are_refused(tmp_path, capsys, flags, words):
    code, err = _compile(tmp_path / "compiled.json", capsys, *flags)
    assert code == 2 and words in err


def test_run_out_read_only_or_a_file_is_refused_first(read_only, tmp_path, capsys):
    assert run_cli.main([*COMMON, "--out", str(read_only / "run")]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "cannot write in" in err and "Traceback" not in err
    (tmp_path / "afile").write_text("x")
    assert run_cli.main([*COMMON, "--out", str(tmp_path / "afile")]) == 2
    assert "is a file: give a folder" in capsys.readouterr().err


class _Program:
    def save(self, path):
        Path(path).write_text("{}")


def test_a_save_that_fails_at_the_end_keeps_the_program_elsewhere(read_only, tmp_path, monkeypatch, caplog):
    monkeypatch.chdir(tmp_path)
    saved = save_or_keep(_Program(), read_only / "compiled.json", {})
    assert saved.parent == tmp_path and saved.read_text() == "{}"
    assert any("saved the compiled program to" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(
    "uri, words",
    [
        ("bogus://x", "is not a store MLflow knows"),
        ("file:///tmp/mlruns-x", "is a file store, which MLflow 3 refuses"),
        ("http://127.0.0.1:9", "cannot reach the MLflow server at http://127.0.0.1:9"),
    ],
)
def test_a_store_that_cannot_take_the_run_is_one_line_before_anything_is_spent(
    tmp_path, monkeypatch, capsys, uri, words
):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    assert run_cli.main([*COMMON, "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert words in err and "ds.json" not in err and "Traceback" not in err
    code, err = _compile(tmp_path / "compiled.json", capsys)
    assert code == 2 and words in err


def test_a_read_only_store_is_refused_first(read_only, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MLFLOW_TRACKING_URI", f"sqlite:///{read_only}/mlflow.db")
    assert run_cli.main([*COMMON, "--out", str(tmp_path / "run")]) == 2
    assert "cannot write the MLflow store" in capsys.readouterr().err
