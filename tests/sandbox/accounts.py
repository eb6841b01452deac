"""Throw-away ordinary users for the tests that must run as one (no root, no capabilities).

    with throwaway_user() as user:            # pwd entry; pytest.skip when users cannot be created
        as_user(user, ["id", "-u"], capture_output=True)

The suite runs as root on the project's machines; isolation, and setup.sh, must also work for an
ordinary user, which only a real second account shows. Used by test_attacks_as_user.py and
test_setup_as_user.py.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

# A Python every user can run, the suite's version (root's own interpreter may live under /root).
PYTHON = f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}"


def base_env(user: pwd.struct_passwd) -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "HOME": user.pw_dir, "USER": user.pw_name, "LANG": "C.UTF-8"}


def as_user(user: pwd.struct_passwd, argv: list[str], env: dict | None = None, **kwargs):
    """argv run as `user` (setpriv: real, effective and saved ids, the user's groups; no capabilities)."""
    prefix = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups", "--"]
    return subprocess.run(prefix + argv, env=base_env(user) | (env or {}), cwd=user.pw_dir, **kwargs)


def useradd(name: str) -> pwd.struct_passwd | None:
    for _ in range(3):  # /etc/passwd is locked while another test run adds or removes its user
        done = subprocess.run(
            ["useradd", "--create-home", "--user-group", "--shell", "/bin/sh", name], capture_output=True
        )
        if done.returncode == 0:
            return pwd.getpwnam(name)
        time.sleep(1)
    return None


def processes_of(uid: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            status = (entry / "status").read_text()
        except OSError:
            continue
        uid_line = next((line for line in status.splitlines() if line.startswith("Uid:")), "Uid: -1")
        if int(uid_line.split()[1]) == uid and "State:\tZ" not in status:
            pids.append(int(entry.name))
    return pids


def give(user: pwd.struct_passwd, path: Path) -> None:
    """Hand a tree written as root over to the user."""
    subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", str(path)], check=True)


@contextlib.contextmanager
def throwaway_user(prefix: str = "collate-sbx") -> Iterator[pwd.struct_passwd]:
    """A fresh account with a home; its processes and home are gone afterwards. Skips without root."""
    if os.geteuid() != 0 or shutil.which("useradd") is None or shutil.which("setpriv") is None:
        pytest.skip("creating a test user needs root, useradd and setpriv")
    if not Path(PYTHON).exists():
        pytest.skip(f"{PYTHON} (a Python every user can run, same version as this suite) is missing")
    name = f"{prefix}-{secrets.token_hex(3)}"
    account = useradd(name)
    if account is None:
        pytest.skip(f"useradd {name} failed (no permission or /etc/passwd locked)")
    try:
        yield account
    finally:
        for pid in processes_of(account.pw_uid):  # only what this test started runs as this fresh user
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        subprocess.run(["userdel", "--remove", name], capture_output=True)
