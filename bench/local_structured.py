"""Structured (JSON-schema decoding) vs free-form (ChatAdapter text) output on a local model server.

For each mode, runs `collate ask` on the same questions of a small synthetic corpus against the same
server, with fresh facts each time, and prints per stage: LM calls, LM errors, adapter parse failures
and LM seconds, plus wall time, answered/accounted documents, and the ratio structured / off.

    python -m bench.local_structured                       # starts llama.cpp's server (the `local` extra)
    python -m bench.local_structured --api-base URL --lm openai/NAME   # any running OpenAI-compatible server
    python -m bench.local_structured --fake                # the fake brain server: checks the script only

Settings are the local profile `fakes.llama_server.LOCAL` (override any COLLATE_* in the
environment).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

MODES = ("json_object", "off")  # json_object: llama-cpp-python's server spelling of JSON-schema decoding


def ask_once(corpus: Path, index: Path, question_id: str, fact_store: Path) -> tuple[int, dict, float, dict]:
    from collate import ask
    from programs.lm.progress import current_watch

    out, err = io.StringIO(), io.StringIO()
    started = time.monotonic()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = ask.main(
            [
                "--index",
                str(index),
                "--dataset",
                str(corpus / "dataset.json"),
                "--question-id",
                question_id,
                "--json",
                "--no-progress",
                "--fact-store",
                str(fact_store),
            ]
        )
    elapsed = time.monotonic() - started
    watch = current_watch()
    return (
        code,
        (json.loads(out.getvalue()) if code == 0 else {}),
        elapsed,
        (watch.summary() if watch else {}),
    )


def add(total: dict, summary: dict) -> None:
    for stage, counts in summary.items():
        into = total.setdefault(stage, {"calls": 0, "lm_errors": 0, "parse_failures": 0, "seconds": 0.0})
        for key, value in counts.items():
            into[key] += value


def run_mode(mode: str, corpus: Path, index: Path, items: list[dict], work: Path) -> dict:
    os.environ["COLLATE_STRUCTURED"] = mode
    stages: dict = {}
    wall, exits, docs, answered, accounted = 0.0, [], 0, 0, 0
    for n, item in enumerate(items):
        code, out, elapsed, summary = ask_once(
            corpus, index, item["question_id"], work / f"{mode}-{n}.sqlite"
        )
        wall += elapsed
        exits.append(code)
        add(stages, summary)
        in_scope = {row["id"] for row in item["metadata"]}
        docs += len(in_scope)
        answered += len(in_scope & {r["id"] for r in out.get("records", [])})
        accounted += len(in_scope & {m["doc_id"] for m in out.get("missing", [])})
        print(
            f"  {mode} {item['question_id']}: exit {code}, {elapsed:.0f} s, "
            f"answer {str(out.get('answer', ''))[:80]!r}",
            file=sys.stderr,
        )
    return {
        "stages": stages,
        "wall": wall,
        "exits": exits,
        "documents": docs,
        "answered": answered,
        "accounted": accounted,
    }


def report(results: dict) -> None:
    stages = sorted({s for r in results.values() for s in r["stages"]})
    print("| stage | " + " | ".join(f"{m}: calls / parse failures / LM errors / LM s" for m in MODES) + " |")
    print("|---|" + "---|" * len(MODES))
    for stage in stages:
        cells = []
        for mode in MODES:
            c = results[mode]["stages"].get(
                stage, {"calls": 0, "parse_failures": 0, "lm_errors": 0, "seconds": 0}
            )
            cells.append(f"{c['calls']} / {c['parse_failures']} / {c['lm_errors']} / {c['seconds']:.0f}")
        print(f"| {stage} | " + " | ".join(cells) + " |")
    for mode in MODES:
        r = results[mode]
        failures = sum(s["parse_failures"] for s in r["stages"].values())
        print(
            f"{mode}: wall {r['wall']:.0f} s, exits {r['exits']}, documents {r['documents']}: "
            f"{r['answered']} with a record, {r['accounted']} accounted missing; parse failures {failures}"
        )
    on, off = results[MODES[0]], results["off"]
    print(f"ratio {MODES[0]}/off: wall {on['wall'] / max(off['wall'], 1e-9):.2f}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.local_structured", description=__doc__.splitlines()[0])
    p.add_argument("--api-base", help="a running OpenAI-compatible server (default: start llama.cpp's)")
    p.add_argument("--lm", default="openai/smollm2", help="model id on that server (default openai/smollm2)")
    p.add_argument(
        "--fake", action="store_true", help="use the fake brain server (checks the script, no model)"
    )
    p.add_argument("--questions", type=int, default=2, help="dataset questions to ask per mode (default 2)")
    p.add_argument("--work", type=Path, help="folder for the corpus and index (default: a temporary one)")
    args = p.parse_args(argv)

    from fakes import llama_server
    from fakes.corpus import build_corpus, dataset_items
    from fakes.llama_server import LOCAL

    work = args.work or Path(tempfile.mkdtemp(prefix="bench_local_"))
    corpus, index = build_corpus(
        work, "--companies", "3", "--years", "2021", "2022", "--pages", "5", "--seed", "3"
    )
    items = sorted(dataset_items(corpus), key=lambda i: (abs(len(i["metadata"]) - 3), i["question_id"]))
    items = items[: args.questions]
    for name, value in LOCAL.items():
        os.environ.setdefault(name, value)
    with contextlib.ExitStack() as stack:
        if args.fake:
            from fakes.brain import Brain
            from fakes.server import FakeLMServer

            server = stack.enter_context(FakeLMServer(Brain()))
            env = {
                k: v
                for k, v in server.env().items()
                if k in ("COLLATE_LM", "COLLATE_API_BASE", "COLLATE_API_KEY")
            }
        elif args.api_base:
            env = {"COLLATE_LM": args.lm, "COLLATE_API_BASE": args.api_base, "COLLATE_API_KEY": "local"}
        else:
            why = llama_server.missing()
            if why:
                print(f"error: {why}", file=sys.stderr)
                return 2
            server = stack.enter_context(llama_server.LlamaServer(log_path=work / "server.log"))
            env = server.env()
        os.environ.update(env)
        results = {mode: run_mode(mode, corpus, index, items, work) for mode in MODES}
    report(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
