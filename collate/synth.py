"""`collate synth` / `python -m data.synth --out DIR [--companies N] [--years 2021 2022] [--seed S] [--pages P] [--styles heldout]`."""

from __future__ import annotations

import logging
import sys
import time

from collate import parsers
from collate.errors import Exit
from collate.inputs import parse_cli

MIN_PAGES, MAX_PAGES = 3, 200
MAX_COMPANIES = parsers.SYNTH_MAX_COMPANIES
# The flags live in collate/parsers.py: data.synth loads reportlab (0.7 s), and `collate synth --help`
# answered in 1.8 s with it (bench/help_speed.py); the corpus generator is imported when it runs.
_parser = parsers.synth


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

    from data.synth.corpus import generate

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
