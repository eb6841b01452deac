"""setup.sh run by an ORDINARY user (no root, no sudo rights), bubblewrap installed by an admin or not.

The test (root) makes a throw-away user, copies setup.sh and pyproject.toml into its home, and runs
setup.sh as that user with a `sudo` on PATH that records every call and refuses (as sudo does for a
user without rights and no terminal). The pip step is kept a no-op by a fresh install stamp, so only
the system-package check and the venv step run: seconds, not the 2-3 minute install. A missing
package is simulated with a `dpkg` wrapper that reports it absent (the real one answers the rest).
Skipped when users cannot be created (not root, no useradd).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.sandbox.accounts import PYTHON, as_user, base_env, give, throwaway_user

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
ADMIN_COMMAND = "sudo apt-get update && sudo apt-get install -y bubblewrap"

FAKE_SUDO = """#!/bin/sh
echo "$*" >> "$HOME/sudo-calls"
echo "sudo: a password is required" >&2
exit 1
"""
# dpkg -s PACKAGE fails for the packages in $MISSING_PACKAGES; everything else goes to the real dpkg.
FAKE_DPKG = """#!/bin/sh
for pkg in $MISSING_PACKAGES; do
  [ "$1" = "-s" ] && [ "$2" = "$pkg" ] && { echo "dpkg-query: package '$pkg' is not installed" >&2; exit 1; }
done
exec /usr/bin/dpkg "$@"
"""


@pytest.fixture(scope="module")
def user():
    if shutil.which("dpkg") is None or shutil.which("apt-get") is None:
        pytest.skip("setup.sh's package check is for Debian-family systems (dpkg, apt-get)")
    for pkg in ("bubblewrap", "fonts-wqy-zenhei"):
        if os.system(f"dpkg -s {pkg} >/dev/null 2>&1") != 0:
            pytest.skip(f"{pkg} is not installed here (setup.sh as root installs it)")
    with throwaway_user("collate-setup") as account:
        fake = Path(account.pw_dir) / "fakebin"
        fake.mkdir()
        for name, text in (("sudo", FAKE_SUDO), ("dpkg", FAKE_DPKG)):
            (fake / name).write_text(text)
            (fake / name).chmod(0o755)
        give(account, fake)
        yield account


def checkout(user, name: str, venv: bool) -> Path:
    """setup.sh and pyproject.toml in the user's home; an install stamp newer than pyproject (pip: no-op).

    venv=True also makes the venv itself (without pip, 0.1 s), as a second run of setup.sh finds it."""
    folder = Path(user.pw_dir) / name
    folder.mkdir()
    shutil.copy(ROOT / "setup.sh", folder)
    shutil.copy(ROOT / "pyproject.toml", folder)
    os.utime(folder / "pyproject.toml", (1_000_000_000, 1_000_000_000))  # older than any stamp
    (folder / ".venv").mkdir()
    (folder / ".venv" / ".collate-installed").touch()
    give(user, folder)
    if venv:
        made = as_user(user, [PYTHON, "-m", "venv", "--without-pip", "--clear", str(folder / ".venv")])
        assert made.returncode == 0
        as_user(user, ["touch", str(folder / ".venv" / ".collate-installed")])
    return folder


def setup(user, folder: Path, missing: str = "", wrapper: list[str] | None = None):
    env = {"PATH": f"{user.pw_dir}/fakebin:/usr/bin:/bin", "MISSING_PACKAGES": missing}
    argv = ["bash", str(folder / "setup.sh")]
    if wrapper:  # runs as root, drops to the user itself
        return subprocess.run(
            [*wrapper, *argv],
            env=base_env(user) | env,
            cwd=user.pw_dir,
            capture_output=True,
            text=True,
            timeout=120,
        )
    return as_user(user, argv, env=env, capture_output=True, text=True, timeout=120)


def sudo_calls(user) -> list[str]:
    log = Path(user.pw_dir) / "sudo-calls"
    return log.read_text().splitlines() if log.exists() else []


def test_with_the_packages_installed_setup_needs_no_root_and_makes_the_venv_from_the_users_python(user):
    folder = checkout(user, "installed", venv=False)
    stamp = folder / ".venv" / ".collate-installed"
    stamped = stamp.stat().st_mtime_ns
    done = setup(user, folder)
    assert done.returncode == 0, done.stderr
    assert sudo_calls(user) == [] and "setup:" not in done.stderr, done.stderr
    venv_python = folder / ".venv" / "bin" / "python"
    ran = as_user(
        user, [str(venv_python), "-c", "import sys; print(sys.base_prefix)"], capture_output=True, text=True
    )
    assert ran.returncode == 0 and ran.stdout.strip() == "/usr"  # the system Python every user can read
    assert stamp.stat().st_mtime_ns == stamped  # the pip step did not run


def test_with_bubblewrap_missing_setup_prints_the_admin_command_and_goes_on(user):
    folder = checkout(user, "missing", venv=True)
    done = setup(user, folder, missing="bubblewrap")
    # Before: it ran `sudo apt-get` (a password prompt at a terminal), said "installing" and went on
    # without a word about what was missing.
    assert done.returncode == 0, done.stderr
    assert ADMIN_COMMAND in done.stderr and "fonts-wqy-zenhei" not in done.stderr
    assert "going on with the Python part" in done.stderr and "generated code is refused" in done.stderr
    assert all(call.startswith("-n ") for call in sudo_calls(user)), "sudo asked for a password"


def test_with_only_the_font_missing_the_sandbox_is_not_mentioned(user):
    folder = checkout(user, "font", venv=True)
    done = setup(user, folder, missing="fonts-wqy-zenhei")
    assert done.returncode == 0, done.stderr
    assert "sudo apt-get install -y fonts-wqy-zenhei" in done.stderr and "refused" not in done.stderr


def test_with_user_namespaces_switched_off_setup_says_what_the_admin_must_enable(user):
    folder = checkout(user, "userns", venv=True)
    wrapper = [sys.executable, str(HERE / "userns_off.py"), str(user.pw_uid), str(user.pw_gid)]
    done = setup(user, folder, wrapper=wrapper)
    assert done.returncode == 0, done.stderr
    assert "cannot create a user namespace" in done.stderr and "user.max_user_namespaces" in done.stderr
