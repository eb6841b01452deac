"""How the sandbox is built on this machine: the bubblewrap command line, or the degraded fallback.

Full isolation = bubblewrap (`bwrap`) with fresh pid, net, ipc and uts namespaces, a root filesystem
made of read-only binds of only what Python and pandas need, and a size-capped tmpfs as the one
writable place. Two ways to get there:

- as root: bwrap builds the namespaces with root's own privilege; inside, the runner drops to a
  throw-away uid of its own (so RLIMIT_NPROC binds: it never binds root) with no_new_privs set.
- as anyone else: bwrap first makes an unprivileged user namespace (no uid switch needed: the run
  is alone in its namespaces, and since Linux 5.14 RLIMIT_NPROC counts per user namespace, so the
  caller's other processes do not count and the run's do not escape the bound). Nested user
  namespaces are disabled inside.

Where neither works (no bwrap, or unprivileged user namespaces switched off by a sysctl) the run is
refused and the refusal says how to enable isolation; only the user's COLLATE_SANDBOX=off runs it
with rlimits only (policy.py decides; this module says what is possible and what is missing).
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import logging
import os
import secrets
import shutil
import site
import subprocess
import sys
from pathlib import Path

logger = logging.getLogger(__name__)

INSIDE_PYTHON = "/opt/python"  # where the interpreter's prefix appears in the sandbox
INSIDE_SITE = "/opt/site"  # site-packages dirs appear as /opt/site/0, /opt/site/1, ...
INSIDE_INPUT = "/sandbox/input"  # read-only: runner, job, records, code
INSIDE_WORK = "/sandbox/work"  # the only writable place (tmpfs)
NAMESPACES = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]


# Unprivileged user namespaces are switched off by one of these (file, value meaning "off", the fix).
USERNS_SWITCHES = (
    ("kernel/unprivileged_userns_clone", "0", "sysctl -w kernel.unprivileged_userns_clone=1"),
    ("user/max_user_namespaces", "0", "sysctl -w user.max_user_namespaces=15000"),
    (
        "kernel/apparmor_restrict_unprivileged_userns",
        "1",
        "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (or an AppArmor profile allowing userns for bwrap)",
    ),
)
NPROC_PER_USERNS = (5, 14)  # Linux counts RLIMIT_NPROC per user namespace from 5.14 (ucounts)


def as_root() -> bool:
    return os.geteuid() == 0


def throwaway_uid() -> int | None:
    """A fresh uid per run when we are root (limits and kill -1 then reach only this run's processes)."""
    return 1_000_000 + secrets.randbelow(1_000_000) if as_root() else None


def kernel_counts_nproc_per_userns(release: str | None = None) -> bool:
    """True when RLIMIT_NPROC inside a user namespace counts only that namespace's processes."""
    numbers = []
    for part in (release or os.uname().release).split(".")[:2]:
        digits = "".join(itertools.takewhile(str.isdigit, part))
        numbers.append(int(digits or 0))
    return tuple(numbers) >= NPROC_PER_USERNS


def process_limit_applies(use_bwrap: bool) -> bool:
    """Whether RLIMIT_NPROC bounds only this run: its own uid (root) or its own user namespace."""
    if as_root():
        return True
    return use_bwrap and kernel_counts_nproc_per_userns()


def userns_switched_off(proc_sys: Path = Path("/proc/sys")) -> str | None:
    """'<setting> is <value>; enable with: <sysctl>' when a sysctl here disables unprivileged userns."""
    for name, off, fix in USERNS_SWITCHES:
        try:
            value = (proc_sys / name).read_text().strip()
        except OSError:
            continue  # that switch does not exist on this kernel
        if value == off:
            setting = name.replace("/", ".")
            return f"{setting} is {value}; enable them as root with: {fix} (persist it in /etc/sysctl.d/)"
    return None


def interpreter() -> tuple[Path, Path]:
    """(real executable, real base prefix) of the running Python, venv symlinks resolved."""
    return Path(os.path.realpath(sys.executable)), Path(os.path.realpath(sys.base_prefix))


@functools.lru_cache(maxsize=1)
def site_dirs() -> tuple[str, ...]:
    """The site-packages directories that hold pandas and numpy (and their neighbours)."""
    dirs: list[str] = []
    for name in ("pandas", "numpy"):
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.origin:
            raise RuntimeError(f"{name} is not installed in {sys.prefix}; install it (pip install {name})")
        dirs.append(str(Path(spec.origin).resolve().parent.parent))
    dirs += [d for d in site.getsitepackages() if Path(d).is_dir()]
    return tuple(dict.fromkeys(os.path.realpath(d) for d in dirs))


def _system_binds() -> list[str]:
    """/usr read-only, the top-level /bin /lib... as the host has them, and the two /etc files we need."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for etc in ("/etc/ld.so.cache", "/etc/localtime"):
        args += ["--ro-bind-try", etc, etc]
    return args


def inside_paths() -> tuple[list[str], str, list[str], dict[str, str]]:
    """(bwrap bind args, executable path inside, site dirs inside, extra env) for this interpreter."""
    executable, prefix = interpreter()
    args: list[str] = []
    env: dict[str, str] = {}
    if prefix == Path("/usr") or Path("/usr") in prefix.parents:
        inside_exe = str(executable)  # a system Python: /usr is bound already
    else:
        args += ["--ro-bind", str(prefix), INSIDE_PYTHON]
        inside_exe = f"{INSIDE_PYTHON}/{executable.relative_to(prefix)}"
        # A pyenv-style build finds libpython through an absolute RUNPATH to its real prefix.
        env["LD_LIBRARY_PATH"] = f"{INSIDE_PYTHON}/lib"
    inside_sites = []
    for i, directory in enumerate(site_dirs()):
        if directory.startswith("/usr/"):
            inside_sites.append(directory)
            continue
        args += ["--ro-bind", directory, f"{INSIDE_SITE}/{i}"]
        inside_sites.append(f"{INSIDE_SITE}/{i}")
    return args, inside_exe, inside_sites, env


def bwrap_command(job_dir: Path, disk_bytes: int) -> tuple[list[str], list[str], dict[str, str]]:
    """(argv prefix up to the interpreter, site dirs inside, extra env) for a fully isolated run."""
    binds, inside_exe, inside_sites, env = inside_paths()
    argv = ["bwrap", *NAMESPACES, "--die-with-parent", "--new-session", "--hostname", "sandbox"]
    if as_root():
        # Keep only what the runner needs to switch to its throw-away uid; setuid clears them after.
        argv += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    else:
        # A user namespace of its own builds the others without privilege; none may be nested in it
        # (a nested one would hand the code capabilities again, if only over its own namespaces).
        argv += ["--unshare-user", *(["--disable-userns"] if _bwrap_knows("--disable-userns") else [])]
        argv += ["--cap-drop", "ALL"]
    # bwrap creates missing parents of a bind as 0700 (root only): make them readable first.
    for parent in ("/etc", "/opt", INSIDE_SITE, "/sandbox"):
        argv += ["--perms", "0755", "--dir", parent]
    argv += _system_binds() + binds
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--ro-bind", str(job_dir), INSIDE_INPUT]
    argv += ["--perms", "1777", "--size", str(disk_bytes), "--tmpfs", INSIDE_WORK]
    argv += ["--symlink", INSIDE_WORK, "/tmp", "--chdir", INSIDE_WORK]
    return [*argv, inside_exe], inside_sites, env


@functools.cache
def _bwrap_knows(flag: str) -> bool:
    """Whether the installed bwrap has `flag` (--disable-userns needs bubblewrap >= 0.8)."""
    try:
        done = subprocess.run(["bwrap", "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return flag in done.stdout


@functools.lru_cache(maxsize=1)
def bwrap_problem() -> str | None:
    """None when bubblewrap works here with the flags we use; else why not (probed once per process)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed (apt-get install bubblewrap)"
    import tempfile

    with tempfile.TemporaryDirectory() as probe_dir:
        argv, _, env = bwrap_command(Path(probe_dir), 1 << 20)
        try:
            done = subprocess.run(
                [*argv, "-I", "-S", "-c", "pass"],
                env={"PATH": "/usr/bin:/bin", **env},
                capture_output=True,
                timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bwrap could not start: {exc}"
    if done.returncode == 0:
        return None
    said = done.stderr.decode(errors="replace").strip()[:300]
    if not as_root():
        switched_off = userns_switched_off()
        if switched_off:
            return f"unprivileged user namespaces are disabled here ({switched_off}); bwrap said: {said}"
        return (
            f"bwrap could not build an unprivileged user namespace (exit {done.returncode}): {said}; "
            "unprivileged user namespaces must be enabled (sysctl user.max_user_namespaces > 0, "
            "kernel.unprivileged_userns_clone=1 where it exists), or run as root"
        )
    return f"bwrap failed here (exit {done.returncode}): {said}"


def missing_protection(use_bwrap: bool) -> list[str]:
    """What the run lacks compared with full isolation (empty = fully isolated)."""
    missing = [] if use_bwrap else ["filesystem", "network", "pid-namespace", "disk-quota"]
    if not process_limit_applies(use_bwrap):
        missing.append("process-limit")  # the count would include every process of the caller's user
    if not use_bwrap and not as_root():
        missing.append("own-uid")  # the code runs as the caller and can signal the caller's processes
    return missing


@functools.lru_cache(maxsize=1)
def warn_degraded_once(reason: str, missing: tuple[str, ...]) -> None:
    """Isolated by bwrap, but a bound is weaker than it should be (the process limit on an old kernel)."""
    logger.warning(
        "Sandbox runs isolated but WITHOUT full protection (%s). Missing: %s.", reason, ", ".join(missing)
    )
