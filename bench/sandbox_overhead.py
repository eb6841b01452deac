"""Per-run overhead of the sandbox against a plain `python -c` subprocess running the same pandas code.

    .venv/bin/python -m bench.sandbox_overhead [--runs 10] [--records 200]

Run it as an ordinary user too (isolation then comes from an unprivileged user namespace), with a
Python that user can run, e.g. `setpriv --reuid=65534 --regid=65534 --clear-groups VENV/bin/python ...`.

Both sides import pandas, build the DataFrame from the same records and print one aggregate, so
the difference is what isolation costs (bwrap namespaces, binds, the runner, the JSON hand-off).
Prints mean wall ms of each side, the absolute overhead and the ratio. Exit 0 when the mean
overhead is under the 1 s target, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from programs.sandbox import run_code  # noqa: E402
from programs.sandbox.isolation import bwrap_problem  # noqa: E402

USER_CODE = "print(round(df.groupby('sector')['value'].mean().max(), 3))"
PLAIN_CODE = (
    "import json, sys, pandas as pd\n"
    "records = json.load(open(sys.argv[1]))\ndf = pd.DataFrame(records)\n" + USER_CODE
)
TARGET_SECONDS = 1.0


def make_records(n: int) -> list[dict]:
    return [{"id": f"d{i}", "sector": f"s{i % 7}", "value": float(i * 3 % 101)} for i in range(n)]


def time_plain(records: list[dict], runs: int) -> tuple[list[float], str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "records.json"
        path.write_text(json.dumps(records), encoding="utf-8")
        env = {"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        times, out = [], ""
        for _ in range(runs):
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-c", PLAIN_CODE, str(path)],
                capture_output=True,
                text=True,
                env=env,
                cwd=tmp,
                check=True,
            )
            times.append(time.perf_counter() - started)
            out = done.stdout
    return times, out


def time_sandbox(records: list[dict], runs: int) -> tuple[list[float], str]:
    times, out = [], ""
    for _ in range(runs):
        started = time.perf_counter()
        res = run_code(USER_CODE, records, timeout=30)
        times.append(time.perf_counter() - started)
        if not res.ok:
            raise RuntimeError(f"sandbox run failed: {res.error}")
        out = res.stdout
    return times, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.sandbox_overhead", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--runs", type=int, default=10, help="runs per side (default 10)")
    parser.add_argument("--records", type=int, default=200, help="records per run (default 200)")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.records < 1:
        print("error: --runs and --records must be positive integers", file=sys.stderr)
        return 2
    records = make_records(args.records)
    time_sandbox(records, 1)  # warm-up: the one-time bwrap probe and the page cache
    plain, plain_out = time_plain(records, args.runs)
    boxed, boxed_out = time_sandbox(records, args.runs)
    if plain_out != boxed_out:
        print(f"error: outputs differ: plain {plain_out!r} vs sandbox {boxed_out!r}", file=sys.stderr)
        return 1
    plain_ms, boxed_ms = statistics.mean(plain) * 1000, statistics.mean(boxed) * 1000
    how = "as root, own uid" if os.geteuid() == 0 else f"as uid {os.geteuid()}, own user namespace"
    isolation = f"full (bwrap, {how})" if bwrap_problem() is None else f"DEGRADED: {bwrap_problem()}"
    print(f"isolation:      {isolation}")
    print(f"runs per side:  {args.runs}, records: {args.records}")
    print(f"plain python:   {plain_ms:7.1f} ms/run (median {statistics.median(plain) * 1000:.1f})")
    print(f"sandbox:        {boxed_ms:7.1f} ms/run (median {statistics.median(boxed) * 1000:.1f})")
    print(
        f"overhead:       {boxed_ms - plain_ms:7.1f} ms/run, ratio {boxed_ms / plain_ms:.2f}x "
        f"(target < {TARGET_SECONDS * 1000:.0f} ms)"
    )
    return 0 if (boxed_ms - plain_ms) / 1000 < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
