"""Peak memory of a whole dataset run against its question count, this code against a baseline (issue 33 item 11).

    .venv/bin/python -m bench.run_memory --demo DIR [--questions 12] [--wave-size 4] [--baseline TREE]
                                         [--concurrency 2] [--heap | --curve [--no-traces]]

DIR holds the demo corpus and index (`python -m evaluate.demo --out DIR --no-reader` makes them). The
first --distinct demo questions are repeated with a numbered suffix (distinct prompts and ids, the same
documents and gold) into datasets of N and 4N questions, and `collate run` answers, scores, writes and
logs each (default settings: question traces to a private MLflow store, no judge) with the rule-based
fake reader served from this process. What else grows with a run is held fixed, so that the growth
from N to 4N is what the run keeps of each finished question: both runs open the same documents (the
index store caches up to 64 documents' indexes: 4 -> 16 demo questions, each over new documents, took
the peak from 448 to 584 MB), and questions are planned in waves of --wave-size (COLLATE_WAVE_SIZE; a
wave's plans and passages are in memory while it is answered). TREE: a checkout of the code to compare
against (e.g. `git archive COMMIT | tar -x -C /tmp/before`), run the same way; omitted, only this tree
is measured. Each run is its own process: peak RSS is its ru_maxrss (wait4), peak PSS the highest Pss
of /proc/PID/smaps_rollup sampled every 0.1 s. Printed per run, then per tree the growth per question
from N to 4N, and this tree's peaks over the baseline's. --heap: each run in process under tracemalloc
(slower), and the Python heap it holds once every question is answered and scored (heap_held_mb, its
growth per question: what the run keeps of its answers, apart from native memory) and at its peak.
--curve: one run of 8N questions per tree, in process, its resident memory (VmRSS after a collection) as
its N-th, 2N-th, 4N-th and 8N-th answers are kept: the growth per question from N to 8N is the slope of
the run's memory once warmed up (a peak-to-peak figure of two runs mixes in the end of the run: writing
the run folder and its MLflow traces). --no-traces: the runs write no MLflow traces (--no-autolog).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# --heap: `collate run` in process under tracemalloc; the Python heap once every question is answered and
# scored (after a collection), as its outputs are about to be written: what the run holds of its answers.
HEAP_CHILD = """
import gc, json, sys, tracemalloc
from collate import run
from evaluate.runs import evaluation
held = []
write_outputs = evaluation.write_outputs
def measured(*args, **kwargs):
    gc.collect()
    held.append(tracemalloc.get_traced_memory()[0])
    return write_outputs(*args, **kwargs)
evaluation.write_outputs = measured
tracemalloc.start()
code = run.main(sys.argv[3:])  # argv[2] is "run", the command
with open(sys.argv[1], "w") as f:
    json.dump({"held": held[0], "peak": tracemalloc.get_traced_memory()[1]}, f)
sys.exit(code)
"""
# --curve: `collate run` in process; VmRSS (after a collection) each time the journal has kept the n-th
# answer of argv[2]'s counts, then once the scores are computed, then at the end; and the run's peak.
CURVE_CHILD = """
import gc, json, sys, threading
from collate import run
from evaluate.runs import evaluation, journal
counts, rows, lock, kept = {int(n) for n in sys.argv[2].split(",")}, {}, threading.Lock(), [0]
def rss_mb(key="VmRSS"):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(key + ":")) / 1024
def sample(at):
    gc.collect()
    rows[at] = round(rss_mb(), 1)
    with open(sys.argv[1], "w") as f:  # as it goes: a long run's curve so far can be read
        json.dump(rows, f)
append = journal.AnswerJournal.append
def counted(self, answered):
    outcome = append(self, answered)
    with lock:
        kept[0] += 1
        if kept[0] in counts:
            sample(str(kept[0]))
    return outcome
journal.AnswerJournal.append = counted
write_outputs = evaluation.write_outputs
def scored(*args, **kwargs):
    sample("scored")
    return write_outputs(*args, **kwargs)
evaluation.write_outputs = scored
code = run.main(sys.argv[4:])  # argv[3] is "run", the command
sample("end")
rows["peak"] = round(rss_mb("VmHWM"), 1)
with open(sys.argv[1], "w") as f:
    json.dump(rows, f)
