"""Draft a catalog from a folder of PDFs: id, symbol, year, doctype, language, company, by rules.

    collate catalog --pdf-dir DIR --out catalog.jsonl [--force] [--no-lm] [--keep-duplicates] [--lm MODEL ...]

Each file's first pages are read by rules (retrievers.catalog_draft.draft): the SEC cover (form, "for the
fiscal year ended", registrant, trading symbol), an earnings release (exchange tag, period), an
A-share title (证券代码, 证券简称, 年度报告 / 半年度报告 / ESG / 社会责任报告 / 公告 and the year).
When an LM is configured (COLLATE_LM or --lm) it is asked only about the files the rules could not
settle, and its answers are kept only where the text bears them out (programs.catalog_lm).
The catalog loads with `collate build --catalog`; files still unsettled are listed in
<out>.unsettled.txt with what is missing and the row to complete. A file byte-identical to another
(the same filing under two names) is kept once, named there with the file kept (--keep-duplicates
keeps both). Exit codes: 0 every file settled or kept once; 1 some unsettled (listed); 2 bad input
(no folder, no PDFs, --out exists without --force, --out not writable).
"""

from __future__ import annotations

import sys
from pathlib import Path

from collate import parsers
from collate.errors import Exit
from collate.inputs import lm_overrides, parse_cli
from collate.outputs import writable_file
from retrievers.catalog import Catalog, CatalogError
from retrievers.catalog_draft.draft import (
    DraftWriteError,
    draft_catalog,
    pdf_files,
    summary,
    unsettled_path,
    why_unsettled,
    write_draft,
)
from signatures.errors import BadInput

EXIT_UNSETTLED, EXIT_BAD_INPUT = int(Exit.FAILED), int(Exit.BAD_INPUT)


_parser = parsers.catalog  # the flags live in collate/parsers.py, light for --help


def main(argv: list[str] | None = None) -> int:
    args = parse_cli(_parser(), argv)
    if isinstance(args, int):
        return args
    pdf_dir, out = Path(args.pdf_dir), Path(args.out)
    problem = _input_problem(pdf_dir, out, args.force)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return EXIT_BAD_INPUT
    rows = draft_catalog(pdf_dir, keep_duplicates=args.keep_duplicates)
    if not args.no_lm and any(r.missing() and not r.problem and r.duplicate_of is None for r in rows):
        try:
            _ask_lm(rows, args)
        except ValueError as exc:  # a COLLATE_* setting out of range: its message names the fix
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    try:
        listing = write_draft(rows, out)
    except DraftWriteError as exc:  # the disk filled or changed while the PDFs were read
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if any(r.settled for r in rows):
        try:
            Catalog.load(out)  # what collate build will do with it
        except CatalogError as exc:
            print(f"error: the drafted catalog does not load ({exc}); please report this", file=sys.stderr)
            return EXIT_BAD_INPUT
    print(f"{summary(rows)} -> {out}")
    unsettled = [r for r in rows if not r.settled and r.duplicate_of is None]
    for r in rows:
        if r.duplicate_of is not None:
            print(f"IDENTICAL {r.file.name}: {why_unsettled(r)}")
    for r in unsettled:
        print(f"UNSETTLED {r.file.name}: {why_unsettled(r)}")
    if unsettled:
        print(f"the rows to complete are in {listing}: fill in the ? fields and add them to {out.name}")
    return EXIT_UNSETTLED if unsettled else 0


def _input_problem(pdf_dir: Path, out: Path, force: bool) -> str | None:
    if not pdf_dir.is_dir():
        return f"--pdf-dir {pdf_dir} is not a folder: give the folder holding the PDFs"
    if not pdf_files(pdf_dir):
        return f"no .pdf files in {pdf_dir}: give the folder holding the PDFs"
    if out.suffix.lower() != ".jsonl":
        return f"--out {out} must end in .jsonl (one row per line, the format collate build reads)"
    if out.exists() and not force and not out.is_dir():
        return f"{out} exists: pass --force to overwrite it (and {unsettled_path(out).name}), or choose another --out"
    try:  # checked before the PDFs are read, by making a file where the catalog will go
        writable_file(out, "--out")
        if unsettled_path(out).is_dir():
            return f"--out {out}: {unsettled_path(out)} is a folder: move it, or choose another --out"
    except BadInput as exc:
        return str(exc)
    return None


def _ask_lm(rows, args) -> None:
    from programs.lm.settings import Settings, configure

    settings = Settings.from_env(lm_overrides(args), require_lm=False)
    unsettled = sum(1 for r in rows if r.missing() and not r.problem and r.duplicate_of is None)
    if not settings.lm:
        print(
            f"{unsettled} file(s) the rules could not settle: set COLLATE_LM (or --lm) to let an LM "
            "read them, or complete their rows by hand",
            file=sys.stderr,
        )
        return
    from programs.catalog_lm import fill_unsettled

    configure(settings)
    settled = fill_unsettled(rows)
    print(f"the LM settled {settled} of {unsettled} file(s) the rules could not", file=sys.stderr)
