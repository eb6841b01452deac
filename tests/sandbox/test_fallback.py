"""Without isolation (no bubblewrap, or user namespaces off) the sandbox refuses to run generated code,
saying how to fix it; only the user's explicit COLLATE_SANDBOX=off runs it, loudly and on the record.

Before: the default was to warn and run the code on the host, where it could read ~/.ssh and reach
the network; and COLLATE_SANDBOX_STRICT=enabled (a word it did not know) was read as "not strict".
Every test here proves "never executed" with a marker file the code WOULD write: the marker folder
is world-writable, so the code could write it even as the throw-away uid a root caller's run drops to
(the opt-out tests show it does).
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

import pytest

from programs.sandbox import Limits, policy, run_code
from programs.sandbox import isolation as sandbox_isolation

FIXES = (
    "apt-get install bubblewrap",
    "kernel.unprivileged_userns_clone=1",
    "apparmor",
    "COLLATE_SANDBOX=off",
)


@pytest.fixture
def no_bwrap(monkeypatch):
    """What a machine without bubblewrap looks like to the sandbox (as in userns_off.py, for one process)."""
    monkeypatch.setattr(
        sandbox_isolation, "bwrap_problem", lambda: "bubblewrap (bwrap) is not installed (test)"
    )
    monkeypatch.delenv(policy.SANDBOX_ENV, raising=False)
    monkeypatch.delenv(policy.RETIRED_STRICT_ENV, raising=False)
    sandbox_isolation.warn_degraded_once.cache_clear()


@pytest.fixture
def marker():
    """A path the code can write whoever it runs as (tmp_path is root-only; a root run drops its uid)."""
    folder = Path(tempfile.mkdtemp(prefix="collate-sbx-marker-"))
    folder.chmod(0o777)
    yield folder / "ran"
    shutil.rmtree(folder)


def writes(marker: Path) -> str:
    return f"open({str(marker)!r}, 'w').write('x')\nprint(df['v'].sum())"


def test_without_isolation_generated_code_is_refused_by_default_and_never_runs(no_bwrap, marker):
    res = run_code(writes(marker), [{"v": 2}, {"v": 3}], timeout=5)
    assert not marker.exists(), "generated code ran without isolation"
    assert not res.ok and res.limit == "isolation" and res.stdout == ""
    assert res.unisolated is False  # nothing ran at all
    assert "bubblewrap (bwrap) is not installed (test)" in res.error  # why, on this machine
    assert all(fix in res.error for fix in FIXES), res.error  # and every way out
    assert {"filesystem", "network", "pid-namespace"} <= set(res.missing_protection)


def test_a_prepared_run_is_refused_the_same_way(no_bwrap, marker):
    from programs.sandbox import prepare

    with prepare(None) as run:
        res = run.run(writes(marker), 5, records=[{"v": 1}])
    assert res.limit == "isolation" and not marker.exists()


def test_the_opt_out_runs_the_code_and_says_so_on_every_run(no_bwrap, marker, monkeypatch, caplog):
    monkeypatch.setenv("COLLATE_SANDBOX", "off")
    before = policy.unisolated_runs()
    with caplog.at_level(logging.WARNING, logger="programs.sandbox"):
        first = run_code(writes(marker), [{"v": 2}, {"v": 3}], timeout=5)
        second = run_code("print(1)", [], timeout=5)
    loud = [r for r in caplog.records if "WITHOUT isolation" in r.getMessage()]
    assert len(loud) == 2, "the opt-out must be logged on every run, not once"
    assert all("COLLATE_SANDBOX=off" in r.getMessage() and "network" in r.getMessage() for r in loud)
    assert first.unisolated and second.unisolated  # the result says so ...
    assert policy.unisolated_runs() - before == 2  # ... and so does the process-wide count a run records
    assert second.ok and second.stdout == "1\n"
    assert first.stdout == "5\n" and marker.exists(), first.error  # the code really ran, on the host


@pytest.mark.parametrize("word", ["off", "OFF", "0", "false", "no"])
def test_the_opt_out_is_a_yes_no_setting(no_bwrap, monkeypatch, word):
    monkeypatch.setenv("COLLATE_SANDBOX", word)
    assert run_code("print(1)", [], timeout=5).unisolated


@pytest.mark.parametrize("word", ["on", "1", "", " "])
def test_the_sandbox_setting_on_or_blank_keeps_refusing(no_bwrap, monkeypatch, word, marker):
    monkeypatch.setenv("COLLATE_SANDBOX", word)
    assert run_code(writes(marker), [{"v": 1}], timeout=5).limit == "isolation"
    assert not marker.exists()


@pytest.mark.parametrize(
    ("variable", "word"), [("COLLATE_SANDBOX", "disabled"), ("COLLATE_SANDBOX_STRICT", "enabled")]
)
def test_an_unknown_word_is_refused_and_the_code_never_runs(no_bwrap, monkeypatch, marker, variable, word):
    """The issue's reproduction: COLLATE_SANDBOX_STRICT=enabled without bwrap ran the code unisolated."""
    monkeypatch.setenv(variable, word)
    with pytest.raises(ValueError, match=f"{variable}='{word}'"):
        run_code(writes(marker), [{"v": 1}], timeout=5)
    assert not marker.exists()


