"""Ask one question over an indexed collection.

    python -m programs.ask --index DIR [--dataset DS.json --question-id QID] [--program compiled.json]
                           [--run-dir DIR] [--json] [--lm MODEL --api-base URL ...] "QUESTION"

Without --dataset the scope is the whole indexed collection; with it, that item's documents (only
their id/symbol/year/doctype are read: gold fields never reach the program). --json prints
{answer, records, code, result, citations, missing, usage}.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

import dspy

from programs.cli_inputs import BadInput, add_lm_arguments, lm_overrides, open_store
from programs.settings import NoLMConfigured, Settings, configure

logger = logging.getLogger(__name__)
VISIBLE_METADATA = ("id", "symbol", "year", "doctype")


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m programs.ask", description=__doc__.split("\n")[1])
    p.add_argument("question", nargs="?", help="the question (default with --dataset: the item's question)")
    p.add_argument("--index", required=True, help="index folder built by python -m retrievers.build")
    p.add_argument("--dataset", help="MuDABench-format dataset.json: scope = the item's documents")
    p.add_argument("--question-id", help="question_id of the dataset item (needs --dataset)")
    p.add_argument("--program", help="compiled.json saved by an optimizer (program.save)")
    p.add_argument("--run-dir", help="write the stage trace and run_log.json here")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the answer text")
    p.add_argument("--baseline", choices=["flat", "flat-meta"], help="run the flat-RAG baseline instead")
    add_lm_arguments(p)
    for stage in ("planner", "extractor", "normalizer", "coder", "answer"):
        p.add_argument(f"--lm-{stage}", help=f"model for the {stage} stage (COLLATE_LM_{stage.upper()})")
    p.add_argument("--concurrency", type=int, help=f"documents extracted at once (COLLATE_CONCURRENCY, default {Settings.concurrency})")
    p.add_argument("--k", type=int, help=f"passages per field per document (COLLATE_K, default {Settings.k})")
    p.add_argument("--fact-store", help="SQLite fact store (COLLATE_FACT_STORE; default <index>/facts.sqlite)")
    p.add_argument("--no-progress", action="store_true", help="hide the documents done / total display")
    p.add_argument("-v", "--verbose", action="store_true")
    return p.parse_args(argv)


def dataset_scope(path: str, question_id: str | None) -> tuple[str, list[str]]:
    """(question, document ids) of one dataset item, reading nothing but the visible metadata."""
    if not question_id:
        raise BadInput("--dataset needs --question-id QID (the item to answer)")
    try:
        items = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise BadInput(f"cannot read dataset {path}: {e}; pass a MuDABench-format JSON list") from None
    for item in items if isinstance(items, list) else []:
        if isinstance(item, dict) and item.get("question_id") == question_id:
            visible = [{k: row.get(k) for k in VISIBLE_METADATA} for row in item.get("metadata") or []]
            return str(item.get("question") or ""), [str(row["id"]) for row in visible if row.get("id")]
    raise BadInput(f"question_id {question_id!r} is not in {path}; list ids with: jq '.[].question_id' {path}")


class Progress:
    """tqdm of documents done / total on stderr, created when the total is known."""

    def __init__(self, enabled: bool):
        self.enabled, self.bar = enabled, None

    def __call__(self, done: int, total: int, outcome) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="documents", unit="doc", file=sys.stderr)
        self.bar.update(1)
        if outcome.failure:
            self.bar.set_postfix_str(f"failed: {outcome.doc_id}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def build(args, settings: Settings, store):
    if args.baseline:
        from programs.flat_rag import build_flat_rag

        return build_flat_rag(settings, store, with_metadata=args.baseline == "flat-meta")
    from programs.analyst import build_program

    program = build_program(settings, store)
    if args.program:
        if not Path(args.program).is_file():
            raise BadInput(f"no compiled program at {args.program}; save one with program.save(path)")
        program.load(args.program)
    return program


def output(pred, usage: dict) -> dict:
    from programs.run_folder import to_jsonable

    return to_jsonable({"answer": pred.answer, "records": pred.records, "code": pred.code, "result": pred.result,
                        "citations": pred.citations, "missing": pred.missing, "usage": usage})  # fmt: skip


def main(argv=None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")  # fmt: skip
    try:
        question, doc_ids = args.question, None
        if args.dataset:
            item_question, doc_ids = dataset_scope(args.dataset, args.question_id)
            question = question or item_question
        elif args.question_id:
            raise BadInput("--question-id needs --dataset DS.json")
        if not question:
            raise BadInput('no question: pass "QUESTION" (or --dataset with --question-id)')
        overrides = {**lm_overrides(args), "k": args.k,
                     "concurrency": args.concurrency, "fact_store": args.fact_store,
                     **{f"lm_{s}": getattr(args, f"lm_{s}") for s in ("planner", "extractor", "normalizer", "coder",
                                                                     "answer")}}  # fmt: skip
        settings = Settings.from_env(overrides)
        if not settings.fact_store:  # facts live next to the index unless told otherwise
            settings = settings.replace(fact_store=str(Path(args.index) / "facts.sqlite"))
        store = open_store(args.index)
        program = build(args, settings, store)
        configure(settings, program)
    except (BadInput, NoLMConfigured, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    progress = Progress(enabled=not args.no_progress)
    try:
        with dspy.track_usage() as tracker:
            pred = program(question=question, doc_ids=doc_ids, on_progress=progress)
    except ValueError as e:  # e.g. dataset documents missing from the index
        print(f"error: {e}", file=sys.stderr)
        return 2
    finally:
        progress.close()
    usage = tracker.get_total_tokens()
    if args.run_dir:
        from programs.run_folder import write_run

        write_run(args.run_dir, pred, question_id=args.question_id,
                  extra={"usage": usage, "settings": settings.as_params()})  # fmt: skip
    if args.json:
        print(json.dumps(output(pred, usage), ensure_ascii=False, indent=2))
    else:
        print(pred.answer)
        for m in pred.missing:
            print(f"missing: {m.doc_id} ({m.stage}): {m.reason}", file=sys.stderr)
    return 0  # a run that could not plan still ends here: its answer and `missing` say why


if __name__ == "__main__":
    sys.exit(main())
