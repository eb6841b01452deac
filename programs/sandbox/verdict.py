"""Reading a watched run: which bound was hit, said in words the code-writer can act on.

The runner's own report wins when it sent one (it knows a MemoryError from a bug); otherwise the
exit status tells: a signal such as SIGXCPU or SIGXFSZ names the bound, and our own kills
(timeout, output cap) are known to the watcher.
"""

from __future__ import annotations

import signal
from dataclasses import asdict

from programs.sandbox.process import Outcome

LIMIT_WORDS = {
    "timeout": "wall-clock timeout of {timeout:g} s reached; make the code faster",
    "cpu": "CPU time limit of {cpu} s reached; make the code faster",
    "memory": "memory limit of {memory_mb} MB reached; use less memory",
    "output": "output limit of {output_bytes} bytes reached; print a summary, not the data",
    "disk": "disk write limit of {disk_mb} MB reached; write less (or nothing) to files",
    "files": "open-files limit of {max_open_files} reached; close files you open",
    "processes": "process limit of {max_processes} reached; do not start processes or threads",
    "startup": "the sandbox did not start within {startup_seconds:g} s (machine overloaded?)",
    "code_wait": "the prepared sandbox waited {code_wait_seconds:g} s for code and was stopped",
    "cancelled": "the prepared sandbox was closed before any code was sent",
}


def describe_limit(limit: str, limits, timeout: float, cpu: int) -> str:
    return "Sandbox limit hit: " + LIMIT_WORDS[limit].format(timeout=timeout, cpu=cpu, **asdict(limits))


def _signal_name(returncode: int, via_bwrap: bool) -> str | None:
    number = returncode - 128 if via_bwrap and returncode > 128 else -returncode
    try:
        return signal.Signals(number).name if number > 0 else None
    except ValueError:
        return None


def verdict(
    outcome: Outcome, limits, timeout: float, cpu: int, via_bwrap: bool
) -> tuple[bool, str | None, str | None]:
    """(ok, error, limit) from what the watcher saw, trusting the runner's own report when it sent one."""
    if outcome.killed_for:
        return False, describe_limit(outcome.killed_for, limits, timeout, cpu), outcome.killed_for
    # A "done" is only believed from a process that then exited cleanly (or that we reaped after
    # it): code in the same process can write to the channel too, then die with its own status.
    died_after_reporting = outcome.returncode not in (0, -9, 128 + 9)  # 0: clean exit; -9/137: our kill
    if outcome.done is not None and not died_after_reporting:
        ok, error, limit = bool(outcome.done.get("ok")), outcome.done.get("error"), outcome.done.get("limit")
        if limit in LIMIT_WORDS:
            error = f"{error}\n{describe_limit(limit, limits, timeout, cpu)}"
        return ok, error, limit
    tail = outcome.stderr.decode("utf-8", errors="replace").strip()[-2000:]
    name = _signal_name(outcome.returncode, via_bwrap)
    limit = {"SIGXCPU": "cpu", "SIGXFSZ": "disk"}.get(name or "")
    if name == "SIGKILL" and outcome.elapsed >= cpu - 0.5:
        limit = "cpu"  # the hard CPU limit kills with SIGKILL once SIGXCPU is ignored
    if limit:
        return False, describe_limit(limit, limits, timeout, cpu), limit
    if not outcome.ready:
        return False, f"The sandbox failed to start (exit {outcome.returncode}): {tail}", None
    how = f"was killed by {name}" if name else f"exited with status {outcome.returncode}"
    return (
        False,
        f"The code's process {how} before finishing (os._exit, a signal or a crash). {tail}".strip(),
        None,
    )
