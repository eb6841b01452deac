"""Code runs in the sandbox over all records; an error goes back to the fixer (up to 3 rounds)."""

from __future__ import annotations

from programs.analyst import Resources
from programs.code_writer import CodeWriter, strip_fences

RECORDS = [{"id": f"d{i}", "symbol": f"60000{i}", "year": 2023, "doctype": "A股年报", "ratio": float(i)} for i in range(5)]


def writer(settings, store) -> CodeWriter:
    return CodeWriter(Resources(store, None, settings))


def test_first_code_errors_and_the_fixed_code_runs_over_all_records(settings, store, use_lm):
    lm = use_lm(**{
        "[[ ## error ## ]]": {"fixed_code": "print(int(df['ratio'].sum()), len(df))"},
        "[[ ## columns ## ]]": {"code": "```python\nprint(df['no_such_column'].sum())\n```"},
    })  # fmt: skip
    out = writer(settings, store)(question="sum?", columns="ratio", records=RECORDS)
    assert out.ok and out.result == "10 5"  # all five records, not just the sample
    assert len(out.attempts) == 2 and "KeyError" in out.attempts[0]["error"]
    assert "no_such_column" in lm.history[1]["messages"][-1]["content"]  # the fixer saw code and error


def test_gives_up_after_three_fix_rounds(settings, store, use_lm):
    lm = use_lm(**{"[[ ## error ## ]]": {"fixed_code": "raise ValueError('still broken')"},
                   "[[ ## columns ## ]]": {"code": "1/0"}})  # fmt: skip
    out = writer(settings, store)(question="q", columns="ratio", records=RECORDS)
    assert not out.ok and len(out.attempts) == 4 and len(lm.history) == 4
    assert out.result.startswith("ERROR:") and "still broken" in out.result


def test_strip_fences():
    assert strip_fences("```python\nprint(1)\n```") == "print(1)"
    assert strip_fences("Here:\n```\nx = 1\n```\nDone") == "x = 1"
    assert strip_fences("print(2)") == "print(2)"
