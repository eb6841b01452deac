"""Ask one question over an indexed collection.

    collate ask --index DIR [--dataset DS.json --question-id QID] [--program compiled.json]
                [--run-dir DIR] [--json] [--lm MODEL --api-base URL ...] "QUESTION"
    (also: python -m collate.ask ...)

Without --dataset the scope is the whole indexed collection; with it, that item's documents, read the
way evaluate reads datasets (gold fields never reach the program). --json prints
{answer, records, code, result, citations, missing, usage, error}. Outputs are checked before the first
LM call (run folder and fact store writable), then the LM itself with one 1-token call (exit 2 with
the setting to fix); the answer is printed even if writing the run folder fails afterwards. No answer
(planning failed, not one document read) is exit 1 with `error: no answer: <why>` on stderr. When an LM call failed or a reply could not be parsed, one line on stderr says so
per stage ("LM: planner 1 parse failure of 3 calls"); the run folder's answer.json keeps every stage's
calls, LM errors, parse failures and LM seconds.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import dspy

from collate import estimate, parsers
from collate.errors import Exit
from collate.inputs import BadInput, lm_overrides, open_store, parse_cli
from collate.outputs import writable_file, writable_folder
from evaluate.dataset import DatasetError, load_dataset, strip_gold
from programs import compiled
from programs.compiled import missing_program
from programs.lm.cost_report import cost_figures, cost_lines
from programs.lm.preflight import check_isolation, preflight
from programs.lm.progress import RunCounts, totals, trouble_line
from programs.lm.settings import NoLMConfigured, Settings, configure
from programs.lm.stages import ANALYST_STAGES
from programs.run_folder import to_jsonable, write_run
from programs.stages.cascade import cascade_line, cascade_summary

logger = logging.getLogger(__name__)


build_parser = parsers.ask  # the flags live in collate/parsers.py, light for --help


def parse_args(argv):
    return build_parser().parse_args(argv)


def dataset_scope(path: str, question_id: str | None) -> tuple[str, list[str]]:
    """(question, document ids) of one dataset item: only what strip_gold lets a system see."""
    if not question_id:
        raise BadInput("--dataset needs --question-id QID (the item to answer)")
    try:
        items = load_dataset(path)
    except DatasetError as e:
        raise BadInput(str(e)) from None
    for item in items:
        if item.question_id == question_id:
            public = strip_gold(item)
            return public.question, public.doc_ids
    if question_id in items.skipped:  # the loader left it out: say why rather than "not in"
        raise BadInput(f"question {question_id} in {path} is blank: write its question in the dataset")
    raise BadInput(
        f"question_id {question_id!r} is not in {path}; list ids with: jq '.[].question_id' {path}"
    )


class Progress:
    """tqdm of documents done / total on stderr, created when the total is known."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.bar: Any = None  # a tqdm, made when the total is known

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

    if args.program and not Path(args.program).is_file():
        raise BadInput(missing_program(args.program))
    program = build_program(settings, store)  # opens the fact store: a FactStoreError names the fix
    if args.program:
        compiled.load(program, args.program)  # a sidecar of another format version is refused, naming the fix
    return program


def missing_lines(missing, error: str | None = None) -> list[str]:
    """One line per document not read; when every one failed for the same reason, one line naming how
    many: 56 identical lines buried the reason before. Documents whose reason is the question's `error`
    (the plan failed: each document carries it) get none: the closing error line says it once."""
    missing = [m for m in missing if not error or m.reason != error]
    reasons = {(m.stage, m.reason) for m in missing}
    if len(missing) > 1 and len(reasons) == 1:
        stage, reason = reasons.pop()
        return [f"missing: all {len(missing)} documents in scope ({stage}): {reason}"]
    return [f"missing: {m.doc_id} ({m.stage}): {m.reason}" for m in missing]


def spent_nothing(stages: dict) -> bool:
    """No call of any stage was answered (each one an LM error) and no token was counted."""
    return not any(
        int(c.get("calls", 0)) > int(c.get("lm_errors", 0))
        or int(c.get("tokens_in", 0))
        or int(c.get("tokens_out", 0))
        for c in stages.values()
    )


def facts_saved(pred) -> int:
    """Documents of the plan answered wholly from the fact store (no extraction call)."""
    extract = (getattr(pred, "trace", None) or {}).get("extract") or {}
    plan = (getattr(pred, "trace", None) or {}).get("plan") or {}
    return max(0, len(plan.get("assignments") or {}) - int(extract.get("lm_documents") or 0))


def output(pred, usage: dict, cost: dict | None = None) -> dict:
    return to_jsonable(
        {
            "answer": pred.answer,
            "coverage_line": pred.coverage_line,
            "coverage": pred.coverage,
            "records": pred.records,
            "code": pred.code,
            "result": pred.result,
            "citations": pred.citations,
            "missing": pred.missing,
            "usage": usage,
            "cost": cost or {},  # tokens in/out and dollars per stage (programs/lm/cost_report.py)
            "error": getattr(pred, "error", None),  # why there is no answer; null when there is one
        }
    )


def write_report(path: str, question: str, pred, store) -> None:
    from programs.audit_report import write_program_report

    outputs = to_jsonable(
        {
            "answer": pred.answer,
            "coverage_line": pred.coverage_line,
            "coverage": pred.coverage,
            "code": pred.code,
            "result": pred.result,
            "records": pred.records,
            "facts": pred.facts,
        }
    )
    write_program_report(
        path, question, outputs, getattr(store, "pdf_path", None), getattr(store, "ocr_lines", None)
    )