sys.exit(code)
"""


def repeated_dataset(demo: Path, n: int, path: Path, distinct: int) -> Path:
    """n questions: the first `distinct` demo questions in turn, each with a numbered suffix and id."""
    items = json.loads((demo / "corpus" / "dataset.json").read_text(encoding="utf-8"))[:distinct]
    rows = []
    for i in range(n):
        item = dict(items[i % len(items)])
        item["question"] = f"{item['question']}（第{i}问）"
        item["question_id"] = f"{item['question_id']}_{i}"
        rows.append(item)
    path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    return path


def pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def measured_run(
    tree: Path,
    dataset: Path,
    index: Path,
    work: Path,
    env: dict,
    concurrency: int,
    wave_size: int,
    heap: bool = False,
    curve: list[int] | None = None,
    traces: bool = True,
) -> dict:
    """`collate run` of `dataset` with the code of `tree`, in its own process: its peaks and seconds, and
    with `curve` its resident memory at those answer counts."""
    out = work / "run"
    runner = ["-c", HEAP_CHILD, str(work / "heap.json")] if heap else ["-m", "collate"]
    if curve:
        runner = ["-c", CURVE_CHILD, str(work / "curve.json"), ",".join(map(str, curve))]
    command = [sys.executable, *runner, "run", "--dataset", str(dataset), "--index", str(index)]
    command += ["--out", str(out), "--concurrency", str(concurrency), "--no-judge", "--no-progress"]
    command += [] if traces else ["--no-autolog"]
    run_env = {
        **os.environ,
        **env,
        "PYTHONPATH": str(tree),
        "COLLATE_CACHE": "false",
        "COLLATE_WAVE_SIZE": str(wave_size),
        "MLFLOW_TRACKING_URI": f"sqlite:///{work / 'mlflow.db'}",
    }
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, cwd=tree, env=run_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    peak_pss = [0]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.1):
            peak_pss[0] = max(peak_pss[0], pss_kb(proc.pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    stderr = proc.stderr.read() if proc.stderr else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"collate run failed ({proc.returncode}) in {tree}: {stderr[-2000:]}")
    answered = sum(1 for line in (out / "answers.jsonl").open(encoding="utf-8") if line.strip())
    figures = {
        "questions": answered,
        "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
        "peak_pss_mb": round(peak_pss[0] / 1024, 1),
        "seconds": round(time.perf_counter() - start, 1),
    }
    if heap:
        traced = json.loads((work / "heap.json").read_text())
        figures["heap_held_mb"] = round(traced["held"] / 2**20, 2)
        figures["heap_peak_mb"] = round(traced["peak"] / 2**20, 2)
    if curve:
        figures["rss_mb"] = json.loads((work / "curve.json").read_text())
    return figures


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--demo", type=Path, default=Path("demo"), help="a demo folder (corpus/ and index/)")
    p.add_argument("--questions", type=int, default=12, help="N: runs of N and 4N questions (default 12)")
    p.add_argument("--wave-size", type=int, default=4, help="questions planned at once (default 4)")
    p.add_argument("--distinct", type=int, default=4, help="demo questions repeated (default 4)")
    p.add_argument("--baseline", type=Path, help="a checkout of the code to compare against")
    p.add_argument("--concurrency", type=int, default=2)
    p.add_argument("--heap", action="store_true", help="also the Python heap (tracemalloc; slower)")
    p.add_argument("--curve", action="store_true", help="one run of 8N questions: RSS at N, 2N, 4N, 8N")
    p.add_argument("--no-traces", action="store_true", help="the runs write no MLflow traces")
    args = p.parse_args(argv)
    from fakes.brain import Brain
    from fakes.server import FakeLMServer

    trees = {"baseline": args.baseline.resolve()} if args.baseline else {}
    trees["this"] = ROOT
    if args.curve:
        return curve(args, trees)
    figures: dict[str, dict[int, dict]] = {}
    with tempfile.TemporaryDirectory() as tmp, FakeLMServer(Brain()) as server:
        sizes = (args.questions, 4 * args.questions)
        datasets = {
            n: repeated_dataset(args.demo, n, Path(tmp) / f"dataset_{n}.json", args.distinct) for n in sizes
        }
        for n in sizes:  # the two trees in turn at each size: a change of load falls on both
            for name, tree in trees.items():
                work = Path(tmp) / f"{name}_{n}"
                work.mkdir()
                run = measured_run(
                    tree,
                    datasets[n],
                    args.demo / "index",
                    work,
                    server.env(),
                    args.concurrency,
                    args.wave_size,
                    heap=args.heap,
                )
                figures.setdefault(name, {})[n] = run
                print(f"{name:8s} {json.dumps(run)}", flush=True)
    for name, runs in figures.items():
        small, large = runs[sizes[0]], runs[sizes[1]]
        grow = {
            kind: round((large[key] - small[key]) * 1024 / (sizes[1] - sizes[0]), 1)
            for kind, key in (("RSS", "peak_rss_mb"), ("PSS", "peak_pss_mb"), ("heap held", "heap_held_mb"))
            if key in small
        }
        print(
            f"{name:8s} growth per question from {sizes[0]} to {sizes[1]}: "
            + ", ".join(f"{kind} {value} KB" for kind, value in grow.items())
        )
    if "baseline" in figures:
        for n in sizes:
            this, base = figures["this"][n], figures["baseline"][n]
            held = (
                f", Python heap held {this['heap_held_mb'] / base['heap_held_mb']:.3f}"
                if "heap_held_mb" in this
                else ""
            )
            print(
                f"{n} questions: this tree's peak RSS {this['peak_rss_mb'] / base['peak_rss_mb']:.3f}, "
                f"peak PSS {this['peak_pss_mb'] / base['peak_pss_mb']:.3f}{held} of the baseline's"
            )
    return 0


def curve(args, trees: dict[str, Path]) -> int:
    """--curve: each tree's run of 8N questions at the same time (the load falls on both; resident memory
    does not move with it), its RSS at N, 2N, 4N and 8N answers, and its growth per question."""
    from concurrent.futures import ThreadPoolExecutor

    from fakes.brain import Brain
    from fakes.server import FakeLMServer

    counts = [args.questions * 2**k for k in range(4)]
    with tempfile.TemporaryDirectory() as tmp, FakeLMServer(Brain()) as server:
        dataset = repeated_dataset(args.demo, counts[-1], Path(tmp) / "dataset.json", args.distinct)

        def measured(name: str) -> dict:
            work = Path(tmp) / name
            work.mkdir()
            return measured_run(
                trees[name], dataset, args.demo / "index", work, server.env(), args.concurrency,
                args.wave_size, curve=counts, traces=not args.no_traces,
            )  # fmt: skip

        with ThreadPoolExecutor(len(trees)) as pool:
            runs = dict(zip(trees, pool.map(measured, trees), strict=True))
    slopes = {}
    for name, run in runs.items():
        rss = run["rss_mb"]
        print(f"{name:8s} {json.dumps(run)}")
        steps = [
            f"{a}->{b}: {(rss[str(b)] - rss[str(a)]) * 1024 / (b - a):.1f}"
            for a, b in itertools.pairwise(counts)
        ]
        slopes[name] = (rss[str(counts[-1])] - rss[str(counts[0])]) * 1024 / (counts[-1] - counts[0])
        print(
            f"{name:8s} RSS growth per question {counts[0]}->{counts[-1]}: {slopes[name]:.1f} KB "
            f"({', '.join(steps)} KB); at that rate 10,000 questions hold "
            f"{rss[str(counts[0])] + slopes[name] * (10_000 - counts[0]) / 1024:.0f} MB "
            f"(at {counts[0]}: {rss[str(counts[0])]} MB)"
        )
    if "baseline" in runs:
        print(
            f"this tree's growth per question {slopes['this']:.1f} KB vs the baseline's {slopes['baseline']:.1f} KB; "
            f"RSS at {counts[-1]} questions {runs['this']['rss_mb'][str(counts[-1])] / runs['baseline']['rss_mb'][str(counts[-1])]:.3f}, "
            f"peak {runs['this']['rss_mb']['peak'] / runs['baseline']['rss_mb']['peak']:.3f} of the baseline's"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
