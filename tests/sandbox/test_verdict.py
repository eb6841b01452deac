"""How the host reads a run it watched: signals and kills map to the bound that was hit."""

from __future__ import annotations

from programs.sandbox import Limits
from programs.sandbox.process import Outcome
from programs.sandbox.verdict import verdict as read_verdict

LIMITS = Limits()


def outcome(**overrides) -> Outcome:
    base = dict(stdout=b"", stderr=b"", ready=True, done=None, killed_for=None, returncode=0, elapsed=0.5)
    return Outcome(**{**base, **overrides})


def verdict(o: Outcome, via_bwrap: bool = True):
    return read_verdict(o, LIMITS, timeout=5.0, cpu=6, via_bwrap=via_bwrap)


def test_signals_that_mean_a_bound_name_it():
    assert verdict(outcome(returncode=128 + 24))[2] == "cpu"  # SIGXCPU through bwrap
    assert verdict(outcome(returncode=-24), via_bwrap=False)[2] == "cpu"  # SIGXCPU without bwrap
    assert verdict(outcome(returncode=128 + 25))[2] == "disk"  # SIGXFSZ
    ok, error, limit = verdict(outcome(returncode=128 + 9, elapsed=6.0))  # hard CPU limit
    assert (ok, limit) == (False, "cpu") and "CPU time limit of 6 s" in error


def test_a_quick_sigkill_is_reported_as_a_kill_not_a_bound():
    ok, error, limit = verdict(outcome(returncode=128 + 9, elapsed=0.1, stderr=b"boom"))
    assert (ok, limit) == (False, None) and "SIGKILL" in error and "boom" in error


def test_our_own_kills_win_and_say_which_bound():
    done = {"event": "done", "ok": True, "error": None, "limit": None}
    ok, error, limit = verdict(outcome(killed_for="output", done=done))
    assert (ok, limit) == (False, "output") and "1000000 bytes" in error


def test_the_runners_report_is_kept_and_explained():
    done = {"event": "done", "ok": False, "error": "Traceback...\nMemoryError", "limit": "memory"}
    ok, error, limit = verdict(outcome(done=done))
    assert (ok, limit) == (False, "memory")
    assert error.startswith("Traceback...\nMemoryError") and "memory limit of 1024 MB" in error


def test_a_runner_that_never_started_says_so():
    ok, error, limit = verdict(outcome(ready=False, returncode=1, stderr=b"ImportError: no pandas"))
    assert not ok and limit is None and "failed to start" in error and "no pandas" in error
