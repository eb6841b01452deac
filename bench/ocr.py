"""OCR (issues 23, 29): what scanned copies lose against their text layer, and the CPU a page costs, per setting.

    python -m bench.ocr [--out /tmp/ocr-bench] [--companies 2] [--pages 6] [--styles heldout] [--real 9]
                        [--variants untouched,shipped,...] [--only-real] [--side-by-side] [-k 5]

In one run, on the same pages for every setting:
  corpus    python -m data.synth --companies C --years 2022 --pages P --styles S (held-out layouts by default: the
            search was not tuned on them), and a "scanned" copy of every filing: each page rendered at 150 dpi in
            grays, wrapped in a PDF with no text layer (data.synth.scanned.image_only_pdf)
  real      statement pages of the real filings (../shared/realdocs/financebench-dev; skipped if absent): for each
            company in questions order, its first evidence page holding 30+ numbers, as a one-page PDF with its
            text layer and as a scan like the synthetic ones. Truth rows are made from the text layer alone
            (a parsed line "label ... 1,234": the label is the query, its first number the value), so nothing
            is chosen by hand
  read      every scanned page read by retrievers.documents.ocr.read_page with each setting (VARIANTS), one
            process, the engine loaded before the clock: CPU seconds a page (process time, so the other jobs
            on the machine do not count; wall time is shown beside it with the load average), and the ratio
            to the untouched engine's CPU in the same run. What was read goes into that setting's index's
            OCR cache (retrievers.building.ocr_cache), so the builds below OCR nothing again
  recall    value recall@k of the shipped search (IndexStore.search, default build) on the text layer and on
            the scans read by each setting: a truth row is a hit when a top-k chunk holds one of its strings
            after folding (spaces, widths, case: factcheck.quotes.fold, how the fact check compares); per
            language for the synthetic filings, and for the real pages. Target: within 0.05 of the text layer
  numbers   on the real pages, the numbers (2+ digits) of the text layer found in what OCR read (spaces aside)
  side      (--side-by-side) the largest scan read as the build reads it (parse_pdf, PageOcr) with the shipped
            setting, one page at a time and two side by side, twice each: wall and CPU seconds a page
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
from dataclasses import dataclass, replace
from pathlib import Path

from data.synth.scanned import image_only_pdf
from factcheck.quotes import fold
from retrievers.building.build import build_index
from retrievers.building.jobs import file_hash
from retrievers.building.ocr_cache import OcrCache
from retrievers.catalog import Catalog
from retrievers.documents import ocr
from retrievers.documents.ocr import UNTOUCHED, OcrSettings
from retrievers.documents.page_text import raw_page_texts
from retrievers.documents.pdf import parse_pdf
from retrievers.indexing.store import IndexStore

ROOT = Path(__file__).resolve().parents[1]
REALDOCS = Path(os.environ.get("COLLATE_REALDOCS", ROOT.parent / "shared" / "realdocs")) / "financebench-dev"
TARGET = 0.05  # the scans' recall may trail the text layer's by at most this
NUMBER = re.compile(r"\d[\d,.]*\d")  # 2+ digits: "7", "1" are found anywhere
MIN_NUMBERS = 30  # a real page with fewer numbers is prose, not a statement
# a parsed line of a statement: a label of words, then its first figure ("Total assets $ 1,234 $ 1,100")
ROW = re.compile(
    r"^(?P<label>[A-Za-z][A-Za-z ,'&()/-]{5,}?)[\s$(]+(?P<value>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|\d{2,})\b"
)

VARIANTS = {
    "untouched": UNTOUCHED,
    "rec1": replace(UNTOUCHED, rec_batch=1),
    "rec1-crop": replace(UNTOUCHED, rec_batch=1, crop=True),
    "rec1-crop-det960": replace(  # shipped until the models were folded
        UNTOUCHED, rec_batch=1, crop=True, det_limit_type="max", det_limit_side_len=960
    ),
    "rec1-crop-det960-fold": replace(
        UNTOUCHED, rec_batch=1, crop=True, det_limit_type="max", det_limit_side_len=960, fold=True
    ),
    "shipped": ocr.SETTINGS,
}


@dataclass
class ScanDoc:
    doc_id: str
    row: dict  # its catalog row
    original: Path  # with its text layer
    scan: Path  # pictures only


def _corpus(args) -> Path:
    out = Path(args.out).resolve() / f"corpus-{args.styles}"  # data.synth runs in the project's root
    if not (out / "truth.jsonl").is_file():
        subprocess.run(
            [sys.executable, "-m", "data.synth", "--out", str(out), "--companies", str(args.companies)]
            + ["--years", "2022", "--pages", str(args.pages), "--styles", args.styles, "-q"],
            cwd=ROOT,
            check=True,
        )
    return out


def _synthetic(corpus: Path, out: Path) -> tuple[list[ScanDoc], list[dict]]:
    docs = []
    for line in (corpus / "catalog.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        original = corpus / "pdf" / f"{row['id']}.pdf"
        scan = out / "scans" / "synthetic" / original.name
        if not scan.is_file():
            image_only_pdf(original, scan)
        docs.append(ScanDoc(row["id"], row, original, scan))
    rows = [json.loads(x) for x in (corpus / "truth.jsonl").read_text(encoding="utf-8").splitlines() if x]
    return docs, [r for r in rows if r.get("strings")]


def _real(count: int, out: Path) -> tuple[list[ScanDoc], list[dict]]:
    """One statement page a company (questions order), with its text layer and scanned, and its truth rows."""
    if count <= 0 or not (REALDOCS / "questions.jsonl").is_file():
        print(f"real: skipped ({REALDOCS} absent)" if count > 0 else "real: none asked")
        return [], []
    import pypdfium2 as pdfium

    catalog = {
        d["id"]: d for d in map(json.loads, (REALDOCS / "catalog.jsonl").read_text().splitlines()) if d
    }
    docs, rows, companies = [], [], set()
    for q in map(json.loads, (REALDOCS / "questions.jsonl").read_text().splitlines()):
        if len(docs) >= count or q["company"] in companies:
            continue
        source = REALDOCS / catalog[q["doc_id"]]["path"]
        texts = raw_page_texts(source)
        page = next(
            (p for p in q["evidence_pages"] if len(NUMBER.findall(texts.get(p, ""))) >= MIN_NUMBERS), None
        )
        if page is None:
            continue
        companies.add(q["company"])
        doc_id = f"{q['doc_id']}-p{page}"
        original = out / "real" / f"{doc_id}.pdf"
        if not original.is_file():
            original.parent.mkdir(parents=True, exist_ok=True)
            whole, one = pdfium.PdfDocument(str(source)), pdfium.PdfDocument.new()
            one.import_pages(whole, [page - 1])
            one.save(str(original))
            one.close(), whole.close()
        scan = out / "scans" / "real" / original.name
        if not scan.is_file():
            image_only_pdf(original, scan)
        meta = catalog[q["doc_id"]]
        row = {"id": doc_id, "symbol": meta["symbol"], "year": meta["year"], "doctype": meta["doctype"]}
        docs.append(ScanDoc(doc_id, {**row, "language": "en"}, original, scan))
        rows += _statement_rows(doc_id, original)
    return docs, rows


def _statement_rows(doc_id: str, pdf: Path) -> list[dict]:
    """Truth rows of a real page from its text layer: each label printed once, with its first figure."""
    found: dict[str, str | None] = {}
    for line in parse_pdf(pdf).pages[0].text.splitlines():
        match = ROW.match(" ".join(line.replace(" | ", " ").split()))
        if match:
            label = " ".join(match["label"].replace("$", " ").split()).strip(" ,(-")
            found[label] = match["value"] if label not in found else None  # printed twice: ambiguous
    return [
        {"doc_id": doc_id, "language": "real", "description": label, "strings": [value], "page": 1}
        for label, value in found.items()
        if value and len(label.split()) >= 2
    ]


def _read_all(docs: list[ScanDoc], settings: OcrSettings, index: Path) -> dict:
    """Every page of every scan read with `settings`, into `index`'s OCR cache: CPU and wall seconds, pages."""
    import pypdfium2 as pdfium

    previous, ocr.SETTINGS = ocr.SETTINGS, settings
    try:
        key = ocr.engine_key()
        ocr.engine(settings)  # loaded before the clock: once per process
    finally:
        ocr.SETTINGS = previous
    cache = OcrCache(index, key)
    cpu = wall = 0.0
    pages, lines = 0, {}
    for doc in docs:
        content = file_hash(doc.scan)
        pdf = pdfium.PdfDocument(str(doc.scan))
        try:
            for i in range(len(pdf)):
                page = pdf[i]
                c0, w0 = time.process_time(), time.perf_counter()
                read = ocr.read_page(page, settings)
                cpu, wall = cpu + time.process_time() - c0, wall + time.perf_counter() - w0
                page.close()
                cache.put(content, i + 1, read)
                lines[(doc.doc_id, i + 1)] = read
                pages += 1
        finally:
            pdf.close()
    return {"key": key, "cpu": cpu, "wall": wall, "pages": pages, "lines": lines}


