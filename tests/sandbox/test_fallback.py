"""Without bubblewrap the sandbox degrades loudly (or refuses, when strict), never silently."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from programs.sandbox import Limits, run_code
from programs.sandbox import isolation as sandbox_isolation


@pytest.fixture
def no_bwrap(monkeypatch):
    monkeypatch.setattr(
        sandbox_isolation, "bwrap_problem", lambda: "bubblewrap (bwrap) is not installed (test)"
    )
    sandbox_isolation.warn_degraded_once.cache_clear()


def test_degraded_run_works_but_says_what_is_missing(no_bwrap, caplog, tmp_path):
    target = tmp_path / "written-by-fallback"
    with caplog.at_level(logging.WARNING, logger="programs.sandbox.isolation"):
        res = run_code(f"print(df['v'].sum())\nopen({str(target)!r}, 'w')", [{"v": 2}, {"v": 3}], timeout=5)
    assert res.stdout == "5\n"
    assert {"filesystem", "network", "pid-namespace"} <= set(res.missing_protection)
    assert any(
        "WITHOUT full isolation" in r.getMessage() and "network" in r.getMessage() for r in caplog.records
    )
    # Still an unprivileged uid of its own when the caller is root: it cannot write the caller's files.
    if Path("/proc/self").stat().st_uid == 0:
        assert not res.ok and "PermissionError" in res.error and not target.exists()


def test_degraded_run_still_enforces_rlimits_and_timeout(no_bwrap):
    assert run_code("while True:\n    pass\n", [], timeout=1.5).limit == "timeout"
    assert run_code("x = bytearray(4 << 30)\n", [], timeout=5).limit == "memory"


def test_strict_mode_refuses_instead_of_degrading(no_bwrap, monkeypatch, tmp_path):
    marker = tmp_path / "ran"
    monkeypatch.delenv("COLLATE_SANDBOX_STRICT", raising=False)
    res = run_code(f"open({str(marker)!r}, 'w').write('x')", [], timeout=5, limits=Limits(strict=True))
    assert not res.ok and res.limit == "isolation"
    assert "COLLATE_SANDBOX_STRICT" in res.error and "bwrap" in res.error
    assert not marker.exists()


def test_the_callers_strict_choice_wins_over_the_environment(no_bwrap, monkeypatch):
    """The sandbox does not read COLLATE_SANDBOX_STRICT when told: Settings reads it and passes strict."""
    monkeypatch.setenv("COLLATE_SANDBOX_STRICT", "1")
    res = run_code("print(1)", [], timeout=5, limits=Limits(strict=False))
    assert res.ok and res.stdout == "1\n" and res.missing_protection


def test_the_environment_is_still_read_when_the_caller_does_not_say_deprecated(no_bwrap, monkeypatch):
    monkeypatch.setenv("COLLATE_SANDBOX_STRICT", "1")
    with pytest.warns(DeprecationWarning, match=r"Limits\(strict=...\)"):
        res = run_code("print(1)", [], timeout=5)
    assert res.limit == "isolation"


def test_full_isolation_reports_nothing_missing():
    assert run_code("print(1)", [], timeout=5).missing_protection == []


def test_a_sandbox_that_cannot_start_is_a_failed_result_not_an_exception(monkeypatch):
    monkeypatch.setattr(sandbox_isolation, "bwrap_problem", lambda: "simulated")
    monkeypatch.setattr(
        sandbox_isolation, "interpreter", lambda: (Path("/nonexistent/python3"), Path("/nonexistent"))
    )
    res = run_code("print(1)", [], timeout=5)
    assert not res.ok and "could not start" in res.error and "/nonexistent/python3" in res.error


def test_the_process_limit_counts_per_user_namespace_from_linux_5_14():
    """Before 5.14 RLIMIT_NPROC counted every process of the user: a non-root run then lists it as missing."""
    counts = sandbox_isolation.kernel_counts_nproc_per_userns
    assert not counts("4.19.0-27-amd64") and not counts("5.13.19")
    assert counts("5.14.0-1-amd64") and counts("6.1.0-18-amd64") and counts("6.18.44-fc-v1147")
