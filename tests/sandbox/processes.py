"""Processes seen from OUTSIDE the sandbox: the descendants of this (test) process, read from /proc."""

from __future__ import annotations

import os
import time
from pathlib import Path


def descendants() -> set[int]:
    """Pids of every live (non-zombie) process below this one, seen from the host."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if state != "Z":
            children.setdefault(int(ppid), []).append(int(entry.name))
    found, todo = set(), [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def runner_processes() -> set[int]:
    """Our descendants that are the sandbox runner (the interpreter inside bwrap)."""
    pids = set()
    for pid in descendants():
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"runner.py" in cmdline:
            pids.add(pid)
    return pids


def waiting_for_code(pid: int) -> bool:
    """The runner `pid` is warm: start-up done (pandas imported, records loaded), blocked reading its
    code from the stdin pipe (runner.py's _receive_code), the only pipe it ever reads."""
    try:
        return "pipe_read" in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False


def wait_for(condition, seconds: float = 120.0) -> bool:
    """Poll `condition` until it holds. The deadline only guards against a hang: on a loaded machine
    start-up and teardown take many times their quiet-machine duration."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()
