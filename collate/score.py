"""`collate score` / `python -m evaluate.score`: score saved answers against a dataset."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from collate.inputs import parse_cli
from evaluate.judge import AnswerJudge, JudgeCache
from evaluate.scoring import (
    InputError,
    build_judge_lm,
    headline,
    load_predictions,
    load_records,
    score_items,
    unanswered_warnings,
)
from programs.runtime.settings import NoLMConfigured
from retrievers.dataset import DatasetError, load_dataset


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m evaluate.score", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dataset", required=True, help="MuDABench-format JSON (or a folder with dataset.json)"
    )
    parser.add_argument("--predictions", required=True, help="JSON list of {question_id, model_answer}")
    parser.add_argument(
        "--judge", metavar="MODEL", help="LM for answers the matcher cannot decide (e.g. openai/gpt-4.1-mini)"
    )
    parser.add_argument(
        "--judge-cache", help="SQLite verdict cache (default: judge_cache.sqlite next to PRED.json)"
    )
    parser.add_argument("--records", help="facts or records per question for process accuracy")
    parser.add_argument("--json", action="store_true", help="print the full report as JSON")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = parse_cli(_parser(), argv)
    if isinstance(args, int):  # argparse already printed its one-line reason (or --help)
        return args
    try:
        items = load_dataset(args.dataset)
        predictions = load_predictions(args.predictions)
        predictions = _without_skipped(predictions, items.skipped)
        records = load_records(args.records) if args.records else None
        judge = None
        if args.judge:
            cache_path = args.judge_cache or Path(args.predictions).resolve().parent / "judge_cache.sqlite"
            judge = AnswerJudge(cache=JudgeCache(cache_path), model=args.judge)
            judge.set_lm(build_judge_lm(args.judge))
        report = score_items(items, predictions, judge=judge, records=records).as_dict()
    except (DatasetError, InputError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except NoLMConfigured as e:
        print(f"error: {e}".splitlines()[0], file=sys.stderr)
        return 2
    listed = "all in missing_ids/empty_ids/failed_ids" if args.json else "--json lists them all"
    for line in unanswered_warnings(report, listed):  # stderr: --json output stays parseable
        print(line, file=sys.stderr)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print(headline(report))
        if "process_macro" in report:
            print(
                f"process macro {report['process_macro']}  micro {report['process_micro']}  full {report['full_accuracy']:.3f}"
            )
    return 0


def _without_skipped(predictions: list[dict], skipped: dict[str, str]) -> list[dict]:
    """Answers to questions the dataset loader skipped (blank text) are left out, and said so: scoring
    them would judge an answer to no question."""
    left_out = [str(p["question_id"]) for p in predictions if str(p["question_id"]) in skipped]
    if left_out:
        print(
            f"warning: not scored: {len(left_out)} answer{'' if len(left_out) == 1 else 's'} to a blank "
            f"question ({', '.join(left_out[:10])}{', ...' if len(left_out) > 10 else ''}); "
            "write the question in the dataset to score it",
            file=sys.stderr,
        )
    return [p for p in predictions if str(p["question_id"]) not in skipped]


if __name__ == "__main__":
    sys.exit(main())
