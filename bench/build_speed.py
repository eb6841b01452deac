"""Build throughput vs plain pdfplumber, parse-only speed, unchanged-rebuild time, and peak memory.

    python -m bench.build_speed --corpus /tmp/corpus [--docs 50] [--workers 2] [--dense auto|all]

On the same documents and the same number of processes, in one run:
  baseline  pdfplumber extract_text on every page                       pages/s
  parse     retrievers.documents.pdf.parse_pdf (text + ruled tables)              pages/s, ratio to baseline (target >= 10x)
  build     `python -m retrievers.build` end to end, a fresh index      pages/s, ratio to baseline (target >= 2x)
            (process start, model load, parse, chunk, embed, index, manifest: everything a user waits for)
  rebuild   the same command again, nothing changed                     seconds, share of build (target < 10%)
  CPU       the same in CPU-seconds (user + system of all child processes): steadier under shared load
  memory    peak PSS (and RSS) summed over the build's process tree (sampled /proc every 50 ms; target < 2 GB)
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _plumber_pages(path: str) -> int:
    import pdfplumber

    with pdfplumber.open(path) as pdf:
        for page in pdf.pages:
            page.extract_text()
            page.close()
        return len(pdf.pages)


def _parse_pages(path: str) -> int:
    from retrievers.documents.pdf import parse_pdf

    return len(parse_pdf(path).pages)


def _child_cpu() -> float:
    """CPU seconds (user + system) of all children and grandchildren reaped so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed_pool(fn, paths: list[str], workers: int) -> tuple[int, float, float]:
    """Pages, wall seconds, CPU seconds of running `fn` over the files in a process pool."""
    cpu, start = _child_cpu(), time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        pages = sum(pool.map(fn, paths))
    return pages, time.perf_counter() - start, _child_cpu() - cpu


def _pss(pid: int) -> int:
    """Proportional set size: shared pages (torch's libraries in every worker) counted once overall."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _tree(root: int) -> list[int]:
    """`root` and all its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))  # fields[1] is the parent pid
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def _tree_memory(root: int) -> tuple[int, int]:
    """(summed RSS, summed PSS) in bytes of the process tree under `root`."""
    rss = pss = 0
    for pid in _tree(root):
        try:
            with open(f"/proc/{pid}/statm") as fh:
                rss += int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            continue
        pss += _pss(pid)
    return rss, pss


def _run_build(args: list[str]) -> tuple[float, float, tuple[int, int], str]:
    """Wall seconds, CPU seconds, peak tree (RSS, PSS) in bytes, and stdout of one build subprocess."""
    cpu, start = _child_cpu(), time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "retrievers.build", *args, "--no-progress"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak, done = [0, 0], threading.Event()

    def sample():
        while not done.is_set():
            for i, value in enumerate(_tree_memory(proc.pid)):
                peak[i] = max(peak[i], value)
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = proc.communicate()
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"build failed ({proc.returncode}): {err[-2000:]}")
    return time.perf_counter() - start, _child_cpu() - cpu, (peak[0], peak[1]), out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", required=True, help="output folder of python -m data.synth")
    p.add_argument("--docs", type=int, default=50, help="first N documents of the catalog (default 50)")
    p.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    p.add_argument("--dense", default="auto", choices=["auto", "all", "none"], help="passed to the build")
    args = p.parse_args(argv)
    corpus = Path(
        args.corpus
    ).resolve()  # the build runs in the project's root: a relative path would land there
    catalog_path = corpus / "catalog.jsonl"
    if not catalog_path.is_file():
        print(
            f"error: {catalog_path} not found: generate a corpus with python -m data.synth --out DIR",
            file=sys.stderr,
        )
        return 2
    rows = [json.loads(line) for line in catalog_path.read_text(encoding="utf-8").splitlines() if line][
        : args.docs
    ]
    paths = [str(corpus / "pdf" / f"{r['id']}.pdf") for r in rows]
    with tempfile.TemporaryDirectory() as tmp:
        subset = Path(tmp) / "catalog.jsonl"
        subset.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        base_pages, base_s, base_cpu = _timed_pool(_plumber_pages, paths, args.workers)
        parse_pages, parse_s, parse_cpu = _timed_pool(_parse_pages, paths, args.workers)
        build_args = [
            "--catalog",
            str(subset),
            "--pdf-dir",
            str(corpus / "pdf"),
            "--index",
            str(Path(tmp) / "index"),
        ]
        build_args += ["--workers", str(args.workers), "--dense", args.dense]
        build_s, build_cpu, build_peak, build_out = _run_build(build_args)
        rebuild_s, rebuild_cpu, rebuild_peak, rebuild_out = _run_build(build_args)
    base_rate, parse_rate = base_pages / base_s, parse_pages / parse_s
    build_rate = parse_pages / build_s
    print(
        f"{len(paths)} documents, {base_pages} pages, {args.workers} worker processes, --dense {args.dense}"
    )
    print(f"baseline pdfplumber extract_text: {base_rate:8.1f} pages/s ({base_s:.1f} s)")
    print(
        f"parse (pypdfium2 + ruled tables): {parse_rate:8.1f} pages/s ({parse_s:.1f} s)  {parse_rate / base_rate:5.1f}x baseline (target >= 10x)"
    )
    print(
        f"build end to end:                 {build_rate:8.1f} pages/s ({build_s:.1f} s)  {build_rate / base_rate:5.1f}x baseline (target >= 2x)"
    )
    print(f"  {build_out.strip().splitlines()[0]}")
    print(
        f"rebuild unchanged:                {rebuild_s:8.2f} s = {100 * rebuild_s / build_s:.1f}% of build (target < 10%)"
    )
    print(f"  {rebuild_out.strip().splitlines()[0]}")
    print(
        f"peak memory of the build process tree: PSS {build_peak[1] / 2**30:.2f} GB (target < 2 GB), "
        f"RSS summed {build_peak[0] / 2**30:.2f} GB (counts shared libraries once per process); "
        f"rebuild PSS {rebuild_peak[1] / 2**30:.2f} GB"
    )
    # CPU seconds move much less than wall seconds when other jobs share the cores
    print(
        f"CPU-seconds per page: baseline {base_cpu / base_pages * 1000:.1f} ms, parse {parse_cpu / parse_pages * 1000:.1f} ms "
        f"({base_cpu / parse_cpu:.1f}x less), build {build_cpu / parse_pages * 1000:.1f} ms ({base_cpu / build_cpu:.1f}x less), "
        f"rebuild {rebuild_cpu:.2f} s = {100 * rebuild_cpu / build_cpu:.1f}% of build"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
