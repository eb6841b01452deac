"""`collate build` / `python -m retrievers.build`: parse, chunk, embed and index a catalog's PDFs.

    collate build [--catalog CATALOG] --pdf-dir DIR --index DIR [--workers N] [--ray [ADDRESS]]
        [--ocr auto|off]

Pages that are only images (scans) are read by OCR (retrievers.building.ocr_build), ~10 s of CPU a page,
cached in the index; the summary says how many and how long, so a slow build explains itself.

Exit codes (collate.errors.Exit): 0 every document indexed; 1 some failed (named); 2 bad input;
75 another build holds the index; 130 interrupted (what was saved is kept; rerun to finish).
"""

from __future__ import annotations

import errno
import json
import sys
from dataclasses import asdict
from pathlib import Path

from collate import parsers
from collate.errors import Exit
from collate.inputs import parse_cli
from retrievers.building.build import (
    BuildInterrupted,
    BuildOptions,
    BuildReport,
    build_index,
)
from retrievers.building.lock import IndexLocked
from retrievers.building.ocr_build import scanned_fix
from retrievers.building.ocr_build import summary as ocr_summary
from retrievers.catalog import Catalog, CatalogError

_parser = parsers.build  # the flags live in collate/parsers.py, light for --help


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # before the build started (reading the catalog): nothing written
        print("interrupted before the build started: nothing was written", file=sys.stderr)
        return Exit.INTERRUPTED


def _main(argv: list[str] | None) -> int:
    args = parse_cli(_parser(), argv)
    if isinstance(args, int):  # argparse already printed its one-line reason (or --help)
        return args
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
    print(build_summary(report, unsettled, args.index))
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


def build_summary(report: BuildReport, unsettled: int, index: str) -> str:
    """The build's one line. A PDF the draft could not settle was not indexed: it counts as failed
    (a corrupt PDF read "0 failed" beside exit 1 before), with the reason printed by the draft above."""
    failed = report.count("failed") + unsettled
    not_drafted = f" ({unsettled} could not be drafted into the catalog)" if unsettled else ""
    return (
        f"{report.count('built')} built, {report.count('cached')} unchanged, {failed} failed{not_drafted}; "
        f"{report.pages} pages in {report.seconds:.1f} s -> {index}"
    )


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
        original = copies.get(files[doc_id], files[doc_id])
        kept = ids[original]
        if original == files[doc_id]:
            what = f"names the same file as {kept}, {original.name}"
        else:
            copy, of = _names(files[doc_id], original)
            what = f"its file {copy} is a byte-identical copy of {kept}'s {of}"
        print(f"IDENTICAL {doc_id}: {what}: indexed once, as {kept}; pass --keep-duplicates to index both")
    return Catalog([d for d in catalog.documents() if d.id not in dropped])


def _names(copy: Path, original: Path) -> tuple[str, str]:
    """Two files as a line names them: by name, or by path where the names are the same."""
    return (copy.name, original.name) if copy.name != original.name else (str(copy), str(original))


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
