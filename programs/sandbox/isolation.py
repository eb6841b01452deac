"""How the sandbox is built on this machine: the bubblewrap command line, or the degraded fallback.

Full isolation = bubblewrap (`bwrap`) run by root with fresh pid, net, ipc and uts namespaces, a
root filesystem made of read-only binds of only what Python and pandas need, and a size-capped
tmpfs as the one writable place. Inside, the runner drops to a throw-away uid of its own (so
RLIMIT_NPROC binds: it never binds root) with no_new_privs set. Without bwrap we fall back to
rlimits only and SAY what is missing; COLLATE_SANDBOX_STRICT=1 turns that into a refusal.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import os
import secrets
import shutil
import site
import subprocess
import sys
from pathlib import Path

logger = logging.getLogger(__name__)

STRICT_ENV = "COLLATE_SANDBOX_STRICT"
INSIDE_PYTHON = "/opt/python"  # where the interpreter's prefix appears in the sandbox
INSIDE_SITE = "/opt/site"  # site-packages dirs appear as /opt/site/0, /opt/site/1, ...
INSIDE_INPUT = "/sandbox/input"  # read-only: runner, job, records, code
INSIDE_WORK = "/sandbox/work"  # the only writable place (tmpfs)
NAMESPACES = ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"]


def strict_required() -> bool:
    return os.environ.get(STRICT_ENV, "").strip().lower() in ("1", "true", "yes")


def throwaway_uid() -> int | None:
    """A fresh uid per run when we are root (limits and kill -1 then reach only this run's processes)."""
    return 1_000_000 + secrets.randbelow(1_000_000) if os.geteuid() == 0 else None


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
    # Keep only what the runner needs to switch to its throw-away uid; setuid clears them after.
    argv += ["--cap-drop", "ALL", "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
    # bwrap creates missing parents of a bind as 0700 (root only): make them readable first.
    for parent in ("/etc", "/opt", INSIDE_SITE, "/sandbox"):
        argv += ["--perms", "0755", "--dir", parent]
    argv += _system_binds() + binds
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += ["--ro-bind", str(job_dir), INSIDE_INPUT]
    argv += ["--perms", "1777", "--size", str(disk_bytes), "--tmpfs", INSIDE_WORK]
    argv += ["--symlink", INSIDE_WORK, "/tmp", "--chdir", INSIDE_WORK]
    return [*argv, inside_exe], inside_sites, env


@functools.lru_cache(maxsize=1)
def bwrap_problem() -> str | None:
    """None when bubblewrap works here with the flags we use; else why not (probed once per process)."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed (apt-get install bubblewrap)"
    if os.geteuid() != 0:
        # Unprivileged bwrap needs a user namespace, where our uid drop and RLIMIT_NPROC do not work.
        return "not running as root: the sandbox needs root to build namespaces and drop to its own uid"
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
    if done.returncode != 0:
        return f"bwrap failed here (exit {done.returncode}): {done.stderr.decode(errors='replace').strip()[:300]}"
    return None


def missing_protection(use_bwrap: bool) -> list[str]:
    """What the run lacks compared with full isolation (empty = fully isolated)."""
    if use_bwrap:
        return []
    missing = ["filesystem", "network", "pid-namespace", "disk-quota"]
    if os.geteuid() != 0:
        missing += ["process-limit", "own-uid"]
    return missing


@functools.lru_cache(maxsize=1)
def warn_degraded_once(reason: str, missing: tuple[str, ...]) -> None:
    logger.warning(
        "Sandbox runs WITHOUT full isolation (%s). Missing: %s. Only rlimits protect this machine; "
        "set %s=1 to refuse instead.",
        reason,
        ", ".join(missing),
        STRICT_ENV,
    )
