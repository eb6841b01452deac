"""Build throughput on the local process pool vs on a Ray cluster, same corpus, same CPUs, one run.

    python -m bench.ray_build_speed --corpus /tmp/corpus [--docs 20] [--cpus 2] [--ray ADDRESS]

Without --ray it starts a cluster of --cpus nodes of one CPU each on this machine (`ray start`, as a
user would) and stops it after; the cluster's start-up is printed but not counted. Both builds are
`python -m retrievers.build` end to end into a fresh index (process start, model load, everything):
  local  --workers CPUS                              pages/s
  ray    --ray ADDRESS (one task per document)       pages/s, ratio to local
  overhead per document = (ray seconds - local seconds) / documents
On one machine expect parity at best: the point of Ray is that more machines add throughput.
(A separate script from build_speed.py, which another change was editing at the same time.)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _build(args: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "retrievers.build", *args, "--no-progress"],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise SystemExit(f"build failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return time.perf_counter() - start, proc.stdout.strip().splitlines()[-1]


def _start_cluster(cpus: int, temp: str) -> tuple[str, list[subprocess.Popen]]:
    ray_cli = str(Path(sys.executable).parent / "ray")
    port = 20000 + os.getpid() % 20000
    address = f"127.0.0.1:{port}"
    quiet = {
        "env": ENV,
        "start_new_session": True,
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
    }
    nodes = [
        subprocess.Popen(
            [
                ray_cli,
                "start",
                "--head",
                "--port",
                str(port),
                "--temp-dir",
                temp,
                "--include-dashboard",
                "false",
                "--num-cpus",
                "1",
                "--block",
            ],
            **quiet,
        )
    ]
    wait_head = f"import ray; ray.init(address={address!r}, logging_level='ERROR')"
    for _ in range(120):
        if subprocess.run([sys.executable, "-c", wait_head], env=ENV, capture_output=True).returncode == 0:
            break
        time.sleep(1)
    for _ in range(cpus - 1):
        nodes.append(
            subprocess.Popen([ray_cli, "start", "--address", address, "--num-cpus", "1", "--block"], **quiet)
        )
    wait_all = (
        f"import ray, time; ray.init(address={address!r}, logging_level='ERROR'); t = time.time()\n"
        f"while sum(n['Alive'] for n in ray.nodes()) < {cpus} and time.time() - t < 180: time.sleep(0.5)"
    )
    subprocess.run([sys.executable, "-c", wait_all], env=ENV, check=True)
    return address, nodes


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", required=True, help="output folder of python -m data.synth")
    p.add_argument("--docs", type=int, default=20, help="first N documents of the catalog (default 20)")
    p.add_argument("--cpus", type=int, default=2, help="pool processes, and one-CPU nodes of the cluster")
    p.add_argument("--ray", metavar="ADDRESS", help="an existing cluster (default: start one here)")
    args = p.parse_args(argv)
    rows = [
        json.loads(line) for line in (Path(args.corpus) / "catalog.jsonl").read_text().splitlines() if line
    ]
    rows = rows[: args.docs]
    temp = tempfile.mkdtemp(prefix="/tmp/rbb")
    nodes: list[subprocess.Popen] = []
    try:
        subset = Path(temp) / "catalog.jsonl"
        subset.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        common = ["--catalog", str(subset), "--pdf-dir", str(Path(args.corpus).resolve() / "pdf")]
        local_s, local_out = _build([*common, "--index", f"{temp}/local", "--workers", str(args.cpus)])
        start = time.perf_counter()
        address = args.ray
        if address is None:
            address, nodes = _start_cluster(args.cpus, f"{temp}/ray")
        startup = time.perf_counter() - start
        ray_s, ray_out = _build([*common, "--index", f"{temp}/ray-index", "--ray", address])
        rebuild_s, _ = _build([*common, "--index", f"{temp}/ray-index", "--ray", address])
    finally:
        for node in nodes:
            node.terminate()
        for node in nodes:
            node.wait(60)
        shutil.rmtree(temp, ignore_errors=True)
    pages = int(local_out.split(" pages in ")[0].rsplit(" ", 1)[1])
    print(f"{len(rows)} documents, {pages} pages, {args.cpus} CPUs (pool processes / one-CPU Ray nodes)")
    print(f"local process pool: {pages / local_s:7.1f} pages/s ({local_s:.1f} s)  {local_out}")
    print(
        f"ray cluster:        {pages / ray_s:7.1f} pages/s ({ray_s:.1f} s)  {ray_s and local_s / ray_s:.2f}x local  {ray_out}"
    )
    print(
        f"overhead per document on Ray: {(ray_s - local_s) / len(rows) * 1000:+.0f} ms "
        f"((ray - local) / documents; connect + node probe + task dispatch)"
    )
    print(f"unchanged rebuild with --ray: {rebuild_s:.1f} s (nothing sent to the cluster)")
    if args.ray is None:
        print(f"cluster start-up (not counted above): {startup:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
