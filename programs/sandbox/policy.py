"""Whether generated code may run where bubblewrap cannot isolate it: never, unless the user says so.

The default refuses, with the fix. The one way to run it anyway is COLLATE_SANDBOX=off (a yes/no
setting: 0/false/no work too; on, or unset, refuses), or Limits(allow_unisolated=True) from a caller
that read it (Settings). It never weakens a sandbox that works: with bubblewrap available the code is
isolated whatever the setting says. Each unisolated run is logged as a warning, marked on its
SandboxResult (`unisolated`) and counted (`unisolated_runs()`), so a run can record it.

Before (issue 22) the default without bubblewrap was to warn once and run the code on the host, where
it read ~/.ssh and reached the network; COLLATE_SANDBOX_STRICT=1 was the opt-in to refusing. That
variable is retired: refusing is the default, so any yes/no word in it is now ignored with a warning
(an unknown word is still an error: it may be a typo of something that matters).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Mapping

from signatures.env_flags import env_flag

logger = logging.getLogger(__name__)

SANDBOX_ENV = "COLLATE_SANDBOX"
RETIRED_STRICT_ENV = "COLLATE_SANDBOX_STRICT"
OPT_OUT = f"{SANDBOX_ENV}=off"

# Every way to get isolation back, for the refusal: the reason on this machine comes first.
HOW_TO_ISOLATE = (
    "Fix, as an administrator: install bubblewrap (apt-get install bubblewrap); if it is installed, "
    "let ordinary users create user namespaces (Debian: sysctl -w kernel.unprivileged_userns_clone=1; "
    "any kernel: sysctl -w user.max_user_namespaces=15000; Ubuntu 23.10 and later: "
    "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, or an apparmor profile that allows "
    "userns for /usr/bin/bwrap), persisted in /etc/sysctl.d/; or run as root"
)

_count_lock = threading.Lock()
_unisolated_runs = 0


def allow_unisolated(choice: bool | None, environ: Mapping[str, str] | None = None) -> bool:
    """The caller's choice; when it made none, COLLATE_SANDBOX (off = allowed, on or unset = refused).

    Read on every run, even where bubblewrap works, so a misspelt value fails on every machine.
    """
    if choice is not None:
        return choice
    check_retired_strict(environ)
    return not env_flag(SANDBOX_ENV, default=True, environ=environ)


def check_retired_strict(environ: Mapping[str, str] | None = None) -> None:
    """COLLATE_SANDBOX_STRICT: a yes/no word is ignored with a warning, anything else is an error."""
    value = env_flag(RETIRED_STRICT_ENV, default=None, environ=environ)
    if value is not None:
        warn_retired_strict(value)


@functools.lru_cache(maxsize=2)
def warn_retired_strict(value: bool) -> None:
    unset = f"unset {RETIRED_STRICT_ENV}"
    then = (
        unset if value else f"{unset}, and set {OPT_OUT} if you mean to run generated code without isolation"
    )
    logger.warning(
        "%s is retired and ignored: refusing to run generated code without isolation is now the "
        "default, and only %s runs it anyway; %s.",
        RETIRED_STRICT_ENV,
        OPT_OUT,
        then,
    )


def refusal(problem: str, missing: list[str]) -> str:
    """The error of a refused run: what is wrong here, every fix, and the explicit way around it."""
    return (
        f"Refusing to run generated code: the sandbox cannot isolate it on this machine ({problem}); "
        f"without isolation it could read this user's files (~/.ssh, the fact store, API keys) and "
        f"reach the network. Missing: {', '.join(missing)}. {HOW_TO_ISOLATE}. To run it anyway with "
        f"only rlimits around it, set {OPT_OUT} (every such run is logged and marked unisolated)."
    )


def warn_unisolated(problem: str, missing: list[str]) -> None:
    """Logged on EVERY unisolated run, not once: each one exposes the machine again."""
    logger.warning(
        "Running generated code WITHOUT isolation because %s: it can read this user's files and "
        "reach the network; only rlimits bound it. Isolation is unavailable: %s. Missing: %s. %s, "
        "then unset %s.",
        OPT_OUT,
        problem,
        ", ".join(missing),
        HOW_TO_ISOLATE,
        SANDBOX_ENV,
    )


def count_unisolated_run() -> None:
    global _unisolated_runs
    with _count_lock:
        _unisolated_runs += 1


def unisolated_runs() -> int:
    """How many runs of generated code this process has handed to a process without isolation."""
    with _count_lock:
        return _unisolated_runs
