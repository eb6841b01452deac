"""`collate dataset`: start a dataset of your own questions over your own collection, and check one.

    collate dataset new --catalog catalog.jsonl --out my.json "QUESTION" ... [--questions FILE.txt]
                        [--years 2022,2023] [--doctypes 10k] [--symbols AMD,PEP] [--force]
    collate dataset check my.json [--index I]

`new` writes one MuDABench-format item per question (the format `collate run`, `score` and `compile`
read; docs/interfaces.md): the question, an id, every catalog document in scope as its `metadata`
(id, symbol, year, doctype: what the program may know before reading), and an empty `final_answer`,
the place for the gold answer you write. A document's gold values are optional: `"value_<field>": V`
beside its id (with `"schema": {"value_<field>": "what it is"}`) adds process accuracy and lets
`collate compile --stage extractor` tune against them.

`check` loads the dataset as the other commands do and says what is missing: questions without a gold
answer, documents not in the index (with --index), duplicate ids. Exit codes: 0 ready; 1 something
missing (each named); 2 the file or the flags cannot be used.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from collate import parsers
from collate.errors import Exit
from collate.inputs import parse_cli
from signatures.errors import BadInput, CollateError

build_parser = parsers.dataset  # the flags live in collate/parsers.py, light for --help


def main(argv: list[str] | None = None) -> int:
    args = parse_cli(build_parser(), argv)
    if isinstance(args, int):  # argparse already printed its one-line reason (or --help)
        return args
    try:
        return new(args) if args.action == "new" else check(args)
    except (CollateError, ValueError) as exc:  # DatasetError and CatalogError are ValueErrors naming the fix
        print(f"error: {exc}", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    except OSError as exc:  # the file the user gave, by the name they gave it
        print(f"error: cannot read {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return int(Exit.BAD_INPUT)


def question_id(question: str) -> str:
    """Stable across reruns of `new` (same question, same id): a run's answers stay matched to it."""
    return "q-" + hashlib.sha1(" ".join(question.split()).encode()).hexdigest()[:10]


def new(args) -> int:
    from retrievers.catalog import Catalog

    if not args.catalog:
        raise BadInput(
            "collate dataset new needs --catalog: the catalog.jsonl of your collection (collate catalog)"
        )
    if not args.out:
        raise BadInput("collate dataset new needs --out: where to write the dataset (.json)")
    out = Path(args.out)
    if out.suffix.lower() != ".json":
        raise BadInput(f"--out {out}: a dataset is one JSON file; give a path ending in .json")
    if out.exists() and not args.force:
        raise BadInput(
            f"--out {out} exists: pass --force to overwrite it (your gold answers in it would be lost)"
        )
    questions = [q.strip() for q in args.items if q.strip()]
    if args.questions:
        questions += [
            q.strip() for q in Path(args.questions).read_text(encoding="utf-8").splitlines() if q.strip()
        ]
    if not questions:
        raise BadInput('give the questions: collate dataset new --catalog C --out my.json "QUESTION" ...')
    for q in questions:  # `--years 2022 2023`, the old spelling, leaves 2023 as a question
        if not any(ch.isalpha() for ch in q):
            raise BadInput(
                f"{q!r} is not a question: give several years, doctypes or symbols as one comma list "
                "(--years 2022,2023)"
            )
    docs = [
        d
        for d in Catalog.load(args.catalog).documents()
        if (not args.years or d.year in args.years)
        and (not args.doctypes or d.doctype in args.doctypes)
        and (not args.symbols or d.symbol in args.symbols)
    ]
    if not docs:
        raise BadInput(f"no document of {args.catalog} matches --years/--doctypes/--symbols: widen them")
    rows = [{"id": d.id, "symbol": d.symbol, "year": d.year, "doctype": d.doctype} for d in docs]
    items = [
        {
            "question_id": question_id(q),
            "question": q,
            "metadata": rows,
            "final_answer": "",
            "source_answer": [],
        }
        for q in dict.fromkeys(questions)
    ]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(items, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{len(items)} question(s) over {len(rows)} document(s) -> {out}")
    print(f'next: write each gold answer in its "final_answer", then: collate dataset check {out}')
    return 0


def check(args) -> int:
    from evaluate.dataset import load_dataset

    if len(args.items) != 1:
        raise BadInput("collate dataset check takes one dataset file: collate dataset check my.json")
    path = args.items[0]
    items = load_dataset(path)
    problems = [
        f"no gold answer: {i.question_id} ({i.question[:60]}): write it in its final_answer"
        for i in items
        if not i.final_answer.strip()
    ]
    problems += [f"skipped: {qid}: {why}" for qid, why in items.skipped.items()]
    problems += [
        f"no documents: {i.question_id}: list the documents it reads in its metadata"
        for i in items
        if not i.doc_ids
    ]
    if args.index:
        from retrievers.catalog import Catalog

        indexed = {d.id for d in Catalog.open(args.index).documents()}
        absent = sorted({d for i in items for d in i.doc_ids} - indexed)
        if absent:
            problems.append(
                f"{len(absent)} document(s) not in the index {args.index} (first: {', '.join(absent[:5])}): "
                f"build them with collate build --index {args.index}"
            )
    for line in problems:
        print(line)
    gold = sum(1 for i in items if i.final_answer.strip())
    print(
        f"{path}: {len(items)} question(s), {gold} with a gold answer; "
        + ("ready" if not problems else f"{len(problems)} thing(s) to fix (above)")
    )
    return int(Exit.FAILED) if problems else 0
