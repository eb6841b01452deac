"""`collate compile` / `python -m optimize.compile`: tune the program with a DSPy optimizer, logged to MLflow."""

from __future__ import annotations

import sys
from pathlib import Path

from collate import estimate, parsers
from collate.budget_flags import check_budget_arguments
from collate.compile_job import compile_job
from collate.errors import Exit
from collate.inputs import BadInput, lm_overrides, open_store, parse_cli
from collate.outputs import writable_file
from evaluate import tracking
from evaluate.dataset import DatasetError, load_dataset
from evaluate.tracking.store_check import check_store
from optimize.compiler import analyst_without_fact_reuse, budget_line, run_compile, score_line
from programs.compiled import check_program_path, sidecar_path
from programs.lm.cost_report import cost_lines
from programs.lm.preflight import check_isolation, preflight
from programs.lm.prices import check_usd_cap
from programs.lm.settings import NoLMConfigured, Settings, configure
from programs.lm.stages import ANALYST_STAGES

build_parser = parsers.compile  # the flags live in collate/parsers.py, light for --help


def preflight_all(settings: Settings, stage: str, optimizer: str = "") -> None:
    """The checks before a compile spends: the sandbox (the program stage runs generated code, so a
    machine that refuses it would score every candidate 0), then the LM's 1-token call."""
    if stage != "extractor":
        check_isolation(settings)
    stages: list[str | None] = [*ANALYST_STAGES, *(["reflection"] if optimizer == "gepa" else [])]
    preflight(settings, stages)


def main(argv=None) -> int:
    args = parse_cli(build_parser(), argv)
    if isinstance(args, int):  # argparse already printed its one-line reason (or --help)
        return args
    try:
        if args.max_calls is not None and args.max_calls < 1:
            raise BadInput(f"--max-calls must be at least 1 (got {args.max_calls}); omit it for no cap")
        check_budget_arguments(args)
        if args.limit is not None and args.limit < 1:
            raise BadInput(f"--limit must be at least 1 (got {args.limit})")
        if not 0 <= args.final_weight <= 1:
            raise BadInput(f"--final-weight must be between 0 and 1 (got {args.final_weight})")
        if args.threads < 1:
            raise BadInput(f"--threads must be at least 1 (got {args.threads})")
        if args.max_demos < 0:
            raise BadInput(f"--max-demos must be 0 or more (got {args.max_demos})")
        if args.threshold is not None and not 0 <= args.threshold <= 1:
            raise BadInput(
                f"--threshold must be between 0 and 1, the metric's range (got {args.threshold}): "
                "above 1 no trace can become a demo"
            )
        if args.estimate:  # the quote before spending: no LM call, no MLflow run, nothing written
            return estimate.for_compile(args)
        writable_file(args.out, "--out")  # before any LM call: a compile that cannot save loses paid work
        check_program_path(args.out)  # DSPy saves state only to a .json: said now, not after paying
        check_store()  # the MLflow store, in seconds: not a traceback after the work is done
        settings = Settings.from_env(lm_overrides(args))
        # a dollar cap it cannot price would cap nothing: refused now, before the optimization is paid for
        spending: list[str | None] = ["extractor"] if args.stage == "extractor" else list(ANALYST_STAGES)
        check_usd_cap(settings, spending + ([None] if args.optimizer == "gepa" else []), args.max_usd)
        items = load_dataset(args.dataset)
        store = open_store(args.index)
        program = analyst_without_fact_reuse(settings, store)
        configure(settings, program)
    except (BadInput, DatasetError, NoLMConfigured) as e:
        print(f"error: {e}", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    job = compile_job(args)
    out = Path(args.out)
    try:
        result = run_compile(
            program,
            items,
            settings,
            job,
            out,
            autolog=not args.no_autolog,
            sources={"dataset": args.dataset, "index": args.index},
            # a dead LM: one line and exit 2, after the budget check (a refused budget sends nothing)
            lm_check=lambda: preflight_all(settings, job.stage, job.optimizer),
        )
    except BadInput as e:
        print(f"error: {e}", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    meta = result.meta
    out = Path(meta.get("saved_to") or out)
    print(
        f"saved {out} and {sidecar_path(out)} ({job.optimizer}, stage {job.stage}, "
        f"{meta['train_examples']} train / {meta['val_examples']} dev examples)"
    )
    print(score_line(meta))
    print(budget_line(meta))
    for line in cost_lines(meta["cost"]["stages"], figures=meta["cost"]):
        print(line)
    print(f"changes: {meta['changes']['by_stage']}")
    if meta["stopped_early"]:
        print(f"stopped early: {meta['stopped_early']}")
    if meta.get("log"):
        print(f"the optimizer's own log (DSPy, GEPA, Optuna): {meta['log']}")
    print(
        f"MLflow run {result.run_id} in {tracking.tracking_uri()}; open the UI with:\n  "
        f"{tracking.ui_command(experiment_id=tracking.experiment_id())}"
    )
    print(f"evaluate it on the held-out test split: collate run --program {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
