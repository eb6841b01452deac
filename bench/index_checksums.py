"""What verifying index checksums adds to a rebuild's cache check (issue 22 item 13).

    python -m bench.index_checksums --index DIR [--docs ../shared/realdocs/financebench-dev] [--repeat 5]

The index is one built from --docs (python -m retrievers.build --catalog DOCS/catalog.jsonl --pdf-dir DOCS
--index DIR); it is only read. In one run, with the files in the page cache (a warm-up pass first):
  baseline  the cache check as before: a sha256 of every document's PDF        seconds
  verify    a sha256 of every file of every document's index folder            seconds, ratio to baseline
Best of --repeat passes each.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from retrievers.indexing.checksums import file_checksums, sha256_of
from retrievers.indexing.store import doc_folder

ROOT = Path(__file__).resolve().parents[1]


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    default_docs = (
        Path(os.environ.get("COLLATE_REALDOCS", ROOT.parent / "shared" / "realdocs")) / "financebench-dev"
    )
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--index", required=True, type=Path)
    p.add_argument("--docs", type=Path, default=default_docs)
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    rows = [
        json.loads(x) for x in (args.docs / "catalog.jsonl").read_text(encoding="utf-8").splitlines() if x
    ]
    pdfs = [args.docs / row["path"] for row in rows]
    folders = [doc_folder(args.index, row["id"]) for row in rows]
    missing = [f for f in folders if not (f / "meta.json").is_file()]
    if missing:
        print(
            f"error: {len(missing)} documents are not in {args.index}: build it from {args.docs}",
            file=sys.stderr,
        )
        return 2

    def baseline():
        for pdf in pdfs:
            sha256_of(pdf)

    def verify():
        for folder in folders:
            file_checksums(folder)

    baseline(), verify()  # warm-up: both read from the page cache, as a rebuild right after a build does
    base, checked = _best(baseline, args.repeat), _best(verify, args.repeat)
    pdf_mb = sum(p.stat().st_size for p in pdfs) / 1e6
    index_mb = sum(p.stat().st_size for f in folders for p in f.rglob("*") if p.is_file()) / 1e6
    print(f"{len(rows)} documents: {pdf_mb:.1f} MB of PDFs, {index_mb:.1f} MB of index files")
    print(f"baseline  sha256 of the PDFs (the cache check before)   {base:.3f} s")
    print(
        f"verify    sha256 of the index files (added)             {checked:.3f} s  ({checked / base:.2f}x baseline)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
