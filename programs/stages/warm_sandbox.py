"""Sandbox processes started ahead of the code they will run, so their start-up is off the critical path.

Starting a sandbox (bwrap, interpreter, pandas import, DataFrame of the records) takes ~0.3 s. The
code-writer starts each attempt's process BEFORE its LM call, and `warm_up()` starts the first one at
the start of a question, while planning and extraction run, before the records exist (they then
travel with the code). One object per program, shared by every copy of it: DSPy optimizers deep-copy
modules, and a live process must not be copied.
"""

from __future__ import annotations

import threading


class WarmSandboxes:
    def __init__(self, limits=None):
        """limits: programs.sandbox.Limits for every run (None = its defaults)."""
        self.limits = limits
        self._ahead = None  # at most one process started by warm_up(), not used yet
        self._lock = threading.Lock()

    def __deepcopy__(self, memo):
        return self

    def start(self, records: list[dict] | None):
        """A process warming up for `records` (None: they come with the code). Imported lazily: only
        a program that runs code pays for the sandbox module."""
        from programs.sandbox import prepare

        return prepare(records, limits=self.limits)

    def warm_up(self) -> None:
        """Start the next question's first process now. Idempotent while it is unused and alive."""
        with self._lock:
            if self._ahead is not None and self._ahead.alive:
                return
            stale, self._ahead = self._ahead, self.start(None)
        if stale is not None:
            stale.close()

    def discard(self) -> None:
        """Stop the process warm_up() started when the question will run no code (planning failed, no
        value came back): it would otherwise wait for code until it expires."""
        with self._lock:
            spare, self._ahead = self._ahead, None
        if spare is not None:
            spare.close()

    def take(self, records: list[dict]):
        """The process warm_up() started, if it is still alive, else a fresh one for `records`."""
        with self._lock:
            spare, self._ahead = self._ahead, None
        if spare is not None and spare.alive:
            return spare
        if spare is not None:  # expired (it waited too long for code) or died
            spare.close()
        return self.start(records)