def _build(
    catalog_rows: list[dict], docs: list[ScanDoc], scans: bool, index: Path, settings: OcrSettings
) -> None:
    pdf_dir = index.parent / f"{index.name}-pdf"
    pdf_dir.mkdir(parents=True, exist_ok=True)
    for doc in docs:
        target = pdf_dir / f"{doc.doc_id}.pdf"
        if not target.exists():
            target.symlink_to(doc.scan if scans else doc.original)
    catalog = index.parent / f"{index.name}-catalog.jsonl"
    catalog.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in catalog_rows), encoding="utf-8"
    )
    shutil.rmtree(
        index / "docs", ignore_errors=True
    )  # documents rebuilt; the OCR cache filled by _read_all stays
    previous, ocr.SETTINGS = ocr.SETTINGS, settings
    try:  # one process, so the engine key (and the OCR cache it names) is this setting's
        report = build_index(Catalog.load(catalog), pdf_dir, index, workers=1, progress=False)
    finally:
        ocr.SETTINGS = previous
    read_now = sum(r.ocr_pages - r.ocr_cached for r in report.results if r.status == "built")
    failed = [r.doc_id for r in report.failures]
    if read_now or failed:
        print(f"  note: {index.name}: {read_now} page(s) OCR'd by the build itself; failed: {failed}")


