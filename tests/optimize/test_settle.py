"""A compile stopped by its budget waits for the optimizer's leftover threads: one still being started must
not crash it (MIPROv2 at --max-calls 300 on the demo ended in "RuntimeError: cannot join thread before it
is started", a traceback after the work was done)."""

from __future__ import annotations

import threading
import time

from programs.lm import spend


def test_a_thread_listed_before_it_has_started_is_waited_for_not_a_crash(monkeypatch):
    ran = threading.Event()
    late = threading.Thread(target=ran.set)  # listed (threading's limbo) but not started yet
    real = threading.enumerate
    monkeypatch.setattr(spend.threading, "enumerate", lambda: [*real(), late])
    threading.Timer(0.2, late.start).start()
    started = time.monotonic()
    spend.settle(set(real()), seconds=5.0)
    assert ran.is_set() and time.monotonic() - started < 5.0


def test_a_thread_that_never_starts_ends_the_wait_at_the_deadline(monkeypatch):
    never = threading.Thread(target=lambda: None)
    real = threading.enumerate
    monkeypatch.setattr(spend.threading, "enumerate", lambda: [*real(), never])
    started = time.monotonic()
    spend.settle(set(real()), seconds=0.3)
    assert 0.3 <= time.monotonic() - started < 2.0
