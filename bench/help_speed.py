"""How long `collate --help` and `collate CMD --help` take, against `python -c pass` in the same run.

    .venv/bin/python -m bench.help_speed [--runs 5] [--no-heavy]

Each form runs as a user's shell would run it: a new Python process (`python -m collate ...`, what the
`collate` console script does), from the repository root. The baseline is the floor of any Python
command on this machine at this moment, `python -c pass`, timed in the same rounds (one run of every
form per round, rounds repeated), so load from other jobs falls on both sides. Prints the median wall
time of each form, its ratio to the baseline, and for reference what importing the heavy libraries
that --help no longer loads costs (`import dspy, mlflow, faiss, torch`; --no-heavy skips it). Exit 0
when every form's median is under the 1 s target (issue 32), 1 otherwise.
tests/cli/test_usage.py asserts the import set (no heavy library is loaded by --help), not a time.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from collate.cli import COMMANDS

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 1.0
BASELINE = ("python -c pass", [sys.executable, "-c", "pass"])
HEAVY = ("import dspy, mlflow, faiss, torch", [sys.executable, "-c", "import dspy, mlflow, faiss, torch"])


def forms() -> list[tuple[str, list[str]]]:
    """`collate --help` and `collate CMD --help` for every command, as the processes they start."""
    out = [("collate --help", [sys.executable, "-m", "collate", "--help"])]
    out += [(f"collate {cmd} --help", [sys.executable, "-m", "collate", cmd, "--help"]) for cmd in COMMANDS]
    return out


def wall(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def measure(runs: int, heavy: bool) -> dict[str, list[float]]:
    """Seconds per form, `runs` each, interleaved round by round with the baseline."""
    todo = [BASELINE, *forms(), *([HEAVY] if heavy else [])]
    for _, argv in todo:  # one untimed round: the first import of a module pays for its .pyc files
        wall(argv)
    times: dict[str, list[float]] = {name: [] for name, _ in todo}
    for _ in range(runs):
        for name, argv in todo:
            times[name].append(wall(argv))
    return times


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--runs", type=int, default=5, help="timed runs of each form (default 5)")
    p.add_argument("--no-heavy", action="store_true", help="skip the heavy-import reference line")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be at least 1")
    times = measure(args.runs, not args.no_heavy)
    base = statistics.median(times[BASELINE[0]])
    width = max(len(name) for name in times)
    print(f"median of {args.runs} runs each, wall seconds; ratio = form / `{BASELINE[0]}` in the same rounds")
    slow = []
    for name, seconds in times.items():
        median = statistics.median(seconds)
        note = ""
        if name.startswith("collate"):
            note = "ok" if median < TARGET_SECONDS else f"over the {TARGET_SECONDS:.0f} s target"
            if median >= TARGET_SECONDS:
                slow.append(name)
        print(f"{name:<{width}}  {median:6.3f} s  {median / base:5.2f}x  {note}")
    forms_medians = [statistics.median(times[name]) for name, _ in forms()]
    print(
        f"collate --help forms: {min(forms_medians):.3f}-{max(forms_medians):.3f} s, "
        f"{min(forms_medians) / base:.2f}-{max(forms_medians) / base:.2f}x the baseline; "
        f"target < {TARGET_SECONDS:.0f} s: {'met' if not slow else 'missed by ' + ', '.join(slow)}"
    )
    return 0 if not slow else 1


if __name__ == "__main__":
    sys.exit(main())
