"""OUT/mlflow.json: which MLflow run a run folder is logged as, and whether that logging finished.

Why: the store can fail while a run is logged (another process holds `mlflow.db` locked, a server goes
down). The answers and scores are already in the folder; this record lets a later `collate run` on the
same folder (or `--log-only`) finish the same MLflow run instead of leaving it RUNNING beside a second
one, and skip the question traces already in the store. No mlflow import here (tracking.py is the one).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

RECORD = "mlflow.json"


@dataclass
class StoreRecord:
    """run_id: the MLflow run of this folder; logged: every figure, file and trace is in it and it is
    ended; fault: why the last attempt failed; traces: question ids whose trace the store holds."""

    path: Path
    run_id: str = ""
    logged: bool = False
    fault: str = ""
    traces: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, out_dir: Path) -> StoreRecord:
        path = out_dir / RECORD
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # absent or cut short: nothing logged that can be reused
            return cls(path)
        if not isinstance(data, dict):
            return cls(path)
        return cls(
            path,
            run_id=str(data.get("run_id") or ""),
            logged=bool(data.get("logged")),
            fault=str(data.get("fault") or ""),
            traces=[str(q) for q in data.get("traces") or []],
        )

    @property
    def pending(self) -> bool:
        """A run was opened for this folder and not finished: the next attempt logs into it."""
        return bool(self.run_id) and not self.logged

    def opened(self, run_id: str) -> None:
        if run_id != self.run_id:
            self.traces = []
        self.run_id, self.logged, self.fault = run_id, False, ""
        self.save()

    def traced(self, question_id: str) -> None:
        self.traces.append(question_id)
        self.save()

    def closed(self) -> None:
        self.logged, self.fault = True, ""
        self.save()

    def failed(self, reason: str) -> None:
        self.fault = reason
        self.save()

    def save(self) -> None:
        data = {k: v for k, v in asdict(self).items() if k != "path"}
        partial = self.path.with_suffix(".json.part")
        try:
            partial.write_text(json.dumps(data, indent=1), encoding="utf-8")
            os.replace(partial, self.path)
        except OSError:  # a full disk: the next attempt logs a new run, nothing else is lost
            pass
