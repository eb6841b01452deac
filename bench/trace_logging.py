"""Seconds to log one question's trace (evaluate.tracking.log_trace), MLflow's async export against ours.

    .venv/bin/python -m bench.trace_logging [--traces 20] [--rounds 2] [--out /tmp/trace_logging]

A run logs one trace per question and waits until the store holds it (then adds its gold and verdict).
MLflow's default exports traces from a background queue whose consumer polls it once a second, so that
wait is mostly idle; the project turns async export off (signatures/environment.py). Each side runs in a
fresh process (MLflow reads the setting when it makes its exporter) on a fresh SQLite store, rounds
interleaved so load from other jobs falls on both. Prints seconds per trace (wall and CPU) and the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIDES = {"MLflow's default (async queue)": "true", "collate's default (written at once)": "false"}

ONE_SIDE = """
import json, os, sys, time
from evaluate import tracking
experiment = tracking.use_store()
tree = {"name": "question", "inputs": {"question": "q"}, "outputs": {"answer": "a"},
        "children": [{"name": f"stage {i}", "inputs": {"i": i}, "outputs": {"ok": True}} for i in range(6)]}
tracking.log_trace(tree, experiment, 1.0)  # untimed: the first trace makes the exporter
n = int(sys.argv[1])
wall, cpu = time.perf_counter(), time.process_time()
for _ in range(n):
    tracking.log_trace(tree, experiment, 1.0)
print(json.dumps({"wall": (time.perf_counter() - wall) / n, "cpu": (time.process_time() - cpu) / n}))
"""


def one_side(async_export: str, traces: int, folder: Path) -> dict[str, float]:
    store = Path(tempfile.mkdtemp(dir=folder)) / "mlflow.db"
    env = {
        **os.environ,
        "MLFLOW_TRACKING_URI": f"sqlite:///{store}",
        "MLFLOW_ENABLE_ASYNC_TRACE_LOGGING": async_export,
    }
    done = subprocess.run(
        [sys.executable, "-c", ONE_SIDE, str(traces)], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=20, help="traces timed per side and round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()) / "trace_logging")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    seen: dict[str, list[dict[str, float]]] = {name: [] for name in SIDES}
    for _ in range(args.rounds):
        for name, value in SIDES.items():
            seen[name].append(one_side(value, args.traces, args.out))
    mean = {n: {k: sum(r[k] for r in rows) / len(rows) for k in ("wall", "cpu")} for n, rows in seen.items()}
    for name, figures in mean.items():
        walls = ", ".join(f"{r['wall']:.3f}" for r in seen[name])
        print(f"{name:38s} {figures['wall']:.3f} s a trace (rounds: {walls}), CPU {figures['cpu']:.3f} s")
    base, ours = (mean[n]["wall"] for n in SIDES)
    print(f"ratio (MLflow's default / ours): {base / ours:.1f}x; load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
