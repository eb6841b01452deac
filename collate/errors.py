"""One table of exit codes for every command, and the one way a command turns an error into one line.

Library and commands raise signatures.errors.CollateError (BadInput for bad input) with a message that
names the fix; `run_main` prints it as "error: ..." and returns its code. Scripts can rely on the table
below whichever command they call.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from enum import IntEnum
from typing import NoReturn

from signatures.errors import BadInput, CollateError

__all__ = ["BadInput", "CollateError", "Exit", "exit_process", "run_main"]


class Exit(IntEnum):
    OK = 0
    FAILED = 1  # the command ran, and some of its work failed (named on stderr)
    BAD_INPUT = 2  # bad arguments, files or settings: nothing was spent
    LOCKED = 75  # EX_TEMPFAIL: another build holds the index, or another run the --out folder; try later
    INTERRUPTED = 130  # Ctrl-C: what was done is kept; the same command resumes


def run_main(body: Callable[[], int], interrupted: str = "interrupted") -> int:
    """Run a command's body: a CollateError becomes its line and code, Ctrl-C exit 130 with one line."""
    try:
        return int(body() or 0)
    except CollateError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt:
        print(interrupted, file=sys.stderr)
        return int(Exit.INTERRUPTED)


def exit_process(code: int) -> NoReturn:
    """End the process with a command's exit code; after a Ctrl-C (Exit.INTERRUPTED), at once.

    Why: at exit Python joins every worker thread of every ThreadPoolExecutor, after each has run what
    was queued for it. After Ctrl-C a worker may be blocked in an HTTP call to the LM for minutes, and
    the queued questions would each be asked (and paid for) before the process ends. The command has
    already kept what it did and said so in its line: nothing is left to wait for. Only for a process's
    entry point: main(argv) itself returns the code, so tests and other commands can call it.
    """
    if code == Exit.INTERRUPTED:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe: nothing more can be said anyway
                pass
        os._exit(code)
    sys.exit(code)