def scoring_inputs(args, settings: Settings) -> dict:
    """What `collate score RUN_DIR` needs to score this answer: the dataset and the one
    question of it (none for a question of no dataset), and the models under test."""
    return {
        "dataset": str(Path(args.dataset).resolve()) if args.dataset else "",
        "question_ids": [args.question_id] if args.question_id else [],
        "lm": settings.lm,
        "models_under_test": settings.models_under_test(),
    }


def read_question(args, require_lm: bool = True) -> tuple[str, list[str] | None, Settings]:
    """The question, its documents (a dataset item's, else None: the whole catalog) and the settings, or
    BadInput naming the fix. Shared with `--estimate`, which quotes exactly what ask would run."""
    question, doc_ids = args.question, None
    if args.dataset:
        item_question, doc_ids = dataset_scope(args.dataset, args.question_id)
        question = question or item_question
    elif args.question_id:
        raise BadInput("--question-id needs --dataset DS.json")
    if not (question or "").strip():
        raise BadInput('no question: pass "QUESTION" (or --dataset with --question-id)')
    overrides = {
        **lm_overrides(args),
        "k": args.k,
        "concurrency": args.concurrency,
        "fact_store": args.fact_store,
        "reuse_facts_from_any_model": args.reuse_facts_from_any_model,
        **{f"lm_{s}": getattr(args, f"lm_{s}") for s in ANALYST_STAGES},
    }
    return question, doc_ids, Settings.from_env(overrides, require_lm=require_lm)


def prepare(args) -> tuple[str, list[str] | None, Settings, Any, Any]:
    """Everything that can fail on the user's input, before any LM call: (question, scope, settings,
    program, store)."""
    question, doc_ids, settings = read_question(args)
    if args.run_dir:
        writable_folder(args.run_dir, "--run-dir")  # before any LM call is paid for
    if args.report:
        writable_file(args.report, "--report")
    store = open_store(args.index)
    program = build(args, settings, store)
    configure(settings, program)
    if not args.baseline:  # no isolation here: one line and exit 2, before the LM check's call
        check_isolation(settings)
    preflight(settings, [None] if args.baseline else list(ANALYST_STAGES))  # a dead LM: one line, exit 2
    return question, doc_ids, settings, program, store


def main(argv=None) -> int:
    args = parse_cli(build_parser(), argv)
    if isinstance(args, int):  # argparse already printed its one-line reason (or --help)
        return args
    if args.estimate:  # the quote before spending: no LM call, nothing written
        return estimate.for_ask(args, read_question, build)
    try:
        question, doc_ids, settings, program, store = prepare(args)
    except (BadInput, NoLMConfigured, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    progress = Progress(enabled=not args.no_progress)
    lm_counts = RunCounts(program)  # this question's LM calls, not an earlier one's in this process
    try:
        with dspy.track_usage() as tracker:
            pred = program(question=question, doc_ids=doc_ids, on_progress=progress)
    except ValueError as e:  # e.g. dataset documents missing from the index
        print(f"error: {e}", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    except KeyboardInterrupt:
        progress.close()
        print(
            "interrupted: facts extracted so far are kept in the fact store; ask again to resume",
            file=sys.stderr,
        )
        return int(Exit.INTERRUPTED)
    finally:
        progress.close()
    usage = tracker.get_total_tokens()
    lm_stages = lm_counts.stages()
    saved = facts_saved(pred)
    cascade = cascade_summary([getattr(pred, "run_log", None) or {}])  # {} unless a cascade ran
    cost = {**cost_figures(lm_stages, saved, settings), **cascade, "stages": lm_stages}
    if args.run_dir:
        try:
            write_run(
                args.run_dir,
                pred,
                question_id=args.question_id,
                extra={
                    "usage": usage,
                    **totals(lm_stages),
                    "lm_stages": lm_stages,
                    "cost": cost,
                    "settings": settings.as_params(),
                    "inputs": scoring_inputs(args, settings),
                },
            )
        except OSError as e:  # the answer is paid for: print it anyway, and say what was not written
            print(f"warning: could not write the run folder {args.run_dir}: {e}", file=sys.stderr)
    if args.report:
        try:
            write_report(args.report, question, pred, store)
            # on stderr: stdout stays the answer (or the one JSON object with --json)
            print(f"audit report: {Path(args.report).resolve()}", file=sys.stderr)
        except OSError as e:
            print(f"warning: could not write the report {args.report}: {e}", file=sys.stderr)
    error = getattr(pred, "error", None)
    if args.json:
        print(json.dumps(output(pred, usage, cost), ensure_ascii=False, indent=2))
    else:
        if not error:  # stdout is the answer, and nothing when there is none
            print(pred.answer)
            if pred.coverage_line:
                print(pred.coverage_line)
        for line in missing_lines(pred.missing, error):
            print(line, file=sys.stderr)
    # Beside the answer, never in it: stdout stays the answer (or the one JSON object with --json).
    # A question that failed before the LM answered anything (the demo reader's refusal, a dead plan
    # call) spent nothing: its error line is the whole story, not a 0-token cost block around it.
    if not (error and spent_nothing(lm_stages)):
        trouble = trouble_line(lm_stages)
        if trouble:
            print(trouble, file=sys.stderr)
        for line in cost_lines(lm_stages, figures=cost):
            print(line, file=sys.stderr)
    if cascade:
        print(cascade_line(cascade), file=sys.stderr)
    if error:  # no plan, or not one document read: failed, not answered
        print(f"error: no answer: {' '.join(str(error).split())}", file=sys.stderr)  # one line
        return int(Exit.FAILED)
    return 0


if __name__ == "__main__":
    sys.exit(main())
