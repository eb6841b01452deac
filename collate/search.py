"""Search one document's index from the command line.

    collate search --index DIR --doc DOC_ID --query TEXT [-k 5] --json
    collate search --index DIR --queries FILE.jsonl [-k 5] --json

`--json` prints a JSON list (best first) of {doc_id, page, page_end, text, score}; with `--queries`
(lines {"doc_id", "query"}) one such list per line, in input order. A query on a document that has
no index prints an empty list for it and a line on stderr saying why; the exit code stays 0.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from collate import parsers
from collate.errors import Exit
from collate.inputs import parse_cli
from retrievers.indexing.document_index import IndexVersionError
from retrievers.indexing.store import DocumentNotIndexed, IndexStore
from retrievers.textfile import read_text

_parser = parsers.search  # the flags live in collate/parsers.py, light for --help


def _read_queries(path: str) -> list[tuple[str, str]]:
    out = []
    for n, line in enumerate(read_text(Path(path)).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path} line {n} is not JSON ({exc}): one object per line") from None
        if not isinstance(row, dict) or not row.get("doc_id") or not str(row.get("query") or "").strip():
            raise ValueError(
                f'{path} line {n}: each line needs {{"doc_id": ..., "query": ...}} with a non-empty query'
            )
        out.append((str(row["doc_id"]), str(row["query"])))
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_cli(_parser(), argv)
    if isinstance(args, int):  # argparse already printed its one-line reason (or --help)
        return args
    for flag, value, what in (
        ("--query", args.query, "the text to search for"),
        ("--doc", args.doc, "a document id"),
    ):
        if value is not None and not value.strip():
            print(f"error: {flag} is empty: give {what}", file=sys.stderr)
            return int(Exit.BAD_INPUT)
    if bool(args.queries) == bool(args.doc or args.query):
        print("error: give either --doc and --query, or --queries FILE.jsonl", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    if not args.queries and not (args.doc and args.query):
        print("error: --doc and --query go together", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    if args.k < 1:
        print("error: -k must be at least 1", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    try:
        queries = _read_queries(args.queries) if args.queries else [(args.doc, args.query)]
    except (OSError, ValueError) as exc:
        print(f"error: cannot read --queries: {exc}", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    try:
        store = IndexStore.open(args.index)
    except (FileNotFoundError, ValueError, IndexVersionError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    if args.doc and args.doc not in store.catalog:
        print(f"error: document {args.doc!r} is not in the index's catalog: check the id", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    for doc_id, query in queries:
        try:
            passages = store.search(doc_id, query, k=args.k, mode=args.mode)
        except (DocumentNotIndexed, KeyError, IndexVersionError, ValueError) as exc:
            # args[0] is the message itself; str() of a KeyError is its repr, in quotes
            print(f"warning: {exc.args[0] if exc.args else exc}", file=sys.stderr)
            passages = []
        if args.json:
            print(json.dumps([p.model_dump() for p in passages], ensure_ascii=False))
        else:
            print(f"# {doc_id}: {query}")
            for p in passages:
                pages = f"p.{p.page}" + (f"-{p.page_end}" if p.page_end and p.page_end != p.page else "")
                print(f"[{p.score:.4f}] {pages}: {' '.join(p.text.split())[:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
