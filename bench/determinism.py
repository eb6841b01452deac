"""Same program, same data, same LM, run twice: the same requests, answers and programs? (issues 21, 31)

    .venv/bin/python -m bench.determinism --demo DIR [--limit 10] [--concurrency 4 4 1] [--jitter 0.4]
                                          [--twice] [--cache] [--compile-threads 1 2 4] [--compile-limit 4]

DIR holds the demo corpus and index (`python -m evaluate.demo --out DIR` makes them: DIR/corpus,
DIR/index). A fake OpenAI-compatible LM on 127.0.0.1 (fakes/prompt_hash.py) answers from a hash of the
whole prompt, so any prompt that differs between runs can change an answer, as with a real model; each
call waits --latency plus up to --jitter seconds, the share a function of the prompt (as a real model's
longer reply would be), so calls finish in another order than they started. Every command runs in its
own process, the hash seed (PYTHONHASHSEED) 1, 2, 1, 2, ... in turn, each with a fresh fact store and
DSPy cache. `collate run` answers the first --limit questions once per --concurrency value (`--twice`:
each question asked twice, under a second id; `--cache`: DSPy's cache on). `collate compile --optimizer
bootstrap --seed 0 --threshold 0 --max-demos 2` runs once per --compile-threads value. Printed: requests
per run, and against the first run, requests sent by one and not the other (a multiset difference),
answers that differ, and whether each compile saved the first one's program. Then the dead-LM case.
Exit 0 when everything was identical, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")


def parse_args(argv):
    p = argparse.ArgumentParser(prog="bench/determinism.py", description=__doc__.splitlines()[0])
    p.add_argument("--demo", required=True, help="folder with corpus/ and index/ (python -m evaluate.demo)")
    p.add_argument("--limit", type=int, default=10, help="first N questions (default 10)")
    p.add_argument(
        "--concurrency", type=int, nargs="*", default=[4, 4, 1], help="one run per value (default 4 4 1)"
    )
    p.add_argument("--latency", type=float, default=0.01, help="seconds per call (default 0.01)")
    p.add_argument("--jitter", type=float, default=0.1, help="up to this much more per call (default 0.1)")
    p.add_argument("--twice", action="store_true", help="ask each question twice, under two ids")
    p.add_argument("--cache", action="store_true", help="DSPy's cache on (fresh per run)")
    p.add_argument(
        "--compile-threads", type=int, nargs="*", default=[], help="one bootstrap compile per value"
    )
    p.add_argument("--compile-limit", type=int, default=4, help="the compiles' --limit (default 4)")
    return p.parse_args(argv)


def command(server, work: Path, number: int, module: str, *args: str, cache: bool) -> int:
    """One CLI in its own process, hash seed 1 or 2 by turn, a fresh DSPy cache; its exit code."""
    env = {
        **os.environ,
        **server.env(),
        "COLLATE_CACHE": "true" if cache else "false",
        "PYTHONHASHSEED": str(1 + number % 2),
        "PYTHONPATH": str(ROOT),
        "DSPY_CACHEDIR": str(work / f"cache{number}"),
    }
    done = subprocess.run(
        [sys.executable, "-m", module, *args], env=env, cwd=work, capture_output=True, text=True
    )
    if done.returncode:
        print(f"    {module} exit {done.returncode}: {done.stderr[-400:]}")
    return done.returncode


def dataset_of(demo: Path, work: Path, twice: bool) -> Path:
    source = demo / "corpus" / "dataset.json"
    if not twice:
        return source
    items = json.loads(source.read_text(encoding="utf-8"))
    doubled = [c for item in items for c in (item, {**item, "question_id": f"{item['question_id']}-again"})]
    path = work / "twice.json"
    path.write_text(json.dumps(doubled, ensure_ascii=False), encoding="utf-8")
    return path


def one_run(server, responder, demo: Path, work: Path, args, number: int, concurrency: int):
    """(prompt multiset, question id -> answer, exit code) of one `collate run`."""
    out = work / f"run{number}"
    limit = args.limit * (2 if args.twice else 1)
    code = command(
        server, work, number, "evaluate.run", "--dataset", str(dataset_of(demo, work, args.twice)),
        "--index", str(demo / "index"), "--out", str(out), "--limit", str(limit), "--concurrency",
        str(concurrency), "--no-judge", "--no-autolog", "--no-progress", cache=args.cache,
    )  # fmt: skip
    answers = {}
    results = out / "results.jsonl"
    for line in results.read_text(encoding="utf-8").splitlines() if results.is_file() else []:
        row = json.loads(line)
        answers[row["question_id"]] = row.get("answer") or row.get("error")
    prompts = dict(responder.prompts)
    responder.prompts.clear()
    return prompts, answers, code


def one_compile(server, responder, demo: Path, work: Path, args, number: int, threads: int):
    """(prompt multiset, the saved program, exit code) of one bootstrap compile."""
    out = work / f"compiled{number}.json"
    code = command(
        server, work, number, "optimize.compile", "--dataset", str(demo / "corpus" / "dataset.json"),
        "--index", str(demo / "index"), "--out", str(out), "--optimizer", "bootstrap", "--seed", "0",
        "--limit", str(args.compile_limit), "--threshold", "0", "--max-demos", "2", "--threads", str(threads),
        "--no-autolog", cache=args.cache,
    )  # fmt: skip
    prompts = dict(responder.prompts)
    responder.prompts.clear()
    return prompts, (out.read_text(encoding="utf-8") if out.is_file() else None), code


def differing_prompts(a: dict, b: dict) -> int:
    """Requests one run sent and the other did not (a multiset difference, both ways)."""
    return sum(abs(a.get(k, 0) - b.get(k, 0)) for k in set(a) | set(b))


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens there


def dead_lm(demo: Path, work: Path) -> None:
    """What `collate run` and `collate ask` say and return when the LM endpoint is down."""
    from collate import ask as collate_ask
    from collate import run as collate_run

    os.environ.update(
        {
            "COLLATE_LM": "openai/fake-brain",
            "COLLATE_API_BASE": f"http://127.0.0.1:{closed_port()}/v1",
            "COLLATE_API_KEY": "x",
            "COLLATE_NUM_RETRIES": "0",
        }
    )
    dataset, index = demo / "corpus" / "dataset.json", demo / "index"
    for name, call in (
        ("collate run --limit 2", lambda: collate_run.main(
            ["--dataset", str(dataset), "--index", str(index), "--out", str(work / "dead"), "--limit", "2",
             "--no-judge", "--no-autolog", "--no-progress"])),
        ("collate ask --json", lambda: collate_ask.main(
            ["--index", str(index), "--json", "--no-progress", "Which bank had the highest total assets in 2022?"])),
    ):  # fmt: skip
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = call()
        lines = [ln for ln in (out.getvalue() + err.getvalue()).splitlines() if ln.strip()]
        print(f"dead LM, {name}: exit {code}")
        for line in lines[:8]:
            print(f"    {line[:200]}")
    os.environ.pop("COLLATE_NUM_RETRIES")


def main(argv=None) -> int:
    from fakes.prompt_hash import PromptHashed
    from fakes.server import FakeLMServer

    args = parse_args(argv)
    demo = Path(args.demo)
    identical = True
    with tempfile.TemporaryDirectory(prefix="determinism-") as tmp:
        work = Path(tmp)
        os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{work / 'mlflow.db'}"
        responder = PromptHashed()
        with FakeLMServer(
            responder, latency=args.latency, jitter=args.jitter, jitter_by_prompt=True
        ) as server:
            runs = [
                one_run(server, responder, demo, work, args, i, c) for i, c in enumerate(args.concurrency)
            ]
            compiles = [
                one_compile(server, responder, demo, work, args, i, t)
                for i, t in enumerate(args.compile_threads)
            ]
        for i, (prompts, answers, code) in enumerate(runs):
            prompt_diff = differing_prompts(runs[0][0], prompts)
            answer_diff = sum(runs[0][1].get(q) != a for q, a in answers.items())
            identical &= prompt_diff == 0 and answer_diff == 0 and code == 0
            print(
                f"run {i + 1} (concurrency {args.concurrency[i]}, hash seed {1 + i % 2}): exit {code}, "
                f"{sum(prompts.values())} requests, {len(answers)} answers; vs run 1: "
                f"{prompt_diff} requests differ, {answer_diff} answers differ"
            )
        for i, (prompts, program, code) in enumerate(compiles):
            prompt_diff = differing_prompts(compiles[0][0], prompts)
            same = program is not None and program == compiles[0][1]
            identical &= prompt_diff == 0 and same and code == 0
            print(
                f"compile {i + 1} (threads {args.compile_threads[i]}, hash seed {1 + i % 2}): exit {code}, "
                f"{sum(prompts.values())} requests; vs compile 1: {prompt_diff} requests differ, "
                f"program {'identical' if same else 'DIFFERENT'}"
            )
        dead_lm(demo, work)
    print("identical" if identical else "NOT identical")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
