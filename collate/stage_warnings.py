"""The stages' per-value warnings go to a file in the run folder, counted, instead of onto the terminal.

A run over the demo questions can log hundreds of "value_x set to null: ..." (normalizer) and "the reply
left out ..." (extractor) warnings: each one is worth keeping, but on the terminal they break the
progress bar and bury the scores. While `stage_warnings_to(path)` is active, WARNING records of
`programs.*` loggers are written to `path` and kept off the terminal's handlers; ERROR and above still
show. `summary()` is the one line that says how many there were and where they are.
"""

from __future__ import annotations

import logging
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

STAGE_LOGGERS = "programs"


class StageWarnings(logging.Filter):
    """Counts the stages' warnings; as a filter on a terminal handler it drops them there."""

    def __init__(self, path: Path):
        super().__init__()
        self.path = path
        self.counts: Counter[str] = Counter()

    def is_stage_warning(self, record: logging.LogRecord) -> bool:
        return record.levelno == logging.WARNING and (
            record.name == STAGE_LOGGERS or record.name.startswith(STAGE_LOGGERS + ".")
        )

    def filter(self, record: logging.LogRecord) -> bool:
        return not self.is_stage_warning(record)

    def summary(self) -> str:
        """'' when there were none, else e.g. '23 stage warnings (normalizer 20, extractor 3) are in PATH'."""
        total = sum(self.counts.values())
        if not total:
            return ""
        parts = ", ".join(f"{name} {n}" for name, n in self.counts.most_common())
        return f"{total} stage warning{'s' if total != 1 else ''} ({parts}) are in {self.path}"


class _ToFile(logging.FileHandler):
    def __init__(self, kept: StageWarnings):
        kept.path.parent.mkdir(parents=True, exist_ok=True)
        super().__init__(kept.path, encoding="utf-8", delay=True)  # delay: no empty file when all went well
        self.kept = kept
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        if self.kept.is_stage_warning(record):
            self.kept.counts[record.name.rsplit(".", 1)[-1]] += 1
            super().emit(record)


@contextmanager
def stage_warnings_to(path: str | Path):
    """Yields the StageWarnings that counts them; the terminal's handlers get their filter back on exit."""
    kept = StageWarnings(Path(path))
    terminal = list(logging.getLogger().handlers)
    to_file = _ToFile(kept)
    stages = logging.getLogger(STAGE_LOGGERS)
    for handler in terminal:
        handler.addFilter(kept)
    stages.addHandler(to_file)
    try:
        yield kept
    finally:
        stages.removeHandler(to_file)
        to_file.close()
        for handler in terminal:
            handler.removeFilter(kept)
