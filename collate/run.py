"""`collate run` / `python -m evaluate.run`: answer and score a dataset with one program variant, logged to MLflow."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import NoReturn

from collate import estimate, parsers
from collate.budget_flags import check_budget_arguments
from collate.errors import Exit, exit_process, run_main
from collate.inputs import BadInput, lm_overrides, open_store, parse_cli
from collate.outputs import writable_folder
from evaluate import tracking
from evaluate.dataset import DatasetError, DatasetItem, dataset_hash, load_dataset, select
from evaluate.matching.scoring import unanswered_warnings
from evaluate.runs import store_log
from evaluate.runs.evaluation import (
    FLAT_VARIANTS,
    RunIdentity,
    all_failed,
    build_variant,
    evaluate_program,
    format_summary,
    logger,
    make_judge,
    run_identity,
    scored_run,
    variant_name,
    variant_tags,
)
from evaluate.runs.job import RunJob
from evaluate.runs.resume import interrupted_line, open_run_folder, resumed_line, run_settings
from evaluate.runs.run_lock import run_folder_lock
from evaluate.runs.store_record import StoreRecord
from evaluate.tracking.store_check import check_store
from programs import compiled
from programs.lm.preflight import check_isolation, preflight
from programs.lm.prices import check_usd_cap
from programs.lm.settings import NoLMConfigured, Settings, configure
from programs.lm.spend import Budget
from programs.lm.stages import ANALYST_STAGES, PROGRAM_STAGES
from programs.native_memory import limit_arenas

build_parser = parsers.run  # the flags live in collate/parsers.py, light for --help


def main(argv=None, *, lm_checked: bool = False, resume: str | None = None) -> int:
    """lm_checked: the caller (collate demo) already made the preflight call; resume: the command line
    that resumes this run, when it is not the caller's own (the demo makes a new folder each time)."""
    limit_arenas()  # before the run's threads: what malloc holds free stays small (programs/native_memory.py)
    # a Ctrl-C during the answering says what was kept (below); before it, nothing was asked
    return run_main(
        lambda: _main(argv, lm_checked, resume), "interrupted before any question was asked: nothing to keep"
    )


def entry() -> NoReturn:
    """`collate run`: main(), then the process ends with its code (at once after Ctrl-C)."""
    exit_process(main())


def _main(argv, lm_checked: bool, resume: str | None = None) -> int:
    with contextlib.ExitStack() as held:  # the run folder's lock, once known, until the run has ended
        return _run(argv, lm_checked, resume, held)


