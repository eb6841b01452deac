"""Warm start: a prepared sandbox starts before its code exists, yet behaves like a fresh run_code.

Processes are checked from OUTSIDE: the descendants of this test process, read from /proc.
"""

from __future__ import annotations

import gc
import time

import pytest

from programs.sandbox import Limits, prepare, run_code
from tests.sandbox.processes import descendants, runner_processes, wait_for, waiting_for_code

RECORDS = [{"id": "d1", "v": 2.0}, {"id": "d2", "v": 5.0}]


def warm_runner() -> bool:
    """A sandbox of this test finished starting up and waits for its code (seen from /proc)."""
    return any(waiting_for_code(pid) for pid in runner_processes())


def test_a_prepared_run_closed_unused_leaves_no_process():
    before = descendants()
    prepared = prepare(RECORDS)
    assert wait_for(runner_processes), "the prepared sandbox never started"
    started = descendants() - before
    prepared.close()
    assert not (descendants() & started), "a process of the closed sandbox is still alive"
    prepared.close()  # idempotent


def test_an_abandoned_prepared_run_is_stopped_when_garbage_collected():
    before = descendants()
    prepared = prepare(RECORDS)
    assert wait_for(runner_processes)
    started = descendants() - before
    del prepared
    gc.collect()
    assert wait_for(lambda: not (descendants() & started)), "the abandoned sandbox outlived its handle"


@pytest.mark.parametrize(
    "code",
    [
        "print(df['v'].sum(), len(records))",
        "print('partial')\nx = df['no_such_column']\n",
        "import sys\nsys.exit(3)",
        "print('x' * 100)\nwhile True:\n    pass\n",
    ],
    ids=["output", "error", "exit-status", "timeout"],
)
def test_a_prepared_run_reports_what_run_code_reports(code):
    with prepare(RECORDS) as prepared:
        warm = prepared.run(code, timeout=1.0)
    assert warm == run_code(code, RECORDS, timeout=1.0)


def test_waiting_longer_than_the_startup_bound_before_the_code_comes_still_works():
    # Room for a start-up on a loaded machine (~1 s on a quiet one): only the wait after it is the test.
    limits = Limits(startup_seconds=8.0)
    prepared = prepare(RECORDS, limits=limits)
    assert wait_for(warm_runner), "the prepared sandbox never finished starting up"
    time.sleep(limits.startup_seconds + 1)  # the LM was slow: longer than start-up may take; it just waits
    res = prepared.run("print(df['v'].max())", timeout=5)
    assert res.ok and res.stdout == "5.0\n", res.error


def test_a_prepared_run_that_waited_past_its_cap_runs_the_code_in_a_fresh_process():
    prepared = prepare(RECORDS, limits=Limits(code_wait_seconds=0.5))
    assert wait_for(runner_processes)
    assert wait_for(lambda: not runner_processes()), "the expired sandbox was not stopped"
    res = prepared.run("print(int(df['v'].sum()))", timeout=5)
    assert res.ok and res.stdout == "7\n", res.error


def test_the_code_sent_on_stdin_is_not_readable_by_the_code():
    code = (
        "import os, sys\n"
        "print(repr(sys.stdin.read()))\n"
        "print(repr(os.read(0, 100)))\n"
        "print(os.readlink('/proc/self/fd/0'))\n"
    )
    with prepare(RECORDS) as prepared:
        res = prepared.run(code, timeout=5)
    assert res.ok, res.error
    assert res.stdout.splitlines() == ["''", "b''", "/dev/null"]


def test_a_prepared_run_runs_code_once_and_checks_its_input():
    with prepare(RECORDS) as prepared:
        with pytest.raises(ValueError, match="positive number of seconds"):
            prepared.run("print(1)", timeout=0)
        with pytest.raises(TypeError, match="str of Python source"):
            prepared.run(b"print(1)", timeout=5)
        assert prepared.run("print(1)", timeout=5).stdout == "1\n"
        with pytest.raises(RuntimeError, match="prepare"):
            prepared.run("print(2)", timeout=5)
    with pytest.raises(TypeError, match="list of dicts"):
        prepare({"not": "a list"})


def test_the_user_clock_starts_when_the_code_arrives_not_at_prepare():
    """A 1.5 s timeout is not eaten by the 2 s the prepared run spent waiting for code, warm."""
    prepared = prepare(RECORDS)
    assert wait_for(warm_runner), "the prepared sandbox never finished starting up"
    time.sleep(2.0)  # waiting for code, warm, longer than the timeout below
    res = prepared.run("import time\ntime.sleep(0.5)\nprint('slept')", timeout=1.5)
    assert res.ok and res.stdout == "slept\n", res.error


def test_a_run_prepared_before_its_records_exist_gets_them_with_the_code():
    code = "print(df['v'].sum(), len(records), list(df.columns))"
    with prepare(None) as prepared:
        assert wait_for(runner_processes)
        late = prepared.run(code, timeout=5, records=RECORDS)
    assert late == run_code(code, RECORDS, timeout=5)
    assert late.ok and late.stdout == "7.0 2 ['id', 'v']\n"


def test_records_go_either_to_prepare_or_to_run_exactly_once():
    with prepare(None) as prepared:
        with pytest.raises(TypeError, match="records="):
            prepared.run("print(1)", timeout=5)
        with pytest.raises(TypeError, match="list of dicts"):
            prepared.run("print(1)", timeout=5, records=[1, 2])
    with prepare(RECORDS) as prepared:
        with pytest.raises(ValueError, match="not both"):
            prepared.run("print(1)", timeout=5, records=RECORDS)
        assert prepared.alive
    assert not prepared.alive


def test_a_run_prepared_without_records_that_expired_still_gets_its_late_records_even_empty():
    prepared = prepare(None, limits=Limits(code_wait_seconds=0.5))
    assert wait_for(runner_processes)
    assert wait_for(lambda: not runner_processes()), "the expired sandbox was not stopped"
    res = prepared.run("print(len(records), len(df))", timeout=5, records=[])
    assert res.ok and res.stdout == "0 0\n", res.error
