"""Same program, same data, same LM, run twice: the same requests and the same answers? (issue 21)

    .venv/bin/python -m bench.determinism --demo DIR [--limit 10] [--concurrency 4 4 1] [--jitter 0.1]

DIR holds the demo corpus and index (`python -m evaluate.demo --out DIR` makes them: DIR/corpus,
DIR/index). A fake OpenAI-compatible LM on 127.0.0.1 (tests/fakes/prompt_hash.py) answers from a
hash of the whole prompt, so any prompt that differs between runs can change an answer, as with a
real model, and each call waits a random 0..--jitter seconds, so threads finish in a different order
each run. `collate run` answers the first --limit questions once per --concurrency value (questions
at once), each run with its own fresh fact store. Printed: requests per run, and against the first
run, requests sent by one and not the other (a multiset difference) and answers that differ.
Then the dead-LM case: `collate run` and `collate ask` against a closed port (exit code, the lines).
Exit 0 when the two runs sent the same requests and gave the same answers, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import socket
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
        "--concurrency", type=int, nargs="+", default=[4, 4, 1], help="one run per value (default 4 4 1)"
    )
    p.add_argument("--latency", type=float, default=0.01, help="seconds per call (default 0.01)")
    p.add_argument("--jitter", type=float, default=0.1, help="up to this much more per call (default 0.1)")
    return p.parse_args(argv)


def one_run(demo: Path, out: Path, args, concurrency: int) -> tuple[dict, dict, int]:
    """(prompt multiset, question id -> answer, exit code) of one `collate run`."""
    from collate import run as collate_run
    from fakes.prompt_hash import PromptHashed
    from fakes.server import FakeLMServer

    responder = PromptHashed()
    with FakeLMServer(responder, latency=args.latency, jitter=args.jitter) as server:
        os.environ.update({**server.env(), "COLLATE_CACHE": "false"})
        argv = [
            "--dataset", str(demo / "corpus" / "dataset.json"), "--index", str(demo / "index"),
            "--out", str(out), "--limit", str(args.limit), "--concurrency", str(concurrency),
            "--no-judge", "--no-autolog", "--no-progress",
        ]  # fmt: skip
        with contextlib.redirect_stdout(io.StringIO()):
            code = collate_run.main(argv)
    answers = {}
    results = out / "results.jsonl"
    for line in results.read_text(encoding="utf-8").splitlines() if results.is_file() else []:
        row = json.loads(line)
        answers[row["question_id"]] = row.get("answer") or row.get("error")
    return dict(responder.prompts), answers, code


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
    args = parse_args(argv)
    demo = Path(args.demo)
    with tempfile.TemporaryDirectory(prefix="determinism-") as tmp:
        work = Path(tmp)
        os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{work / 'mlflow.db'}"
        runs = [one_run(demo, work / f"run{i}", args, c) for i, c in enumerate(args.concurrency)]
        first_prompts, first_answers, _ = runs[0]
        identical = True
        for i, (prompts, answers, code) in enumerate(runs):
            prompt_diff = differing_prompts(first_prompts, prompts)
            answer_diff = sum(first_answers.get(q) != a for q, a in answers.items())
            identical &= prompt_diff == 0 and answer_diff == 0
            print(
                f"run {i + 1} (concurrency {args.concurrency[i]}): exit {code}, {sum(prompts.values())} requests, "
                f"{len(answers)} answers; vs run 1: "
                f"{prompt_diff} requests differ, {answer_diff} answers differ"
            )
        dead_lm(demo, work)
    print("identical" if identical else "NOT identical")
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
