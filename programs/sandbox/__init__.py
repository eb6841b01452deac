"""The only place generated analysis code runs: isolated, bounded, and reported like Python would.

core.py holds run_code / prepare and the limits; isolation.py decides how (bubblewrap, or rlimits
only); process.py watches the child; runner.py runs inside it; verdict.py turns what the watcher
saw into a SandboxResult. `python -m programs.sandbox` is the CLI (__main__.py).
"""

from programs.sandbox.core import (
    LIMIT_RANGES,
    MAX_TIMEOUT_SECONDS,
    Limits,
    PreparedRun,
    SandboxResult,
    check_timeout,
    prepare,
    run_code,
)

__all__ = [
    "LIMIT_RANGES",
    "MAX_TIMEOUT_SECONDS",
    "Limits",
    "PreparedRun",
    "SandboxResult",
    "check_timeout",
    "prepare",
    "run_code",
]