def test_a_bad_word_is_refused_even_where_bubblewrap_works(monkeypatch):
    """A typo must not wait for the one machine without bwrap to show up."""
    monkeypatch.setenv("COLLATE_SANDBOX", "of")
    with pytest.raises(ValueError, match="COLLATE_SANDBOX='of'"):
        run_code("print(1)", [], timeout=5)


def test_the_retired_strict_variable_is_now_the_default_and_says_so(no_bwrap, monkeypatch, marker, caplog):
    monkeypatch.setenv("COLLATE_SANDBOX_STRICT", "0")  # "not strict" no longer means "run unisolated"
    policy.warn_retired_strict.cache_clear()
    with caplog.at_level(logging.WARNING, logger="programs.sandbox"):
        res = run_code(writes(marker), [{"v": 1}], timeout=5)
    assert res.limit == "isolation" and not marker.exists()
    assert any("COLLATE_SANDBOX_STRICT is retired" in r.getMessage() for r in caplog.records)


def test_the_callers_choice_wins_over_the_environment(no_bwrap, monkeypatch, marker):
    """Settings reads COLLATE_SANDBOX itself and tells the sandbox; the sandbox then reads nothing."""
    monkeypatch.setenv("COLLATE_SANDBOX", "off")
    refused = run_code(writes(marker), [{"v": 1}], timeout=5, limits=Limits(allow_unisolated=False))
    assert refused.limit == "isolation" and not marker.exists()
    monkeypatch.setenv("COLLATE_SANDBOX", "on")
    ran = run_code("print(1)", [], timeout=5, limits=Limits(allow_unisolated=True))
    assert ran.ok and ran.unisolated


def test_the_retired_strict_limit(no_bwrap):
    with pytest.warns(DeprecationWarning, match="default"):
        assert run_code("print(1)", [], timeout=5, limits=Limits(strict=True)).limit == "isolation"
    with pytest.raises(ValueError, match="allow_unisolated=True"):
        Limits(strict=False)
    with pytest.raises(TypeError, match="allow_unisolated"):
        Limits(allow_unisolated="off")


def test_an_unisolated_run_still_drops_root_and_enforces_rlimits_and_timeout(no_bwrap, tmp_path):
    opted_out = Limits(allow_unisolated=True)
    if Path("/proc/self").stat().st_uid == 0:  # a throw-away uid: it cannot write root's own files
        res = run_code(f"open({str(tmp_path / 'x')!r}, 'w')", [], timeout=5, limits=opted_out)
        assert not res.ok and "PermissionError" in res.error and not (tmp_path / "x").exists()
    assert run_code("while True:\n    pass\n", [], timeout=1.5, limits=opted_out).limit == "timeout"
    assert run_code("x = bytearray(4 << 30)\n", [], timeout=5, limits=opted_out).limit == "memory"


def test_full_isolation_reports_nothing_missing_and_is_not_unisolated():
    res = run_code("print(1)", [], timeout=5)
    assert res.missing_protection == [] and res.unisolated is False


def test_a_sandbox_that_cannot_start_is_a_failed_result_not_an_exception(monkeypatch):
    monkeypatch.setattr(sandbox_isolation, "bwrap_problem", lambda: "simulated")
    monkeypatch.setattr(
        sandbox_isolation, "interpreter", lambda: (Path("/nonexistent/python3"), Path("/nonexistent"))
    )
    res = run_code("print(1)", [], timeout=5, limits=Limits(allow_unisolated=True))
    assert not res.ok and "could not start" in res.error and "/nonexistent/python3" in res.error


def test_the_process_limit_counts_per_user_namespace_from_linux_5_14():
    """Before 5.14 RLIMIT_NPROC counted every process of the user: a non-root run then lists it as missing."""
    counts = sandbox_isolation.kernel_counts_nproc_per_userns
    assert not counts("4.19.0-27-amd64") and not counts("5.13.19")
    assert counts("5.14.0-1-amd64") and counts("6.1.0-18-amd64") and counts("6.18.44-fc-v1147")
