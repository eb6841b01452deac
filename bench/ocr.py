"""OCR (issue 23): what scanned copies of filings lose against their text-layer originals, and its speed.

    python -m bench.ocr [--out /tmp/ocr-bench] [--companies 2] [--pages 6] [--workers 2] [--real 6] [--real-only]

In one run:
  corpus    python -m data.synth --companies C --years 2022 --pages P (or --corpus DIR), and a "scanned" copy
            of every filing: each page rendered at 150 dpi, wrapped in a PDF with no text layer
            (data.synth.scanned.image_only_pdf)
  recall    value recall@5 of the shipped search (retrievers.indexing.store.IndexStore.search, default build) on the
            originals and on the scans, per language: a truth row is a hit when a top-5 chunk holds one of its
            strings, exactly, and after folding (spaces, widths, case: factcheck.quotes.fold, how the fact
            check compares). Target: the scans within 0.05 of the originals.
  checked   truth strings the fact check finds on their own page (factcheck.check.check_fact with the
            string as quote and value), originals vs scans
  speed     the scans' build (fresh index, W processes) vs the originals' build: wall seconds, OCR pages/s
            (pages / build wall) and per process (pages / OCR seconds), parse_pdf pages/s of the originals as
            the baseline, and the ratio
  real      the first R evidence pages of the FinanceBench filings (../shared/realdocs; skipped if absent):
            each rendered and wrapped like the scans, read by retrievers.documents.ocr, and the numbers of its text layer
            (2+ digits) looked for in what OCR read (spaces aside)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

from data.synth.scanned import image_only_pdf
from factcheck.check import USABLE, check_fact
from factcheck.quotes import fold
from retrievers.building.build import build_index
from retrievers.catalog import Catalog
from retrievers.documents.pdf import parse_pdf
from retrievers.indexing.store import IndexStore

ROOT = Path(__file__).resolve().parents[1]
REALDOCS = Path(os.environ.get("COLLATE_REALDOCS", ROOT.parent / "shared" / "realdocs")) / "financebench-dev"
TARGET = 0.05  # the scans' recall may trail the originals' by at most this
NUMBER = re.compile(r"\d[\d,.]*\d")  # 2+ digits: "7", "1" are found anywhere


def _corpus(args) -> Path:
    if args.corpus:
        return Path(args.corpus)
    out = Path(args.out) / "corpus"
    if not (out / "truth.jsonl").is_file():
        subprocess.run(
            [sys.executable, "-m", "data.synth", "--out", str(out), "--companies", str(args.companies)]
            + ["--years", "2022", "--pages", str(args.pages), "-q"],
            cwd=ROOT,
            check=True,
        )
    return out


def _scans(corpus: Path, out: Path) -> Path:
    folder = out / "scanned-pdf"
    for pdf in sorted((corpus / "pdf").glob("*.pdf")):
        if not (folder / pdf.name).is_file():
            image_only_pdf(pdf, folder / pdf.name)
    return folder


def _build(corpus: Path, pdf_dir: Path, index: Path, workers: int) -> tuple[object, float]:
    shutil.rmtree(index, ignore_errors=True)  # fresh: its OCR cache too, so every page is read now
    start = time.perf_counter()
    report = build_index(
        Catalog.load(corpus / "catalog.jsonl"), pdf_dir, index, workers=workers, progress=False
    )
    return report, time.perf_counter() - start


def _recall(store: IndexStore, rows: list[dict], k: int) -> dict:
    hits = defaultdict(list)
    for row in rows:
        texts = [p.text for p in store.search(row["doc_id"], row["description"], k=k)]
        exact = any(s in t for t in texts for s in row["strings"])
        folded = any(fold(s) in fold(t) for t in texts for s in row["strings"])
        hits[(row["language"], "exact")].append(exact)
        hits[(row["language"], "folded")].append(folded)
    return {key: sum(v) / len(v) for key, v in hits.items()}


def _checked(store: IndexStore, rows: list[dict]) -> dict:
    found = defaultdict(list)
    pages = {}
    for row in rows:
        if row["doc_id"] not in pages:
            pages[row["doc_id"]] = store.page_texts(row["doc_id"])
        s = row["strings"][0]
        verdict = check_fact(s, None, s, row["page"], pages[row["doc_id"]])
        found[row["language"]].append(verdict.status in USABLE)
    return {lang: sum(v) / len(v) for lang, v in found.items()}


def _parse_rate(pdf_dir: Path) -> float:
    start, pages = time.perf_counter(), 0
    for pdf in sorted(pdf_dir.glob("*.pdf")):
        pages += len(parse_pdf(pdf).pages)
    return pages / (time.perf_counter() - start)


def _real_pages(count: int, out: Path) -> None:
    if not (REALDOCS / "questions.jsonl").is_file() or count <= 0:
        print(f"real: skipped ({REALDOCS} absent)")
        return
    import pypdfium2 as pdfium

    from retrievers.documents.ocr import engine, read_page
    from retrievers.documents.page_text import raw_page_texts

    catalog = {
        d["id"]: d for d in map(json.loads, (REALDOCS / "catalog.jsonl").read_text().splitlines()) if d
    }
    chosen: list[tuple[str, int]] = []
    for q in map(json.loads, (REALDOCS / "questions.jsonl").read_text().splitlines()):
        for page in q["evidence_pages"]:
            if (q["doc_id"], page) not in chosen and len(chosen) < count:
                chosen.append((q["doc_id"], page))
    engine()  # loaded before the clock starts: once per process
    total = recovered = 0
    seconds = 0.0
    for doc_id, number in chosen:
        source = REALDOCS / catalog[doc_id]["path"]
        numbers = set(NUMBER.findall(raw_page_texts(source)[number]))
        scan = image_only_pdf(source, out / "real" / f"{doc_id}-p{number}.pdf", pages=[number])
        pdf = pdfium.PdfDocument(str(scan))
        try:
            start = time.perf_counter()
            lines = read_page(pdf[0])
            seconds += time.perf_counter() - start
        finally:
            pdf.close()
        read = "".join(x.text for x in lines).replace(" ", "")
        missed = sorted(n for n in numbers if n not in read)
        total, recovered = total + len(numbers), recovered + len(numbers) - len(missed)
        print(
            f"real {doc_id} p{number}: {len(numbers) - len(missed)}/{len(numbers)} numbers, "
            f"{len(lines)} lines, missed {missed[:8]}"
        )
    print(
        f"real: {recovered}/{total} numbers of {len(chosen)} pages recovered ({recovered / max(1, total):.3f}); "
        f"OCR {len(chosen) / seconds:.3f} pages/s in one process ({seconds / len(chosen):.1f} s a page)"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="/tmp/ocr-bench", help="working folder (corpus, scans, indexes)")
    p.add_argument("--corpus", help="an existing data.synth corpus instead of a new small one")
    p.add_argument("--companies", type=int, default=2)
    p.add_argument("--pages", type=int, default=6, help="pages per synthetic filing")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("-k", type=int, default=5)
    p.add_argument("--real", type=int, default=6, help="real FinanceBench evidence pages to OCR (0: none)")
    p.add_argument("--real-only", action="store_true", help="only the real pages (no synthetic corpus)")
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.real_only:
        _real_pages(args.real, out)
        return 0
    corpus = _corpus(args)
    scans = _scans(corpus, out)
    rows = [json.loads(x) for x in (corpus / "truth.jsonl").read_text(encoding="utf-8").splitlines() if x]
    rows = [r for r in rows if r.get("strings")]

    parse_rate = _parse_rate(corpus / "pdf")
    text_report, text_seconds = _build(corpus, corpus / "pdf", out / "index-text", args.workers)
    scan_report, scan_seconds = _build(corpus, scans, out / "index-scan", args.workers)
    ocr_pages = sum(r.ocr_pages for r in scan_report.results)
    ocr_seconds = sum(r.ocr_seconds for r in scan_report.results)
    failed = [r.doc_id for r in scan_report.failures]
    print(
        f"corpus {corpus}: {len(text_report.results)} documents, {text_report.pages} pages, {len(rows)} truth rows"
        + (f"; scans failed: {failed}" if failed else "")
    )
    print(
        f"speed: originals built in {text_seconds:.1f} s, scans in {scan_seconds:.1f} s ({args.workers} processes, "
        f"{scan_seconds / text_seconds:.1f}x); OCR {ocr_pages} pages: {ocr_pages / scan_seconds:.3f} pages/s "
        f"for the build, {ocr_pages / ocr_seconds:.3f} pages/s per process ({ocr_seconds / ocr_pages:.1f} s a page); "
        f"parse_pdf of the originals {parse_rate:.1f} pages/s, {parse_rate / (ocr_pages / ocr_seconds):.0f}x OCR's"
    )

    text_store, scan_store = IndexStore.open(out / "index-text"), IndexStore.open(out / "index-scan")
    text_recall, scan_recall = _recall(text_store, rows, args.k), _recall(scan_store, rows, args.k)
    text_checked, scan_checked = _checked(text_store, rows), _checked(scan_store, rows)
    print(f"value recall@{args.k} (originals -> scans), and truth strings the fact check finds on their page")
    verdict = True
    for lang in sorted({r["language"] for r in rows}):
        n = sum(1 for r in rows if r["language"] == lang)
        cells = []
        for how in ("exact", "folded"):
            a, b = text_recall[(lang, how)], scan_recall[(lang, how)]
            cells.append(f"{how} {a:.3f} -> {b:.3f}")
        gap = text_recall[(lang, "folded")] - scan_recall[(lang, "folded")]
        verdict &= gap <= TARGET
        print(
            f"  {lang} ({n} rows): {'; '.join(cells)} (folded gap {gap:+.3f}, target <= {TARGET}); "
            f"checked {text_checked[lang]:.3f} -> {scan_checked[lang]:.3f}"
        )
    print("recall:", "PASS" if verdict else "BELOW TARGET")
    _real_pages(args.real, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
