"""The watcher may read the runner's "ready" (and "done") before the host's "run", though the host wrote
"run" first: a select can return with only the status pipe, and the runner write "ready" before the read.
Seen on a loaded machine as a finished run reported "The sandbox failed to start (exit 0)" with its
output printed. Forced here: the watcher's selector hides the control pipe whenever another pipe is ready.
"""

from __future__ import annotations

import selectors
import time

from programs.sandbox import prepare
from programs.sandbox import process as sandbox_process
from tests.sandbox.processes import runner_processes, wait_for, waiting_for_code

RECORDS = [{"id": "d1", "v": 2.0}, {"id": "d2", "v": 5.0}]


class ControlLast(selectors.DefaultSelector):
    """A selector that reports the last registered file (the watcher's control pipe) only when nothing
    else is ready, and holds it back a moment when it is ready alone: the worst order a busy machine can
    produce."""

    def __init__(self):
        super().__init__()
        self.order: list[int] = []

    def register(self, fileobj, events, data=None):
        self.order.append(fileobj if isinstance(fileobj, int) else fileobj.fileno())
        return super().register(fileobj, events, data)

    def select(self, timeout=None):
        control = self.order[-1]
        ready = super().select(timeout)
        deadline = time.monotonic() + 10.0
        # the host's "run" alone: hold it back until the runner has answered it ("ready"), then hide it
        while ready and all(key.fd == control for key, _ in ready) and time.monotonic() < deadline:
            time.sleep(0.02)
            ready = super().select(0)
        others = [(key, mask) for key, mask in ready if key.fd != control]
        return others or ready


def test_a_run_whose_ready_is_read_before_the_hosts_run_still_reports_its_outcome(monkeypatch):
    monkeypatch.setattr(sandbox_process.selectors, "DefaultSelector", ControlLast)
    before = runner_processes()
    with prepare(RECORDS) as prepared:
        # the code comes once the sandbox is warm, as when the LM answers after its start-up
        assert wait_for(lambda: any(waiting_for_code(pid) for pid in runner_processes() - before), 60)
        outcome = prepared.run("print(df['v'].sum())", timeout=5.0)
    assert outcome.ok, outcome.error
    assert outcome.stdout.strip() == "7.0"
