"""Run the sandbox process and watch it from outside: capped output, wall clock, process-group kill.

The host never trusts the code to stop: it reads at most N bytes of stdout, kills the whole
process group at the deadline, and afterwards kills anything still running under the run's
throw-away uid (nothing should be; the pid namespace already took it down).
"""

from __future__ import annotations

import json
import logging
import os
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

STDERR_CAP = 64 * 1024  # runner diagnostics only; the tail is what matters
GRACE_AFTER_DONE = 1.0  # seconds to let pipes close after the runner reported


@dataclass
class Outcome:
    stdout: bytes
    stderr: bytes
    ready: bool  # the runner got as far as starting the user's code
    done: dict | None  # the runner's final status message, if it sent one
    killed_for: str | None  # "timeout" | "startup" | "output": we killed it, and why
    returncode: int
    elapsed: float  # seconds of the user's code (from "ready")


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_uid(uid: int | None, patience: float = 3.0) -> int:
    """SIGKILL every process of `uid` (a run's throw-away uid) and wait until they are gone.

    Returns how many were found at first. Killed processes linger for a moment (the dying pid
    namespace reaps them asynchronously), so we poll rather than trust one pass.
    """
    if uid is None:
        return 0
    first = _kill_uid_once(uid)
    deadline = time.monotonic() + patience
    remaining = first
    while remaining and time.monotonic() < deadline:
        time.sleep(0.02)
        remaining = _kill_uid_once(uid)
    if remaining:
        logger.warning("%d process(es) of sandbox uid %d still present after SIGKILL", remaining, uid)
    return first


def _kill_uid_once(uid: int) -> int:
    found = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue  # already gone
        for line in status.splitlines():
            if line.startswith("Uid:"):
                if int(line.split()[1]) == uid:
                    found += 1
                    try:
                        os.kill(int(entry.name), signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                break
    return found


def _complete_lines(buffer: bytearray) -> list[bytes]:
    """Take every complete line out of `buffer`; a partial last line stays for the next read."""
    *lines, rest = bytes(buffer).split(b"\n")
    buffer[:] = rest
    return lines


def _status_messages(buffer: bytearray) -> list[dict]:
    messages = []
    for line in _complete_lines(buffer):
        try:
            messages.append(json.loads(line))
        except ValueError:
            continue  # the code wrote junk to our channel: ignore it, the exit status still tells
    return messages


def _control_messages(buffer: bytearray) -> list[str]:
    return [line.decode("ascii", errors="replace").strip() for line in _complete_lines(buffer)]


def watch(
    argv: list[str],
    env: dict[str, str],
    cwd: str,
    status_fds: tuple[int, int],
    stdin_fd: int,
    control_fd: int,
    startup_timeout: float,
    code_wait: float,
    output_cap: int,
) -> Outcome:
    """Start the runner and watch it to the end. Owns (closes) status_fds, stdin_fd and control_fd.

    Phases and their clocks: start-up until the runner says "warm" (`startup_timeout`); waiting for
    the code (`code_wait`, the LM may still be writing it); once the host says "run <timeout>" on the
    control pipe (it has written the code to the runner's stdin), start-up again until "ready";
    then the user's `timeout`. "cancel" or end-of-file on the control pipe before "run" kills the
    run unused.
    """
    status_read, status_write = status_fds
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            stdin=stdin_fd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(status_write,),
            env=env,
            cwd=cwd,
            start_new_session=True,  # its own process group, killed whole at the deadline
        )
    except BaseException:
        os.close(status_read)
        os.close(control_fd)
        raise
    finally:
        os.close(status_write)
        os.close(stdin_fd)  # the runner has its copy; the host writes to the other end
    assert proc.stdout is not None and proc.stderr is not None  # both PIPE above
    out, err, status, control = bytearray(), bytearray(), bytearray(), bytearray()
    buffers = {proc.stdout.fileno(): out, proc.stderr.fileno(): err, status_read: status, control_fd: control}
    runner_fds = {proc.stdout.fileno(), proc.stderr.fileno(), status_read}  # open while the runner runs
    selector = selectors.DefaultSelector()
    for fd in buffers:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    warm_at: float | None = None
    timeout: float | None = None  # the user's wall clock, known once the host sends the code
    ready_at: float | None = None
    done: dict | None = None
    killed_for: str | None = None
    deadline = started + startup_timeout

    def take_control() -> None:
        """Act on the complete lines the host has sent on the control pipe."""
        nonlocal timeout, deadline, killed_for
        for line in _control_messages(control):
            if line.startswith("run ") and timeout is None:
                timeout = float(line.split()[1])
                if warm_at is not None:  # code sent: only the last steps of start-up remain
                    deadline = time.monotonic() + startup_timeout
            elif line == "cancel" and timeout is None:
                killed_for = "cancelled"

    try:
        while runner_fds:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                if done is None:
                    if ready_at is not None:
                        killed_for = "timeout"
                    elif warm_at is not None and timeout is None:
                        killed_for = "code_wait"
                    else:
                        killed_for = "startup"
                break
            # Control first: the host says "run" before the runner can say "ready" (it closes the
            # code pipe only after), so a batch holding both must not see "ready" before "run".
            events = sorted(selector.select(remaining), key=lambda event: event[0].fd != control_fd)
            for key, _ in events:
                try:
                    chunk = os.read(key.fd, 65536)
                except BlockingIOError:
                    continue
                buffer = buffers[key.fd]
                if not chunk:
                    selector.unregister(key.fd)
                    runner_fds.discard(key.fd)
                    if buffer is control and timeout is None:
                        killed_for = "cancelled"  # the host dropped this run before sending code
                        break
                    continue
                if buffer is err:
                    err += chunk
                    del err[: max(0, len(err) - STDERR_CAP)]
                    continue
                buffer += chunk
                if buffer is out and len(out) > output_cap:
                    del out[output_cap:]
                    killed_for = "output"
                    break
                if buffer is control:
                    take_control()
                    if killed_for:
                        break
                if buffer is status:
                    if timeout is None:
                        # The host wrote "run" before the runner could say "ready", but this read may
                        # hold "ready" (even "done") written after a select that saw only the status
                        # pipe: read the control pipe first, or the run's "ready" is dropped and a
                        # finished run reads as "failed to start" (seen on a loaded machine).
                        try:
                            control += os.read(control_fd, 65536)
                        except BlockingIOError:
                            pass
                        take_control()
                        if killed_for:
                            break
                    for message in _status_messages(status):
                        event = message.get("event")
                        if event == "warm" and warm_at is None:
                            warm_at = time.monotonic()
                            deadline = warm_at + (code_wait if timeout is None else startup_timeout)
                        elif event == "ready" and ready_at is None and timeout is not None:
                            ready_at = time.monotonic()
                            deadline = ready_at + timeout
                        elif event == "done" and ready_at is not None:
                            done = message
                            deadline = min(deadline, time.monotonic() + GRACE_AFTER_DONE)
            if killed_for:
                break
    finally:
        if killed_for is None and not runner_fds:
            try:  # every pipe closed: let the process report its own exit status before any kill
                proc.wait(timeout=GRACE_AFTER_DONE)
            except subprocess.TimeoutExpired:
                pass
        _kill_group(proc.pid)
        selector.close()
        for stream in (proc.stdout, proc.stderr):
            stream.close()
        os.close(status_read)
        os.close(control_fd)
        returncode = proc.wait()
    elapsed = time.monotonic() - ready_at if ready_at is not None else 0.0
    return Outcome(bytes(out), bytes(err), ready_at is not None, done, killed_for, returncode, elapsed)
