"""Waves (issue 33 item 11): time to the first answer and peak memory of a large dataset run, one wave
(every question planned first) against fixed waves of COLLATE_WAVE_SIZE questions.

The dataset is synthetic: the demo corpus's questions, each asked N/40 times over its own documents
with a numbered suffix (distinct prompts, the same fields), answered by the demo reader in process
(fakes/engine.py: no HTTP, so the figures are the program's own). Each mode runs in a child process
(peak RSS is per process) and stops at its first answer unless --full:

    python -m bench.waves --demo demo [--questions 2000] [--wave-size 200] [--full]

The dataset run (evaluate.runs.answering) keeps each answer as it comes and lets answer_batch drop a
finished wave's results (keep_results=False), as these children do; `--child kept --full` keeps every
result to the end, as the run did before (its whole-run peak RSS against `--child waves --full`).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def child(demo: Path, questions: int, wave_size: int | None, full: bool, keep: bool = False) -> dict:
    import dspy

    from evaluate.dataset import load_dataset
    from fakes.engine import brain_lm
    from programs.analyst import build_program
    from programs.batch import answer_batch
    from programs.facts.store import FactStore
    from programs.lm.settings import Settings
    from retrievers.indexing.store import IndexStore

    items = load_dataset(demo / "corpus" / "dataset.json")
    asked = [
        (f"{items[i % len(items)].question}（第{i}问）", list(items[i % len(items)].doc_ids) or None)
        for i in range(questions)
    ]
    store = IndexStore.open(demo / "index")
    with tempfile.TemporaryDirectory() as tmp:
        facts = FactStore(Path(tmp) / "facts.sqlite")
        program = build_program(Settings(lm="fake/brain", concurrency=8), store, facts=facts)
        start = time.perf_counter()
        first: list[float] = []

        def answered(i, result, usage):
            if not first:
                first.append(time.perf_counter() - start)
                if not full:  # the figures so far, then out at once (a pool would finish its wave first)
                    print(json.dumps(figures(first, time.perf_counter() - start)), flush=True)
                    os._exit(0)

        with dspy.context(lm=brain_lm(), adapter=dspy.ChatAdapter(use_json_adapter_fallback=False)):
            answer_batch(
                program, asked, concurrency=4, on_answered=answered, wave_size=wave_size, keep_results=keep
            )
        return figures(first, time.perf_counter() - start)


def figures(first: list[float], seconds: float) -> dict:
    return {
        "first_answer_s": round(first[0], 1) if first else None,
        "seconds": round(seconds, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--demo", type=Path, default=Path("demo"), help="a demo folder (corpus/ and index/)")
    p.add_argument("--questions", type=int, default=2000)
    p.add_argument("--wave-size", type=int, default=200)
    p.add_argument("--full", action="store_true", help="answer every question (else stop at the first)")
    p.add_argument("--child", choices=["one", "waves", "kept"], help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        size = args.questions if args.child == "one" else args.wave_size
        print(
            json.dumps(child(args.demo, args.questions, size, args.full, keep=args.child == "kept"))
        )  # --full only: else it exits at once
        return 0
    figures = {}
    for mode in ("one", "waves"):
        cmd = [sys.executable, "-m", "bench.waves", "--child", mode, "--demo", str(args.demo)]
        cmd += ["--questions", str(args.questions), "--wave-size", str(args.wave_size)]
        cmd += ["--full"] if args.full else []
        done = subprocess.run(cmd, capture_output=True, text=True, check=True)
        figures[mode] = json.loads(done.stdout.strip().splitlines()[-1])
        label = "one wave" if mode == "one" else f"waves of {args.wave_size}"
        print(f"{label:14s} {json.dumps(figures[mode])}")
    one, waves = figures["one"], figures["waves"]
    if one["first_answer_s"] and waves["first_answer_s"]:
        print(
            f"first answer: {waves['first_answer_s'] / one['first_answer_s']:.3f} of one wave's time; "
            f"peak memory {waves['peak_rss_mb'] / one['peak_rss_mb']:.3f} of one wave's"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
