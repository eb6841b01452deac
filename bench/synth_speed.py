"""How fast the synthetic corpus generates here: `python -m bench.synth_speed [--companies N] [--years ...]`.

Prints documents, pages, seconds and documents per second for one corpus in a temporary folder.
The issue's bar: a 50-document corpus in under a minute on this 2-core machine.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from data.synth import generate  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--companies", type=int, default=10)
    p.add_argument("--years", type=int, nargs="+", default=[2021, 2022, 2023])
    p.add_argument("--pages", type=int, default=None)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        summary = generate(tmp, companies=args.companies, years=args.years, pages=args.pages)
        seconds = time.perf_counter() - start
        size = sum(f.stat().st_size for f in Path(tmp).rglob("*.pdf"))
    print(
        f"documents={summary['documents']} pages={summary['pages']} questions={summary['questions']} "
        f"seconds={seconds:.1f} docs_per_s={summary['documents'] / seconds:.1f} "
        f"pages_per_s={summary['pages'] / seconds:.0f} pdf_mb={size / 1e6:.1f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
