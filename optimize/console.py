"""What a compile shows on the console: progress and our summary; DSPy's own logs go to a file.

Why: MIPROv2 printed 1,064 lines (416 of them DSPy INFO lines), GEPA printed two tracebacks (a failed
reflection it logs at INFO, with the stack, then goes on) and then succeeded, and bootstrap printed its
own "Bootstrapped N full traces" line. Those are the optimizer's diary, not the user's news: while the
optimizer runs, the loggers of DSPy, GEPA and Optuna (MIPROv2's trial search) write to the compile's log
file beside the program, nothing of theirs reaches the console, and what they print on stdout goes
there too. The progress bars (tqdm, on stderr) stay. Warnings of our own (a budget that stopped the
compile) are logged outside this block, so they still show.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from pathlib import Path

LIBRARIES = ("dspy", "gepa", "optuna")


def log_path(out: Path) -> Path:
    """compiled.json -> compiled.log, beside the program and its sidecar."""
    return out.with_suffix(".log")


@contextlib.contextmanager
def libraries_logged_to(path: Path) -> Iterator[Path]:
    """Inside: DSPy's, GEPA's and Optuna's log records and anything printed on stdout go to `path`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as stream:
        handler = logging.StreamHandler(stream)
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        saved = []
        for name in LIBRARIES:
            logger = logging.getLogger(name)
            saved.append((logger, list(logger.handlers), logger.propagate))
            logger.handlers = [handler]
            logger.propagate = False
        try:
            with contextlib.redirect_stdout(stream):
                yield path
        finally:
            for logger, handlers, propagate in saved:
                logger.handlers, logger.propagate = handlers, propagate
