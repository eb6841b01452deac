"""The only place generated analysis code runs: isolated, bounded, and reported like Python would.

core.py holds run_code / prepare and the limits; isolation.py says how (bubblewrap) and what is
missing; policy.py whether code may run without isolation (only on COLLATE_SANDBOX=off, loudly and
counted: `unisolated_runs()`); process.py watches the child; runner.py runs inside it; verdict.py
turns what the watcher saw into a SandboxResult. `python -m programs.sandbox` is the CLI (__main__.py).
"""

from programs.sandbox.core import (
    LIMIT_RANGES,
    MAX_TIMEOUT_SECONDS,
    Limits,
    PreparedRun,
    SandboxResult,
    check_timeout,
    isolation_refusal,
    prepare,
    run_code,
)
from programs.sandbox.policy import unisolated_runs

__all__ = [
    "LIMIT_RANGES",
    "MAX_TIMEOUT_SECONDS",
    "Limits",
    "PreparedRun",
    "SandboxResult",
    "check_timeout",
    "isolation_refusal",
    "prepare",
    "run_code",
    "unisolated_runs",
]
