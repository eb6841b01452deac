"""Benign analysis code gives the right answers; errors read like Python's own, on the user's lines."""

from __future__ import annotations

import json
import statistics

import pytest

from collate.sandbox import main
from programs.sandbox import Limits, SandboxResult, run_code

RECORDS = [
    {"id": "d1", "symbol": "600001", "year": 2022, "doctype": "A股年报", "assets": 120.5, "sector": "bank"},
    {"id": "d2", "symbol": "600002", "year": 2022, "doctype": "A股年报", "assets": 98.0, "sector": "bank"},
    {
        "id": "d3",
        "symbol": "600003",
        "year": 2022,
        "doctype": "A股年报",
        "assets": 310.25,
        "sector": "energy",
    },
    {"id": "d4", "symbol": "600004", "year": 2022, "doctype": "A股年报", "assets": None, "sector": "energy"},
    {"id": "d5", "symbol": "600005", "year": 2022, "doctype": "A股年报", "assets": 45.0, "sector": "retail"},
]


def test_top_k_by_a_column():
    code = "top = df.dropna(subset=['assets']).nlargest(2, 'assets')\nprint(','.join(top['symbol']))"
    res = run_code(code, RECORDS, timeout=10)
    assert res == SandboxResult(True, "600003,600001\n", None, None, [])


def test_groupby_mean_matches_pandas_outside():
    code = "print(df.groupby('sector')['assets'].mean().round(3).to_json())"
    res = run_code(code, RECORDS, timeout=10)
    assert res.ok, res.error
    assert json.loads(res.stdout) == {"bank": 109.25, "energy": 310.25, "retail": 45.0}


def test_std_and_the_usual_modules_are_importable():
    code = (
        "import statistics, math, datetime, re, json\n"
        "vals = [r['assets'] for r in records if r['assets'] is not None]\n"
        "print(round(statistics.stdev(vals), 6), round(float(np.std(vals, ddof=1)), 6))\n"
        "print(datetime.date(2023, 3, 1) - datetime.date(2022, 12, 31), re.sub('0+', '0', '6000'))\n"
    )
    res = run_code(code, RECORDS, timeout=10)
    assert res.ok, res.error
    expected = round(statistics.stdev([120.5, 98.0, 310.25, 45.0]), 6)
    first, second = res.stdout.splitlines()
    assert first == f"{expected} {expected}"
    assert second == "60 days, 0:00:00 60"


def test_unicode_output_and_sys_exit_zero_are_fine():
    res = run_code(
        "print('资本充足率', len(df))\nimport sys\nsys.exit(0)\nprint('not reached')", RECORDS, timeout=10
    )
    assert res.ok and res.stdout == "资本充足率 5\n"


def test_syntax_error_reads_like_python_with_the_users_line():
    res = run_code("x = 1\ny = (2 +\n", RECORDS, timeout=10)
    assert not res.ok and res.limit is None
    assert "SyntaxError" in res.error and 'File "analysis.py", line 2' in res.error
    assert "runner" not in res.error


def test_runtime_error_names_type_message_and_user_line_not_the_runner():
    code = "a = 1\nb = df['assets'].sum()\nc = df['no_such_column']\n"
    res = run_code(code, RECORDS, timeout=10)
    assert not res.ok and res.limit is None
    assert 'File "analysis.py", line 3' in res.error
    assert "c = df['no_such_column']" in res.error
    assert res.error.rstrip().splitlines()[-1].startswith("KeyError: 'no_such_column'")
    assert "runner.py" not in res.error and "pandas/core" not in res.error


def test_error_after_output_keeps_the_output():
    res = run_code("print('partial')\n1 / 0\n", RECORDS, timeout=10)
    assert res.stdout == "partial\n"
    assert res.error.endswith("ZeroDivisionError: division by zero") and "line 2" in res.error


def test_bad_arguments_raise_with_the_fix():
    with pytest.raises(TypeError, match="list of dicts"):
        run_code("print(1)", {"not": "a list"})
    with pytest.raises(ValueError, match="positive"):
        run_code("print(1)", [], timeout=0)
    with pytest.raises(ValueError, match="memory_mb"):
        Limits(memory_mb=10)


def test_cli_prints_one_json_object_and_exits_zero_even_on_failure(tmp_path, capsys):
    (tmp_path / "ok.py").write_text("print(df['assets'].max())", encoding="utf-8")
    (tmp_path / "bad.py").write_text("raise ValueError('nope')", encoding="utf-8")
    (tmp_path / "records.json").write_text(json.dumps(RECORDS, ensure_ascii=False), encoding="utf-8")
    assert main(["--code", str(tmp_path / "ok.py"), "--records", str(tmp_path / "records.json")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is True and out["stdout"] == "310.25\n" and out["error"] is None and out["limit"] is None
    assert main(["--code", str(tmp_path / "bad.py"), "--records", str(tmp_path / "records.json")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] is False and out["error"].endswith("ValueError: nope")


def test_cli_bad_input_exits_2_with_one_line_naming_the_fix(tmp_path, capsys):
    (tmp_path / "code.py").write_text("print(1)", encoding="utf-8")
    (tmp_path / "records.json").write_text('{"a": 1}', encoding="utf-8")
    assert main(["--code", str(tmp_path / "code.py"), "--records", str(tmp_path / "records.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "list of objects" in err
    assert main(["--code", str(tmp_path / "missing.py"), "--records", str(tmp_path / "records.json")]) == 2
    assert "cannot read --code" in capsys.readouterr().err


def test_concurrent_runs_keep_their_own_records_and_output():
    from concurrent.futures import ThreadPoolExecutor

    def one(i: int):
        return run_code("print(df['n'].sum())", [{"n": i}, {"n": i * 10}], timeout=20)

    with ThreadPoolExecutor(max_workers=3) as pool:
        results = list(pool.map(one, [1, 2, 3]))
    assert [r.stdout for r in results] == ["11\n", "22\n", "33\n"]


def test_non_json_values_arrive_as_strings():
    import datetime

    res = run_code(
        "print(df['d'][0], type(records[0]['d']).__name__)", [{"d": datetime.date(2023, 6, 30)}], timeout=10
    )
    assert res.stdout == "2023-06-30 str\n"
