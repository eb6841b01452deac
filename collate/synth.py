"""`collate synth` / `python -m data.synth --out DIR [--companies N] [--years 2021 2022] [--seed S] [--pages P] [--styles heldout]`."""

from __future__ import annotations

import argparse
import logging
import sys
import time

from collate.errors import Exit
from collate.inputs import parse_cli
from data.synth.corpus import DEFAULT_YEARS, MAX_COMPANIES, generate
from data.synth.style import FAMILIES

MIN_PAGES, MAX_PAGES = 3, 200


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m data.synth",
        description=(
            "Write a synthetic corpus of MuDABench-style filings (US 10-K, A股年报, A股ESG报告, A股利润分配权益类公告, "
            "A股股东大会类公告) with gold questions and per-field truth."
        ),
    )
    p.add_argument(
        "--out",
        required=True,
        help="output folder (created); gets pdf/, dataset.json, catalog.jsonl, truth.jsonl",
    )
    p.add_argument(
        "--companies",
        type=int,
        default=10,
        help=f"number of companies, 2..{MAX_COMPANIES}; ~2/5 US (1 doc/year), the rest A-share (4 docs/year)",
    )
    p.add_argument(
        "--years", type=int, nargs="+", default=DEFAULT_YEARS, help="fiscal years, e.g. 2021 2022 2023"
    )
    p.add_argument("--seed", type=int, default=0, help="same seed, same bytes")
    p.add_argument(
        "--pages",
        type=int,
        default=None,
        help="target pages per document (default: per doctype, 10-44, like real filings)",
    )
    p.add_argument(
        "--styles",
        choices=FAMILIES,
        default="dev",
        help="layout family: dev (default corpus) or heldout (ways of printing record dates, attendance and GRI "
        "adoption the default corpus never uses: recall on layouts retrieval was not tuned on)",
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    return p


def _check(args) -> str | None:
    if not 2 <= args.companies <= MAX_COMPANIES:
        return f"--companies must be between 2 and {MAX_COMPANIES} (got {args.companies})"
    if any(not 2000 <= y <= 2100 for y in args.years):
        return (
            f"--years must be four-digit years between 2000 and 2100 (got {' '.join(map(str, args.years))})"
        )
    if args.pages is not None and not MIN_PAGES <= args.pages <= MAX_PAGES:
        return f"--pages must be between {MIN_PAGES} and {MAX_PAGES} (got {args.pages})"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parse_cli(parser, argv)
    if isinstance(args, int):  # argparse already printed its one-line reason (or --help)
        return args
    problem = _check(args)
    if problem:
        print(f"data.synth: error: {problem}", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    logging.basicConfig(
        level=logging.WARNING if args.quiet else logging.INFO, format="%(message)s", force=True
    )
    start = time.perf_counter()

    def progress(done: int, total: int) -> None:
        if not args.quiet and (done == total or done % 10 == 0):
            print(f"{done}/{total} documents", file=sys.stderr, flush=True)

    try:
        summary = generate(
            args.out,
            companies=args.companies,
            years=args.years,
            seed=args.seed,
            pages=args.pages,
            progress=progress,
            styles=args.styles,
        )
    except OSError as exc:
        print(
            f"data.synth: error: cannot write to {args.out}: {exc.strerror or exc}; choose a writable --out",
            file=sys.stderr,
        )
        return int(Exit.BAD_INPUT)
    if not args.quiet:
        print(
            f"wrote {summary['documents']} documents ({summary['pages']} pages), {summary['questions']} questions, "
            f"{summary['truth_rows']} truth rows ({args.styles} styles) to {args.out} in {time.perf_counter() - start:.1f} s"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