def _run(argv, lm_checked: bool, resume: str | None, held: contextlib.ExitStack) -> int:
    args = parse_cli(build_parser(), argv)
    if isinstance(args, int):  # argparse already printed its one-line reason (or --help)
        return args
    if args.estimate:  # the quote before spending: no LM call, no MLflow run, nothing written
        return estimate.for_run(args, inputs_from_compile, check_coverage)
    program_file = Path(args.program) if args.program and args.program not in FLAT_VARIANTS else None
    origin = compiled.origin(program_file) if program_file is not None and program_file.is_file() else {}
    variant = variant_name(args.program, origin)
    out_dir = Path(args.out or f"runs/{variant.replace(':', '-')}-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        inputs_from_compile(args, origin, program_file)
        if args.concurrency < 1:
            raise BadInput(f"--concurrency must be at least 1 (got {args.concurrency})")
        check_budget_arguments(args)
        writable_folder(out_dir, "--out")  # before any LM call: answers must have somewhere to go
        held.enter_context(run_folder_lock(out_dir))  # one writer per folder: a second run exits 75 now
        check_store()  # the MLflow store, in seconds: not a traceback after the work is done
        settings = Settings.from_env({**lm_overrides(args), "lm_judge": args.judge})
        # a dollar cap it cannot price would cap nothing: refused now, naming the price settings
        check_usd_cap(
            settings, [None] if args.program in FLAT_VARIANTS else list(ANALYST_STAGES), args.max_usd
        )
        if (
            not settings.fact_store
        ):  # a run keeps its own facts (never scored on another run's), logged with it
            settings = settings.replace(fact_store=str(out_dir / "facts.sqlite"))
        dataset = load_dataset(args.dataset)
        items = select(dataset, args.split, args.seed, args.limit)
        store = open_store(args.index)
        check_coverage(items, store, args.dataset, args.index)
        program = build_variant(args.program, settings, store, out_dir)
        configure(settings, program)
        judge = None if args.no_judge else make_judge(settings, out_dir)
        same_run = run_settings(  # what a rerun into this --out must match to resume it
            dataset_file=str(args.dataset),
            items_hash=dataset_hash(items),
            split=args.split,
            seed=args.seed,
            limit=args.limit,
            variant=variant,
            program_hash=compiled.program_hash(program),
            models=settings.models_under_test(),
            index=str(args.index),
            endpoints={s: base for s, base in settings.own_endpoints().items() if s in PROGRAM_STAGES},
        )
        journal = open_run_folder(out_dir, same_run)
        missing = len(items) - len(journal.answered(item.question_id for item in items))
        asking = missing > 0
        if args.log_only and asking:
            raise BadInput(
                f"--log-only: {missing} of {len(items)} questions are not answered in {out_dir}: run the "
                "command without --log-only to ask them"
            )
        if asking and args.program not in FLAT_VARIANTS:  # code would be refused: exit 2 before spending
            check_isolation(settings)
        if (
            not lm_checked and not args.log_only
        ):  # a dead LM is one line and exit 2, not a run of failed questions
            stages: list[str | None] = [None] if args.program in FLAT_VARIANTS else list(ANALYST_STAGES)
            stages = (stages if asking else []) + ([] if judge is None else ["judge"])
            if stages:  # every answer kept from a stopped run: only the judge (if any) is called
                preflight(settings, stages)
    except (BadInput, DatasetError, NoLMConfigured, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    job = run_job(args, variant, out_dir, program_file, origin, dataset.skipped)
    kept = store_log.scored_from_folder(out_dir, [item.question_id for item in items])
    if kept is not None and (args.log_only or StoreRecord.read(out_dir).pending):
        # scored to the end, but not (all) in the store: logged as it was, nothing asked or scored again
        identity = run_identity(job, program, items, settings, judge)
        return log_kept(job, identity, program, items, kept)
    if resumed := resumed_line(journal, items):
        print(resumed, file=sys.stderr)
    try:
        result = evaluate_program(
            program,
            items,
            job,
            settings=settings,
            judge=judge,
            journal=journal,
            store=store,
            on_scored=lambda summary: print_scores(summary, out_dir),
            on_retry=store_retry_line,
        )
    except tracking.StoreFault as fault:  # the scores are printed and kept; only the store is missing them
        print(f"error: {store_log.store_line(out_dir, str(fault))}", file=sys.stderr)
        return int(Exit.FAILED)
    except KeyboardInterrupt:  # the MLflow run is marked; the answers finished so far are on disk
        print(
            interrupted_line(journal, items, out_given=args.out is not None, resume=resume), file=sys.stderr
        )
        return int(Exit.INTERRUPTED)
    ui = tracking.ui_command(experiment_id=tracking.experiment_id())
    print(f"MLflow run {result.run_id} in {tracking.tracking_uri()}; open the UI with:\n  {ui}")
    if result.summary.get("budget_line"):
        print(
            f"error: {result.summary['budget_line']}; raise the cap to answer the rest (answers kept in {out_dir})",
            file=sys.stderr,
        )
        return int(Exit.FAILED)
    if all_failed(result.summary):
        first = next((a.error for a in result.answered if a.error), "")
        print(
            f"error: every question failed (the MLflow run is marked FAILED); first: {first}", file=sys.stderr
        )
        return int(Exit.FAILED)
    return 0


def print_scores(summary: dict, out_dir: Path) -> None:
    print(format_summary(summary))
    for line in unanswered_warnings(summary, f"all in {out_dir / 'summary.json'}"):
        print(line, file=sys.stderr)
    print(f"run folder: {out_dir}  (agent_output.json, results.jsonl, summary.json)", flush=True)


def store_retry_line(reason: str, wait: float) -> None:
    print(f"MLflow store fault ({reason}): trying again in {wait:g} s", file=sys.stderr, flush=True)


def log_kept(job: RunJob, identity: RunIdentity, program, items, kept) -> int:
    """--log-only (or a rerun of a folder whose logging faulted): log its kept scores into its MLflow run."""
    summary, answered, scores = kept
    out_dir = job.out_dir
    record = StoreRecord.read(out_dir)
    if record.logged:
        print(f"{out_dir} is logged already: MLflow run {record.run_id} in {tracking.tracking_uri()}")
        return 0
    scored = scored_run(job, identity, program, items, summary, answered, scores)
    print_scores(summary, out_dir)
    try:
        run = store_log.open_run(out_dir, identity.name, identity.tags, on_retry=store_retry_line)
        run_id = store_log.log_scored(run, scored, on_retry=store_retry_line)
    except tracking.StoreFault as fault:
        print(f"error: {store_log.store_line(out_dir, str(fault))}", file=sys.stderr)
        return int(Exit.FAILED)
    ui = tracking.ui_command(experiment_id=tracking.experiment_id())
    print(f"MLflow run {run_id} in {tracking.tracking_uri()}; open the UI with:\n  {ui}")
    return 0


def run_job(
    args, variant: str, out_dir: Path, program_file: Path | None, origin: dict, skipped: dict
) -> RunJob:
    """The job `collate run` runs for these parsed arguments (the demo runs this command too)."""
    # paths are where things were, not settings: tags, so the compare page does not plot them
    paths = {
        "dataset": str(args.dataset),
        "index": str(args.index),
        "out": str(out_dir),
        "program_file": args.program or "",
    }
    return RunJob(
        variant=variant,
        out_dir=out_dir,
        concurrency=args.concurrency,
        part=args.split,
        dataset_file=str(args.dataset),
        program_file=program_file,
        params={"split": args.split, "seed": args.seed, "limit": args.limit or ""},
        tags={**variant_tags(args.program, origin), **paths},
        skipped=dict(skipped),
        autolog=not args.no_autolog,
        lm_traces=args.lm_traces,
        progress=not args.no_progress,
        budget=Budget(args.max_calls, args.max_tokens, args.max_usd, hard=False),
    )


def inputs_from_compile(args, origin: dict, program_file: Path | None) -> None:
    """--program compiled.json alone: the dataset and index its compile recorded, on the test split it
    held out (same seed); flags given on the command line win. BadInput naming the flags otherwise."""
    recorded = {"dataset": origin.get("dataset"), "index": origin.get("index")}
    taken = [k for k in ("dataset", "index") if getattr(args, k) is None and recorded[k]]
    for key in taken:
        setattr(args, key, recorded[key])
    if "dataset" in taken:  # the compile trained on its train split: hold its test split out the same way
        args.split = args.split or "test"
        args.seed = (origin.get("seed") or 0) if args.seed is None else args.seed
    args.split = args.split or "all"
    args.seed = 0 if args.seed is None else args.seed
    if program_file is not None and not program_file.is_file():  # the file given, not its sidecar
        raise BadInput(compiled.missing_program(program_file))
    missing = [f"--{k}" for k in ("dataset", "index") if getattr(args, k) is None]
    if missing:
        where = f"{compiled.sidecar_path(program_file)} records none" if program_file else "no --program"
        raise BadInput(
            f"{' and '.join(missing)} needed ({where}): pass them, or --program a compiled.json whose "
            "compile recorded them (collate compile writes them to its .meta.json)"
        )
    if taken:
        assert program_file is not None  # values are taken only from a compiled program's sidecar
        print(
            f"from {compiled.sidecar_path(program_file)}: {', '.join(f'--{k} {recorded[k]}' for k in taken)} "
            f"(split {args.split}, seed {args.seed})",
            file=sys.stderr,
        )


def check_coverage(items: list[DatasetItem], store, dataset: str, index: str) -> None:
    """None of the dataset's documents indexed is a setup mistake; some missing is reported per question."""
    indexed = {doc.id for doc in store.catalog.documents()}
    wanted = {doc_id for item in items for doc_id in item.doc_ids}
    missing = wanted - indexed
    if wanted and missing == wanted:
        raise BadInput(
            f"the index {index} holds none of the {len(wanted)} documents of {dataset}: build it with "
            f"collate build --catalog {dataset} --pdf-dir PDFS --index {index}"
        )
    if missing:
        logger.warning(
            "%d of %d documents are not in the index; questions over them will fail",
            len(missing),
            len(wanted),
        )


if __name__ == "__main__":
    entry()
