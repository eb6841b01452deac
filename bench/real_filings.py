"""Ingestion speed and page-level evidence recall on real filings (FinanceBench dev: SEC 10-K/10-Q/8-K).

    python -m bench.real_filings [--docs ../shared/realdocs/financebench-dev] [--workers 2]
                                 [--only ADOBE_2015_10K,...] [--skip-speed] [--skip-recall]
                                 [--index DIR] [--show-misses N]

Between query experiments, `--skip-speed --index DIR` reuses DIR: the recall step runs the build first,
which redoes only documents whose file or pipeline (parser, chunker, tokenizer, embedder) changed, and
checks the rest in about a second.

--docs defaults to $COLLATE_REALDOCS/financebench-dev, else <repo>/../shared/realdocs/financebench-dev.
The folder holds catalog.jsonl, pdf/ and questions.jsonl (question, doc_id, 1-based evidence_pages).

Speed, on the same files and the same number of processes, in one run (see bench/build_speed.py):
  baseline  pdfplumber extract_text on every page                      pages/s
  parse     retrievers.documents.pdf.parse_pdf                                   ratio to baseline (target >= 10x)
  build     `python -m retrievers.build` end to end, fresh index       ratio to baseline (target >= 2x, aim 5x)
  rebuild   the same command again, nothing changed                    share of the build (target < 10%)
  memory    peak PSS of the build's process tree                       (target < 2 GB)
  and the projected wall time of a build of 80,000 pages at the measured build rate.

Recall: every question's text is the query on its own document; a hit is a top-k passage whose pages
overlap an evidence page. Printed @5 and @10 for hybrid, dense and BM25 (target hybrid@5 >= 0.65), and the
mean reciprocal rank of the first passage on an evidence page (0 beyond rank 100): on 38 questions one
question moves recall by 0.026, the rank of every question moves MRR. Printed for all questions, then
apart for metric and prose questions: metric when FinanceBench's question_type is "metrics-generated" (a
figure computed from the statements: "FY2019 inventory turnover ratio"), prose otherwise (what drove a
change, legal proceedings, customers, a segment's figure named in words); without a question_type, metric
when the gold answer is a number ("$4.60", "65.4%").
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

from bench.build_speed import _parse_pages, _plumber_pages, _run_build, _timed_pool  # noqa: E402

MUDABENCH_PAGES = 80_000
TARGET_RECALL = 0.65


def default_docs() -> Path:
    env = os.environ.get("COLLATE_REALDOCS")
    base = Path(env) if env else ROOT.parent / "shared" / "realdocs"
    return base / "financebench-dev"


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def speed(docs: Path, rows: list[dict], workers: int, keep_index: Path | None) -> None:
    paths = [str(docs / r["path"]) for r in rows]
    with tempfile.TemporaryDirectory() as tmp:
        catalog = Path(tmp) / "catalog.jsonl"
        catalog.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        base_pages, base_s, base_cpu = _timed_pool(_plumber_pages, paths, workers)
        parse_pages, parse_s, parse_cpu = _timed_pool(_parse_pages, paths, workers)
        index = keep_index or Path(tmp) / "index"
        if keep_index is not None:
            import shutil

            shutil.rmtree(keep_index, ignore_errors=True)
        build_args = ["--catalog", str(catalog), "--pdf-dir", str(docs), "--index", str(index)]
        build_args += ["--workers", str(workers)]
        build_s, build_cpu, build_peak, build_out = _run_build(build_args)
        rebuild_s, rebuild_cpu, _peak, rebuild_out = _run_build(build_args)
    base_rate, parse_rate, build_rate = base_pages / base_s, parse_pages / parse_s, parse_pages / build_s
    print(f"{len(paths)} documents, {base_pages} pages, {workers} worker processes")
    print(f"baseline pdfplumber extract_text: {base_rate:8.1f} pages/s ({base_s:.1f} s)")
    print(
        f"parse (retrievers.documents.pdf):           {parse_rate:8.1f} pages/s ({parse_s:.1f} s)  "
        f"{parse_rate / base_rate:5.1f}x baseline (target >= 10x)"
    )
    print(
        f"build end to end:                 {build_rate:8.1f} pages/s ({build_s:.1f} s)  "
        f"{build_rate / base_rate:5.1f}x baseline (target >= 2x, aim 5x)"
    )
    print(f"  {build_out.strip().splitlines()[0]}")
    print(
        f"rebuild unchanged:                {rebuild_s:8.2f} s = {100 * rebuild_s / build_s:.1f}% of build "
        f"(target < 10%)"
    )
    print(f"  {rebuild_out.strip().splitlines()[0]}")
    print(f"peak memory of the build process tree: PSS {build_peak[1] / 2**30:.2f} GB (target < 2 GB)")
    print(
        f"CPU ms/page: baseline {base_cpu / base_pages * 1000:.1f}, parse {parse_cpu / parse_pages * 1000:.1f} "
        f"({base_cpu / parse_cpu:.1f}x less), build {build_cpu / parse_pages * 1000:.1f} "
        f"({base_cpu / build_cpu:.1f}x less)"
    )
    hours = MUDABENCH_PAGES / build_rate / 3600
    print(
        f"projected build of {MUDABENCH_PAGES:,} pages with {workers} workers: {hours:.1f} h ({build_rate:.1f} pages/s)"
    )


def _hit(chunks, top, evidence: set[int]) -> bool:
    return any(evidence & set(range(chunks[i].page, chunks[i].page_end + 1)) for i in top)


def _reciprocal_rank(chunks, order, evidence: set[int]) -> float:
    return next((1 / (r + 1) for r, i in enumerate(order) if _hit(chunks, [i], evidence)), 0.0)


_NUMBER = re.compile(r"^[$€£¥]?\s*-?[\d,]*\.?\d+\s*(%|percent|x|times|days|million|billion)?\.?$", re.I)


def question_kind(q: dict) -> str:
    """ "metric" or "prose" (see the module's doc)."""
    if q.get("question_type"):
        return "metric" if q["question_type"] == "metrics-generated" else "prose"
    return "metric" if _NUMBER.match(str(q.get("answer", "")).strip()) else "prose"


def recall(docs: Path, rows: list[dict], index: Path, workers: int, show_misses: int) -> None:
    from retrievers.building.build import build_index
    from retrievers.catalog import Catalog
    from retrievers.indexing.store import IndexStore

    ids = {r["id"] for r in rows}
    questions = [q for q in _rows(docs / "questions.jsonl") if q["doc_id"] in ids]
    with tempfile.TemporaryDirectory() as tmp:
        catalog = Path(tmp) / "catalog.jsonl"
        catalog.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        start = time.perf_counter()
        report = build_index(Catalog.load(catalog), docs, index, workers=workers, progress=False)
    print(
        f"index {index}: {report.count('built')} built, {report.count('cached')} unchanged, "
        f"{report.count('failed')} failed, {time.perf_counter() - start:.1f} s"
    )
    store = IndexStore.open(index)
    modes = ("hybrid", "dense", "bm25")
    hits: dict[tuple, list[float]] = defaultdict(list)  # (kind, mode, "@5" | "@10" | "mrr") -> per question
    misses = []
    for q in questions:
        idx = store.index(q["doc_id"])
        evidence = set(q["evidence_pages"])
        vector = idx.query_vector(q["question"]) if idx.has_dense else None
        for mode in modes:
            if mode == "dense" and vector is None:
                continue
            scores = idx.ranked(q["question"], mode, vector)
            order = [int(i) for i in np.argsort(-scores, kind="stable")[:100]]
            for kind in ("all", question_kind(q)):
                for k in (5, 10):
                    hits[(kind, mode, f"@{k}")].append(_hit(idx.chunks, order[:k], evidence))
                hits[(kind, mode, "mrr")].append(_reciprocal_rank(idx.chunks, order, evidence))
            if mode == "hybrid" and not _hit(idx.chunks, order[:5], evidence):
                misses.append((q, [idx.chunks[i] for i in order[:5]]))
    print(f"page-level evidence recall on {len(questions)} questions (question text as the query)")
    for kind in ("all", "metric", "prose"):
        n = len(hits[(kind, "hybrid", "@5")])
        if n:
            print(f" {kind} questions ({n}):")
        for mode in modes:
            h5, h10, rr = (hits[(kind, mode, m)] for m in ("@5", "@10", "mrr"))
            if h5:
                print(f"  {mode:<7} @5 {np.mean(h5):.3f}   @10 {np.mean(h10):.3f}   MRR {np.mean(rr):.3f}")
    h5 = hits[("all", "hybrid", "@5")]
    rate = sum(h5) / max(1, len(h5))
    print(
        f"hybrid recall@5 {rate:.3f} (target >= {TARGET_RECALL}) {'PASS' if rate >= TARGET_RECALL else 'BELOW'}"
    )
    for q, chunks in misses[:show_misses]:
        print(
            f"\nMISS {q['doc_id']} ({question_kind(q)}) evidence={q['evidence_pages']} q={q['question'][:160]!r}"
        )
        for c in chunks:
            print(f"   p{c.page}-{c.page_end} [{c.path[-60:]}] | " + " ".join(c.text.split())[:150])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", type=Path, default=default_docs(), help="the financebench-dev folder")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--only", help="comma-separated document ids (a subset while iterating)")
    p.add_argument("--skip-speed", action="store_true")
    p.add_argument("--skip-recall", action="store_true")
    p.add_argument("--index", type=Path, help="index folder for recall (kept; default a temporary one)")
    p.add_argument("--show-misses", type=int, default=0)
    args = p.parse_args(argv)
    if not (args.docs / "catalog.jsonl").is_file():
        print(
            f"error: {args.docs}/catalog.jsonl not found: pass --docs or set COLLATE_REALDOCS to the realdocs folder",
            file=sys.stderr,
        )
        return 2
    rows = _rows(args.docs / "catalog.jsonl")
    if args.only:
        wanted = set(args.only.split(","))
        rows = [r for r in rows if r["id"] in wanted]
    with tempfile.TemporaryDirectory() as tmp:
        index = args.index or Path(tmp) / "index"
        if not args.skip_speed:
            # the build's index is the one recall reads: no second build
            speed(args.docs, rows, args.workers, index)
        if not args.skip_recall:
            recall(args.docs, rows, index, args.workers, args.show_misses)
    return 0


if __name__ == "__main__":
    sys.exit(main())
