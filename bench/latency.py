"""Latency, call count, fact reuse and tokens of one many-document question, against a slow fake LM.

    .venv/bin/python -m bench.latency [--latency 0.2] [--documents 38] [--concurrency 8] [--workdir DIR]

A real OpenAI-compatible fake server on 127.0.0.1 (fakes/) answers every LM call after a fixed
delay, with the rule-based analyst brain. It runs in its own process, as a real LM server would: its
own work (reading prompts, composing replies) is not on the measured program's clock or GIL
(`--in-process` puts it back in the same process, for comparison). The script generates a synthetic corpus with enough banks,
indexes `--documents` of their A股年报 (both years of each bank: MuDABench's 38-document questions
are two-year questions), asks a 2021-2022 growth question over exactly those documents and prints:
  - wall time vs. the same calls one after another (calls x latency); target: ratio <= 1/5
  - LM calls; target: <= documents + 10
  - the same question again: extraction calls; target: 0 (facts are reused)
  - tokens per question (prompt / completion, as the server counted them)
Exit 0 when every target is met, 1 otherwise.
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

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ANNUAL = "A股年报"
YEARS = ("2021", "2022")
QUESTION = "针对中国A股市场，请你给出你知识库中2021-2022年资本增长率最快三家公司的股票代码是？"


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m bench.latency", description=__doc__.splitlines()[0])
    p.add_argument(
        "--latency", type=float, default=0.2, help="seconds the fake LM takes per call (default 0.2)"
    )
    p.add_argument("--documents", type=int, default=38, help="documents the question covers (default 38)")
    p.add_argument(
        "--concurrency", type=int, default=None, help="documents extracted at once (default: the program's)"
    )
    p.add_argument(
        "--workdir", help="keep the corpus and index here (reused when present); default a temp dir"
    )
    p.add_argument(
        "--in-process", action="store_true", help="run the fake server in this process (shares the GIL)"
    )
    return p.parse_args(argv)


class ServerProcess:
    """The fake LM server in a forked child; its counters are read over a pipe (same names as FakeLMServer)."""

    def __init__(self, latency: float):
        import multiprocessing

        self._pipe, child = multiprocessing.Pipe()
        self._proc = multiprocessing.get_context("fork").Process(
            target=_serve, args=(child, latency), daemon=True
        )
        self._proc.start()
        self.env = self._ask("env")

    def _ask(self, what: str):
        self._pipe.send(what)
        return self._pipe.recv()

    def stats(self) -> dict:
        return self._ask("stats")

    def reset_counts(self) -> None:
        self._ask("reset")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._ask("stop")
        self._proc.join(timeout=5)


def _serve(pipe, latency: float) -> None:
    from fakes.brain import Brain
    from fakes.server import FakeLMServer

    with FakeLMServer(Brain(), latency=latency) as server:
        while True:
            what = pipe.recv()
            if what == "env":
                pipe.send(server.env())
            elif what == "stats":
                pipe.send(stats_of(server))
            elif what == "reset":
                server.reset_counts()
                pipe.send(None)
            else:
                pipe.send(None)
                return


def stats_of(server) -> dict:
    return {
        "calls": server.calls,
        "kinds": server.calls_by_kind(),
        "tokens": server.tokens(),
        "peak": server.max_concurrency(),
        "busy": server.busy_seconds(),
    }


class InProcessServer:
    """The same interface over a FakeLMServer in this process."""

    def __init__(self, latency: float):
        from fakes.brain import Brain
        from fakes.server import FakeLMServer

        self._server = FakeLMServer(Brain(), latency=latency).start()
        self.env = self._server.env()

    def stats(self) -> dict:
        return stats_of(self._server)

    def reset_counts(self) -> None:
        self._server.reset_counts()

    def close(self) -> None:
        self._server.stop()


def scope_of(corpus: Path, documents: int) -> list[dict]:
    """`documents` A股年报 filings, both fiscal years of each bank in turn (a two-year growth question)."""
    rows = [
        json.loads(x)
        for x in (corpus / "catalog.jsonl").read_text(encoding="utf-8").splitlines()
        if x.strip()
    ]
    annual = sorted(
        (r for r in rows if r["doctype"] == ANNUAL and str(r["year"]) in YEARS),
        key=lambda r: (r["symbol"], r["year"]),
    )
    if len(annual) < documents:
        raise SystemExit(
            f"error: the corpus has {len(annual)} {ANNUAL} filings for {'/'.join(YEARS)}, "
            f"fewer than --documents {documents}"
        )
    return annual[:documents]


def prepare(work: Path, documents: int) -> tuple[Path, Path, list[dict]]:
    """Generate enough banks, then index only the filings the question covers (what the bench measures)."""
    from fakes.corpus import run_module

    corpus, index = work / "corpus", work / "index"
    banks = -(-documents // 2)
    companies = min(60, int(banks / 0.55) + 2)  # data.synth: ~3/5 of companies are A-share banks
    if not (corpus / "catalog.jsonl").exists():
        run_module(
            "data.synth",
            "--out",
            str(corpus),
            "--companies",
            str(companies),
            "--years",
            *YEARS,
            "--pages",
            "10",
            "--seed",
            "38",
            "-q",
        )
    scope = scope_of(corpus, documents)
    subset = work / "scope_catalog.jsonl"
    subset.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in scope), encoding="utf-8")
    run_module(
        "retrievers.build",
        "--catalog",
        str(subset),
        "--pdf-dir",
        str(corpus / "pdf"),
        "--index",
        str(index),
        "--workers",
        "2",
        "--no-progress",
        "--embedder",
        "hashing-256",
    )
    return corpus, index, scope


def ask_once(
    index: Path, scope_file: Path, question_id: str, fact_store: Path, concurrency: int | None
) -> tuple[int, dict, float]:
    from collate import ask

    argv = [
        "--index",
        str(index),
        "--dataset",
        str(scope_file),
        "--question-id",
        question_id,
        "--json",
        "--no-progress",
        "--fact-store",
        str(fact_store),
    ]
    if concurrency:
        argv += ["--concurrency", str(concurrency)]
    out = io.StringIO()
    started = time.monotonic()
    with contextlib.redirect_stdout(out):
        code = ask.main(argv)
    elapsed = time.monotonic() - started
    return code, (json.loads(out.getvalue()) if code == 0 else {}), elapsed


def write_scope(folder: Path, scope: list[dict]) -> Path:
    """A one-item dataset: the question and its documents (visible metadata only)."""
    item = {
        "question_id": "bench_latency",
        "question": QUESTION,
        "metadata": [{k: r[k] for k in ("id", "symbol", "year", "doctype")} for r in scope],
        "source_answer": [],
        "final_answer": "",
    }
    path = folder / "bench_dataset.json"
    path.write_text(json.dumps([item], ensure_ascii=False), encoding="utf-8")
    return path


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.latency <= 0 or args.documents < 1:
        print("error: --latency must be > 0 and --documents >= 1", file=sys.stderr)
        return 2
    with contextlib.ExitStack() as stack:
        work = (
            Path(args.workdir)
            if args.workdir
            else Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="collate-bench-")))
        )
        work.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        corpus, index, scope = prepare(work, args.documents)
        print(
            f"corpus + index of {len(scope)} documents ready in {time.monotonic() - started:.1f} s ({work})"
        )
        scope_file = write_scope(work, scope)
        facts = work / f"facts-{time.time_ns()}.sqlite"  # a fresh fact store: the first ask must extract
        server = (InProcessServer if args.in_process else ServerProcess)(args.latency)
        stack.callback(server.close)
        for name, value in {**server.env, "COLLATE_CACHE": "false"}.items():
            os.environ[name] = value

        code, first, wall = ask_once(index, scope_file, "bench_latency", facts, args.concurrency)
        s1 = server.stats()
        calls, kinds, tokens, peak, busy = s1["calls"], s1["kinds"], s1["tokens"], s1["peak"], s1["busy"]
        server.reset_counts()
        code2, second, wall2 = ask_once(index, scope_file, "bench_latency", facts, args.concurrency)
        s2 = server.stats()
        calls2, kinds2, tokens2 = s2["calls"], s2["kinds"], s2["tokens"]

    if code or code2:
        print(f"error: collate.ask exited {code} / {code2}", file=sys.stderr)
        return 1
    sequential = calls * args.latency
    ratio = wall / sequential
    checks = {
        f"wall / sequential = {ratio:.3f} <= 0.200": ratio <= 0.2,
        f"LM calls {calls} <= documents + 10 = {args.documents + 10}": calls <= args.documents + 10,
        f"second ask extraction calls {kinds2.get('extract', 0)} == 0": kinds2.get("extract", 0) == 0,
        f"no document missing ({len(first.get('missing', []))}, {len(second.get('missing', []))})": not first.get(
            "missing"
        )
        and not second.get("missing"),
    }
    print(f"documents in scope:          {args.documents} (records: {len(first.get('records', []))})")
    print(
        f"fake LM latency per call:    {args.latency:.3f} s "
        f"({'same process' if args.in_process else 'server in its own process'})"
    )
    print(
        f"LM calls (first ask):        {calls}  by kind: {dict(sorted(kinds.items()))}  peak in flight: {peak}"
    )
    print(f"wall time (first ask):       {wall:.2f} s")
    print(f"calls x latency (serial):    {sequential:.2f} s")
    print(f"ratio wall / serial:         {ratio:.3f}")
    print(
        f"LM busy time (any call in flight): {busy:.2f} s -> ratio {busy / sequential:.3f}; the rest, "
        f"{wall - busy:.2f} s, is retrieval, sandbox and program overhead"
    )
    print(
        f"tokens (first ask):          {tokens['total_tokens']} ({tokens['prompt_tokens']} prompt + "
        f"{tokens['completion_tokens']} completion); program usage: {first.get('usage')}"
    )
    print(
        f"second identical ask:        {calls2} LM calls  by kind: {dict(sorted(kinds2.items()))}  wall {wall2:.2f} s"
    )
    print(
        f"tokens (second ask):         {tokens2['total_tokens']} ({tokens2['prompt_tokens']} prompt + "
        f"{tokens2['completion_tokens']} completion)"
    )
    print(f"answer:                      {first.get('answer')}")
    for label, ok in checks.items():
        print(f"{'PASS' if ok else 'FAIL'}  {label}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
