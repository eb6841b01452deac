"""Bounds are plain values checked where they are read; the caller (Settings) decides the rest."""

from __future__ import annotations

import json
import math
from dataclasses import asdict

import pytest

from collate.sandbox import main
from programs.sandbox import LIMIT_RANGES, MAX_TIMEOUT_SECONDS, Limits, prepare, run_code


@pytest.mark.parametrize("timeout", [1e9, 3600.5, 0, -1, math.nan, math.inf])
def test_a_timeout_out_of_range_raises_naming_the_range(timeout):
    with pytest.raises(ValueError, match=r"0 < timeout <= 3600"):
        run_code("print(1)", [], timeout=timeout)


def test_a_timeout_that_is_not_a_number_raises_type_error():
    for timeout in (True, "20", None):
        with pytest.raises(TypeError, match=r"0 < timeout <= 3600"):
            run_code("print(1)", [], timeout=timeout)


def test_a_prepared_run_rejects_a_huge_timeout_and_still_runs_with_a_good_one():
    with prepare([{"v": 2}]) as run:
        with pytest.raises(ValueError, match="0 < timeout <= 3600"):
            run.run("print(df['v'].sum())", 1_000_000_000)
        assert run.run("print(df['v'].sum())", MAX_TIMEOUT_SECONDS).stdout == "2\n"


def test_cli_huge_timeout_exits_2_with_one_line_naming_the_range(tmp_path, capsys):
    (tmp_path / "code.py").write_text("print(1)", encoding="utf-8")
    (tmp_path / "records.json").write_text("[]", encoding="utf-8")
    for timeout in ("1000000000", "0", "nan"):
        argv = ["--code", str(tmp_path / "code.py"), "--records", str(tmp_path / "records.json")]
        assert main([*argv, "--timeout", timeout]) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        err = captured.err.strip()
        assert len(err.splitlines()) == 1 and "--timeout" in err and "0 < timeout <= 3600" in err


def test_limits_are_built_from_plain_values_and_round_trip():
    plain = {
        "memory_mb": 768,
        "cpu_seconds": 30,
        "max_processes": 4,
        "max_open_files": 128,
        "disk_mb": 16,
        "output_bytes": 50_000,
        "startup_seconds": 30,
        "code_wait_seconds": 120.5,
        "allow_unisolated": False,
        "strict": None,
    }
    limits = Limits(**plain)
    assert asdict(limits) == plain and Limits(**asdict(limits)) == limits
    assert set(LIMIT_RANGES) == set(plain) - {"strict", "allow_unisolated"}


@pytest.mark.parametrize(
    ("field", "value", "error", "words"),
    [
        ("memory_mb", 10, ValueError, "512 <= memory_mb"),
        ("code_wait_seconds", 1e9, ValueError, "code_wait_seconds <= 3600"),
        ("startup_seconds", math.nan, ValueError, "startup_seconds"),
        ("cpu_seconds", 0, ValueError, "1 <= cpu_seconds <= 3600"),
        ("max_processes", 10**6, ValueError, "max_processes <= 4096"),
        ("memory_mb", "1024", TypeError, "memory_mb must be an integer"),
        ("disk_mb", 1.5, TypeError, "disk_mb must be an integer"),
        ("max_open_files", True, TypeError, "max_open_files"),
        ("strict", "yes", TypeError, "strict must be True, False or None"),
        ("allow_unisolated", "off", TypeError, "allow_unisolated must be True, False or None"),
    ],
)
def test_limits_out_of_range_or_mistyped_say_the_range(field, value, error, words):
    with pytest.raises(error, match=words):
        Limits(**{field: value})


def test_a_configured_limit_is_the_one_enforced():
    code = "handles = [open('/dev/null') for _ in range(100)]\nprint(len(handles))"
    assert run_code(code, [], timeout=10, limits=Limits(max_open_files=200)).stdout == "100\n"
    res = run_code(code, [], timeout=10, limits=Limits(max_open_files=40))
    assert res.limit == "files" and "open-files limit of 40" in res.error


def test_cli_retired_strict_flag_is_accepted_and_full_isolation_runs(tmp_path, capsys):
    (tmp_path / "code.py").write_text("print(1)", encoding="utf-8")
    (tmp_path / "records.json").write_text("[]", encoding="utf-8")
    argv = ["--code", str(tmp_path / "code.py"), "--records", str(tmp_path / "records.json"), "--strict"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["stdout"] == "1\n"


def test_cli_a_sandbox_setting_it_does_not_know_exits_2_naming_it(tmp_path, capsys, monkeypatch):
    (tmp_path / "code.py").write_text("print(1)", encoding="utf-8")
    (tmp_path / "records.json").write_text("[]", encoding="utf-8")
    monkeypatch.setenv("COLLATE_SANDBOX", "disabled")
    assert main(["--code", str(tmp_path / "code.py"), "--records", str(tmp_path / "records.json")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "COLLATE_SANDBOX='disabled'" in captured.err and "off" in captured.err
