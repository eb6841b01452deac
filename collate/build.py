"""`collate build` / `python -m retrievers.build`: parse, chunk, embed and index a catalog's PDFs.

    python -m retrievers.build [--catalog CATALOG] --pdf-dir DIR --index DIR [--workers N] [--ray [ADDRESS]]
        [--ocr auto|off]

Pages that are only images (scans) are read by OCR (retrievers.building.ocr_build), ~10 s of CPU a page,
cached in the index; the summary says how many and how long, so a slow build explains itself.

Exit codes (collate.errors.Exit): 0 every document indexed; 1 some failed (named); 2 bad input;
75 another build holds the index; 130 interrupted (what was saved is kept; rerun to finish).
"""

from __future__ import annotations

import argparse
import errno
import json
import logging
import os
import sys
from dataclasses import asdict
from pathlib import Path

from collate.errors import Exit
from retrievers.building.build import (
    DENSE_POLICIES,
    BuildInterrupted,
    BuildOptions,
    BuildReport,
    build_index,
)
from retrievers.building.lock import IndexLocked
from retrievers.building.ocr_build import OCR_MODES, scanned_fix
from retrievers.building.ocr_build import summary as ocr_summary
from retrievers.catalog import Catalog, CatalogError
from retrievers.embedding.dense_text import DENSE_CHUNKS
from retrievers.embedding.embedders import HASHING, MINILM
from retrievers.indexing.lexical import JIEBA, NGRAM


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m retrievers.build", description=__doc__.splitlines()[0])
    p.add_argument(
        "--catalog",
        help="dataset.json (MuDABench), catalog .csv or .jsonl; without it a catalog is drafted from the PDFs "
        "into the index folder (retrievers.catalog_draft.for_build)",
    )
    p.add_argument("--pdf-dir", required=True, help="folder holding <id>.pdf files")
    p.add_argument("--index", required=True, help="index folder to create or update")
    p.add_argument(
        "--workers", type=int, default=os.cpu_count(), help="parallel processes (default: core count)"
    )
    p.add_argument("--embedder", default=MINILM, choices=[MINILM, HASHING], help=argparse.SUPPRESS)
    p.add_argument(
        "--dense",
        default="auto",
        choices=DENSE_POLICIES,
        help="which documents get MiniLM embeddings besides BM25 (auto: English ones)",
    )
    p.add_argument(
        "--dense-chunks",
        default="figures",
        choices=DENSE_CHUNKS,
        help="which chunks of those documents MiniLM reads (figures: the ones stating amounts, about a third "
        "of a 10-K's, for ~3x less embedding; all: every chunk, for questions about prose)",
    )
    p.add_argument(
        "--ocr",
        default="auto",
        choices=OCR_MODES,
        help="pages that are only images (scans): auto reads them by OCR when rapidocr-onnxruntime is "
        "installed (~10 s a page, cached in the index); off leaves them unread",
    )
    p.add_argument("--tokenizer", default=NGRAM, choices=[NGRAM, JIEBA], help="Chinese tokenization for BM25")
    p.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="index on a Ray cluster (HOST:PORT, or auto for this machine's; default $COLLATE_RAY_ADDRESS or "
        "auto); the index and PDFs must be on storage every node can reach",
    )
    p.add_argument(
        "--keep-duplicates",
        action="store_true",
        help="index each of two byte-identical PDFs (default: the first catalog row only, the other named)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the per-document results as JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # before the build started (reading the catalog): nothing written
        print("interrupted before the build started: nothing was written", file=sys.stderr)
        return Exit.INTERRUPTED


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args.workers is not None and args.workers < 1:
        print("error: --workers must be at least 1", file=sys.stderr)
        return Exit.BAD_INPUT
    if not Path(args.pdf_dir).is_dir():
        print(
            f"error: --pdf-dir {args.pdf_dir} is not a folder: give the folder holding <id>.pdf",
            file=sys.stderr,
        )
        return Exit.BAD_INPUT
    unsettled = 0
    if (
        args.catalog is None
    ):  # draft one from the PDFs (retrievers.catalog_draft.for_build says how and where)
        from retrievers.catalog_draft.for_build import DraftProblem, build_note, draft_for_build

        try:
            drafted, rows = draft_for_build(args.pdf_dir, args.index, args.keep_duplicates)
        except (DraftProblem, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return Exit.BAD_INPUT
        print(build_note(args.pdf_dir, drafted, rows))
        args.catalog = str(drafted)
        unsettled = sum(1 for r in rows if not r.settled and r.duplicate_of is None)
    try:
        catalog = Catalog.load(args.catalog)
    except CatalogError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return Exit.BAD_INPUT
    if not args.keep_duplicates:
        catalog = _indexed_once(catalog, Path(args.pdf_dir), Path(args.catalog).resolve().parent)
    from retrievers.building.ray import RayBuildError, require_ray, resolve_address

    ray_address = resolve_address(args.ray)
    try:
        if ray_address is not None:
            require_ray()  # before anything is written
        options = BuildOptions(
            workers=args.workers,
            embedder=args.embedder,
            tokenizer=args.tokenizer,
            dense=args.dense,
            dense_chunks=args.dense_chunks,
            ray_address=ray_address,
            ocr=args.ocr,
        )
        report = build_index(
            catalog,
            args.pdf_dir,
            args.index,
            options,
            catalog_dir=Path(args.catalog).resolve().parent,
            progress=not args.no_progress,
        )
    except RayBuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return Exit.BAD_INPUT
    except IndexLocked as exc:
        print(f"error: {exc}", file=sys.stderr)
        return Exit.LOCKED
    except OSError as exc:  # the index folder itself (each document's own errors are in its result)
        if exc.errno == errno.ENOSPC:  # each document's index is swapped in whole, the catalog saved aside
            print(
                f"error: no space left on the disk of {args.index} (writing {exc.filename or args.index}): "
                "free space and rerun (nothing indexed was lost)",
                file=sys.stderr,
            )
            return Exit.BAD_INPUT
        print(
            f"error: cannot write the index {args.index} ({exc.strerror or exc}: {exc.filename or args.index}): "
            "give a folder you can write to, on a disk with free space",
            file=sys.stderr,
        )
        return Exit.BAD_INPUT
    except BuildInterrupted as exc:
        print(str(exc), file=sys.stderr)
        return Exit.INTERRUPTED
    if args.json:
        print(json.dumps([asdict(r) for r in report.results], ensure_ascii=False, indent=1))
    print(
        f"{report.count('built')} built, {report.count('cached')} unchanged, {report.count('failed')} failed; "
        f"{report.pages} pages in {report.seconds:.1f} s -> {args.index}"
    )
    if ocr_line := ocr_summary(report.results):
        print(ocr_line)
    for r in report.failures:
        kept = " (its previous index is kept and still searched)" if r.kept_previous else ""
        print(f"FAILED {r.doc_id}: {r.kind}: {r.message}. Fix: {r.fix}{kept}")
    for r in report.results:
        if r.status != "failed" and r.scanned_pages:
            numbers = (
                f" (page {', '.join(map(str, r.scanned_page_numbers[:10]))}"
                + (", ...)" if len(r.scanned_page_numbers) > 10 else ")")
                if r.scanned_page_numbers
                else ""
            )
            print(
                f"NOTE {r.doc_id}: {r.scanned_pages} of {r.pages} pages have no text layer{numbers} and cannot "
                f"be searched. Fix: {scanned_fix(r.ocr_engine)}"
            )
    return max(_exit_code(report, args.pdf_dir), Exit.FAILED if unsettled else 0)  # unsettled: not indexed


def _indexed_once(catalog: Catalog, pdf_dir: Path, catalog_dir: Path) -> Catalog:
    """The catalog without rows whose PDF is byte-identical to an earlier row's, each named: the same
    filing indexed twice answers twice ("GLEN, GLEN", issue 33 item 5)."""
    from retrievers.building.build import resolve_pdf
    from retrievers.catalog_draft.duplicates import identical_files

    files = {d.id: resolve_pdf(d, pdf_dir, catalog_dir) for d in catalog.documents()}
    copies = identical_files(list(dict.fromkeys(files.values())))  # a path two rows name: once
    if not copies:
        return catalog
    ids = {path: doc_id for doc_id, path in reversed(files.items())}  # a path's first row
    dropped = {doc_id for doc_id, path in files.items() if path in copies or ids[path] != doc_id}
    for doc_id in sorted(dropped):
        kept = ids.get(copies.get(files[doc_id], files[doc_id]))
        print(
            f"IDENTICAL {doc_id}: its PDF {files[doc_id].name} is byte-identical to {kept}'s: indexed once, as "
            f"{kept} (pass --keep-duplicates to index both)"
        )
    return Catalog([d for d in catalog.documents() if d.id not in dropped])


def _exit_code(report: BuildReport, pdf_dir: str) -> int:
    """0 only when every document is indexed; else 1, with the failed ids on stderr for a script's log."""
    failed = report.failures
    if not failed:
        return 0
    ids = ", ".join(r.doc_id for r in failed[:20]) + (
        f", ... ({len(failed)} in all)" if len(failed) > 20 else ""
    )
    print(f"error: {len(failed)} of {len(report.results)} documents failed: {ids}", file=sys.stderr)
    if len(failed) == len(report.results) and all(r.kind == "missing" for r in failed):
        print(
            f"error: none of the files was found: is --pdf-dir {pdf_dir} the folder holding them? "
            "(nothing already indexed was removed)",
            file=sys.stderr,
        )
    return Exit.FAILED


if __name__ == "__main__":
    sys.exit(main())
