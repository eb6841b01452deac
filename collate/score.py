"""`collate score` / `python -m evaluate.score`: score a run again, or saved answers, against a dataset.

    collate score RUN_DIR [--split test --seed 0] [--dataset DS] [--judge MODEL] [-v] [--json]
    collate score --dataset DS --predictions PRED.json [--records REC.json] [--judge MODEL]

RUN_DIR is the folder collate run wrote (or one of its results.jsonl / agent_output.json);
final and process accuracy are recomputed from the answers and records it saved. The dataset, split,
seed and limit default to the run's own (its summary.json); --split/--seed pick another part of the
split. No judge unless one is named (--judge or COLLATE_LM_JUDGE); `--judge self` is the run's model
under test, and the report then says the verdicts are self-judged.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from collate import parsers
from collate.errors import Exit
from collate.inputs import parse_cli
from evaluate.dataset import DatasetError, dataset_hash, load_dataset, select
from evaluate.matching.judge import AnswerJudge, JudgeCache
from evaluate.matching.score_report import text_report
from evaluate.matching.scoring import InputError, build_judge_lm, score_items, unanswered_warnings
from evaluate.runs.run_reading import SavedRun, load_records, read_run
from programs.lm.settings import SELF_JUDGE, NoLMConfigured, Settings

_parser = parsers.score  # the flags live in collate/parsers.py, light for --help


def _saved(args) -> SavedRun:
    if bool(args.run) == bool(args.predictions):
        raise InputError(
            "pass a run folder (collate score runs/NAME) or --predictions PRED.json, one of them"
        )
    if args.predictions and not Path(args.predictions).is_file():
        raise InputError(
            f"{args.predictions}: no such predictions file; pass a JSON list of {{question_id, model_answer}}"
        )
    return read_run(args.run or args.predictions)


def _questions(args, saved: SavedRun) -> tuple[list, list[str], dict[str, str]]:
    """The questions to score, notes on how they were chosen, and the questions the loader skipped (blank
    text); answers to other questions are left out when the choice is a part of the dataset (a run over
    all, scored on its test part)."""
    inputs = saved.inputs
    dataset = args.dataset or inputs.get("dataset")
    if not dataset:
        if args.predictions:
            raise InputError("--predictions needs --dataset DS: the questions to score the answers against")
        raise InputError(
            f"{saved.source} names no dataset (a run folder written before runs recorded theirs in "
            "summary.json): pass --dataset DS"
        )
    part = args.split or inputs.get("split") or "all"
    seed = args.seed if args.seed is not None else int(inputs.get("seed") or 0)
    own_choice = args.split is None and args.seed is None
    limit = args.limit if args.limit is not None else (inputs.get("limit") if own_choice else None)
    loaded = load_dataset(dataset)
    items = select(loaded, part, seed, limit)
    asked = set(inputs.get("question_ids") or [])  # collate ask: the one question it answered
    if asked and own_choice and args.limit is None:
        items = [item for item in items if item.question_id in asked]
    notes = [
        f"questions: {len(items)} of {dataset} (split {part}, seed {seed}{f', first {limit}' if limit else ''})"
    ]
    recorded = saved.summary.get("dataset_hash")
    if recorded and own_choice and not args.dataset and dataset_hash(items) != recorded:
        notes.append(
            f"warning: these questions are not the run's (dataset hash {dataset_hash(items)}, the run "
            f"scored {recorded}): the dataset file changed since the run"
        )
    if part != "all" or limit:
        ids = {item.question_id for item in items}
        outside = [p for p in saved.predictions if p["question_id"] not in ids]
        saved.predictions = [p for p in saved.predictions if p["question_id"] in ids]
        if outside:
            notes.append(f"left out {len(outside)} answers to questions outside split {part}")
        if not saved.predictions:
            raise InputError(f"none of the answers in {saved.source} is to a question of split {part}")
    return items, notes, getattr(loaded, "skipped", {})


def _judge(args, saved: SavedRun) -> AnswerJudge | None:
    if args.no_judge:
        return None
    model = Settings.from_env({"lm_judge": args.judge}, require_lm=False).lm_judge
    if not model:
        return None
    tested = list(saved.inputs.get("models_under_test") or [])
    if model == SELF_JUDGE:
        model = saved.inputs.get("lm") or Settings.from_env(require_lm=False).lm
        if not model:
            raise NoLMConfigured("--judge self: the run names no model under test; pass the model name")
    cache = Path(args.judge_cache) if args.judge_cache else saved.source.parent / "judge_cache.sqlite"
    self_judged = args.judge == SELF_JUDGE or model in tested
    judge = AnswerJudge(cache=JudgeCache(cache), model=model, self_judged=self_judged)
    judge.set_lm(build_judge_lm(model))
    return judge


def main(argv: list[str] | None = None) -> int:
    args = parse_cli(_parser(), argv)
    if isinstance(args, int):  # argparse already printed its one-line reason (or --help)
        return args
    try:
        saved = _saved(args)
        items, notes, skipped = _questions(args, saved)
        predictions = _without_skipped(saved.predictions, skipped)
        records = load_records(args.records) if args.records else None
        judge = _judge(args, saved)
        report = score_items(items, predictions, judge=judge, records=records).as_dict()
    except (DatasetError, ValueError) as e:  # InputError, and a COLLATE_* setting out of range
        print(f"error: {e}", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    except NoLMConfigured as e:
        print(f"error: {e}".splitlines()[0], file=sys.stderr)
        return int(Exit.BAD_INPUT)
    listed = "all in missing_ids/empty_ids/failed_ids" if args.json else "--json lists them all"
    for line in notes[1:] + unanswered_warnings(report, listed):  # stderr: --json output stays parseable
        print(line, file=sys.stderr)
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print(notes[0])
        print(text_report(report, str(saved.source), args.verbose))
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