def _recall(index: Path, rows: list[dict], k: int) -> dict[str, float]:
    store = IndexStore.open(index)
    hits = defaultdict(list)
    for row in rows:
        texts = [fold(p.text) for p in store.search(row["doc_id"], row["description"], k=k)]
        hits[row["language"]].append(any(fold(s) in t for t in texts for s in row["strings"]))
    return {lang: sum(v) / len(v) for lang, v in hits.items()}


def _numbers(real: list[ScanDoc], lines: dict) -> tuple[int, int, list[str]]:
    total = recovered = 0
    missed_all = []
    for doc in real:
        numbers = set(NUMBER.findall(raw_page_texts(doc.original)[1]))
        read = "".join(x.text for x in lines[(doc.doc_id, 1)]).replace(" ", "")
        missed = sorted(n for n in numbers if n not in read)
        total, recovered = total + len(numbers), recovered + len(numbers) - len(missed)
        missed_all += [f"{doc.doc_id}:{n}" for n in missed[:3]]
    return recovered, total, missed_all


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="/tmp/ocr-bench", help="working folder (corpus, scans, indexes)")
    p.add_argument("--companies", type=int, default=2)
    p.add_argument("--pages", type=int, default=6, help="pages per synthetic filing")
    p.add_argument("--styles", default="heldout", choices=("dev", "heldout"), help="the synthetic layouts")
    p.add_argument("--real", type=int, default=9, help="real statement pages, one a company (0: none)")
    p.add_argument("--only-real", action="store_true", help="no synthetic filings")
    p.add_argument(
        "--variants", default="untouched,shipped", help=f"settings to compare: {', '.join(VARIANTS)}"
    )
    p.add_argument("-k", type=int, default=5)
    p.add_argument(
        "--side-by-side", action="store_true", help="also time one document read 1 and 2 pages at once"
    )
    args = p.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = [v for v in args.variants.split(",") if v]
    unknown = [v for v in names if v not in VARIANTS]
    if unknown:
        p.error(f"unknown variant(s) {unknown}: use {', '.join(VARIANTS)}")

    synth_docs, synth_rows = ([], []) if args.only_real else _synthetic(_corpus(args), out)
    real_docs, real_rows = _real(args.real, out)
    docs, rows = synth_docs + real_docs, synth_rows + real_rows
    catalog_rows = [{k: v for k, v in d.row.items() if k != "pages"} for d in docs]
    load = os.getloadavg()
    print(
        f"{len(synth_docs)} synthetic filings ({args.styles} layouts), {len(real_docs)} real statement pages; "
        f"{len(rows)} truth rows; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} at the start"
    )
    _build(catalog_rows, docs, False, out / "index-text", UNTOUCHED)
    text_recall = _recall(out / "index-text", rows, args.k)
    print(
        f"text layer: value recall@{args.k} "
        + ", ".join(f"{g} {v:.3f}" for g, v in sorted(text_recall.items()))
    )

    base_cpu = None
    verdict = True
    for name in names:
        settings = VARIANTS[name]
        index = out / f"index-{name}"
        shutil.rmtree(index, ignore_errors=True)
        read = _read_all(docs, settings, index)
        _build(catalog_rows, docs, True, index, settings)
        recall = _recall(index, rows, args.k)
        per_page = read["cpu"] / max(1, read["pages"])
        base_cpu = base_cpu or per_page
        cells = []
        for group, value in sorted(recall.items()):
            gap = text_recall[group] - value
            verdict &= gap <= TARGET or name == "untouched"
            cells.append(f"{group} {value:.3f} (gap {gap:+.3f})")
        recovered, total, missed = _numbers(real_docs, read["lines"]) if real_docs else (0, 0, [])
        print(
            f"{name} [{settings.key()}]: {per_page:.2f} s CPU a page ({per_page / base_cpu:.2f}x the first), "
            f"wall {read['wall'] / max(1, read['pages']):.1f} s, {read['pages']} pages, load {os.getloadavg()[0]:.1f}; "
            f"recall@{args.k} "
            + "; ".join(cells)
            + (
                f"; real numbers {recovered}/{total} ({recovered / max(1, total):.3f}), missed e.g. {missed[:6]}"
                if total
                else ""
            )
        )
    print("recall: ", "PASS" if verdict else "BELOW TARGET", f"(every setting but untouched within {TARGET})")
    if args.side_by_side and docs:
        _side_by_side(max(docs, key=lambda d: d.scan.stat().st_size), out)
    return 0


def _side_by_side(doc: ScanDoc, out: Path) -> None:
    """One document read as the build reads it (parse_pdf with PageOcr), one page at a time and two side by side."""
    from retrievers.building.ocr_cache import PageOcr

    ocr.engine()  # the caller's engine loaded before the clock; each reading thread loads its own once
    for at_once in (1, 2, 1, 2):  # twice each, alternating: the machine's load moves
        cache = out / "side-by-side" / f"{at_once}-{time.perf_counter_ns()}"
        reader = PageOcr(OcrCache(cache, "bench"), "doc", at_once=at_once)
        c0, w0 = time.process_time(), time.perf_counter()
        pages = len(parse_pdf(doc.scan, ocr=reader).ocr_pages)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        print(
            f"one document ({doc.doc_id}, {pages} pages), {at_once} page(s) at once: {wall / pages:.1f} s a page "
            f"wall, {cpu / pages:.1f} s CPU a page, load {os.getloadavg()[0]:.1f}"
        )
        shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
