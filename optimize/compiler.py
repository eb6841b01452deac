"""Tune the program with a DSPy optimizer and save it as compiled.json (+ compiled.meta.json).

    collate compile --dataset DS.json --index DIR --optimizer bootstrap|mipro|gepa|simba
                               --out compiled.json [--stage program|extractor] [--max-calls N [--force]] [--seed S]

The dataset is split (seeded, stratified by doctype): the optimizer trains on `train` and, where it
takes one, validates on `dev`; keep `test` for `collate run --split test`. `--stage
extractor` tunes only the per-document extractor against gold cells (cheap); the saved file is
always a whole Analyst, loadable by `evaluate.run --program`. `--max-calls` caps the requests that
reach an LM (DSPy cache hits are free and counted apart): the first refused request stops the
optimizer, the best candidate it had scored is saved, scored on dev and marked. Scoring the saved
program on dev is counted apart from the cap. Before any request the compile prices what the optimizer
spends before its first scored candidate (optimize/call_estimate.py) and refuses a cap below it, naming
the --max-calls that would do (`--force` spends it anyway, with a warning). The compile is one MLflow run
(params: the settings and the optimizer's arguments; the program: an artifact); the optimizer's
evaluations are child runs under it. The summary says what the compile changed, or "no change".
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

import dspy

from evaluate import tracking
from evaluate.dataset import DatasetItem, dataset_hash, split
from evaluate.tracking.known_cost import known_cost
from optimize import program_diff
from optimize.best_so_far import BestSoFar, adopt, bootstrapped_demos, snapshot
from optimize.call_estimate import estimate
from optimize.console import libraries_logged_to, log_path
from optimize.objective import (
    CellMetric,
    ExtractorStage,
    FeedbackMetric,
    ProgramMetric,
    extractor_examples,
    program_examples,
)
from optimize.optimizers import OptimizerOptions, get_spec, logged_arguments, make_optimizer
from optimize.program_diff import state_of
from programs import compiled
from programs.lm.cost_report import cost_figures
from programs.lm.progress import RunCounts, stage_metrics, totals
from programs.lm.settings import Settings, build_lm, has_own_lm
from programs.lm.spend import Budget, BudgetExhausted, enforced
from programs.protocols import DocumentStore
from signatures.errors import BadInput

logger = logging.getLogger(__name__)

DEFAULT_THRESHOLD = {"program": 0.75, "extractor": 1.0}  # bootstrap keeps a trace as a demo at or above this


@dataclass
class CompileJob:
    optimizer: str
    stage: str = "program"
    seed: int = 0
    max_calls: int | None = None
    max_tokens: int | None = None  # tokens the optimizer may spend (prompt + completion)
    max_usd: float | None = None  # dollars the optimizer may spend (priced calls only)
    threads: int = 2
    max_demos: int = 4
    threshold: float | None = None
    final_weight: float = 0.5
    limit: int | None = None
    extra: dict = field(default_factory=dict)
    force: bool = False  # spend a --max-calls too small to buy one scored candidate (warned, not refused)


@dataclass
class CompileResult:
    program: dspy.Module
    meta: dict
    run_id: str


def analyst_without_fact_reuse(settings: Settings, store: DocumentStore):
    """The Analyst with no fact store: every candidate must really extract, or optimizing it is moot."""
    from programs.analyst import build_program

    return build_program(settings.replace(fact_reuse=False), store)


def training_sets(items: list[DatasetItem], job: CompileJob) -> tuple[list, list, FeedbackMetric]:
    """(trainset, valset, metric) for the stage, from the seeded split's train and dev parts."""
    parts = split(items, seed=job.seed)
    train, dev = parts.train, parts.dev
    if not train:  # tiny datasets: everything trains, nothing validates
        train, dev = items, []
    metric: FeedbackMetric
    if job.stage == "extractor":
        trainset, valset, metric = extractor_examples(train), extractor_examples(dev), CellMetric()
    else:
        trainset, valset, metric = (
            program_examples(train),
            program_examples(dev),
            ProgramMetric(items, job.final_weight),
        )
    if job.limit is not None:
        trainset, valset = trainset[: job.limit], valset[: job.limit]
    return trainset, valset, metric


def evaluate_on(student, examples: list, metric, threads: int) -> float | None:
    """Mean metric over `examples` (None when there are none); failures count 0."""
    if not examples:
        return None
    evaluator = dspy.Evaluate(
        devset=examples,
        metric=metric,
        num_threads=threads,
        display_progress=False,
        max_errors=len(examples) + 1,
    )
    result = evaluator(student)
    return round(float(result.score) / 100.0, 4)


def run_compile(
    program,
    items: list[DatasetItem],
    settings: Settings,
    job: CompileJob,
    out: Path,
    autolog: bool = True,
    params: dict | None = None,
    sources: dict | None = None,
    lm_check=None,
    log: Path | None = None,
) -> CompileResult:
    """Compile, save out + sidecar, and log it all as one MLflow run.

    `program` is an Analyst (see analyst_without_fact_reuse) whose LMs are already configured; GEPA
    reflects with its own model where one is set (COLLATE_LM_REFLECTION), else the default LM. `sources`: the dataset and index paths, recorded in the
    sidecar (so `evaluate.run --program out` alone finds them) and tagged on the run.
    Raises BadInput before any LM call when --max-calls cannot buy one scored candidate (unless job.force).
    """
    compiled.check_program_path(out)  # a path DSPy cannot save to would lose the whole paid optimization
    log = log or log_path(out)  # DSPy's, GEPA's and Optuna's own lines (optimize/console.py)
    student = ExtractorStage(program.extractor) if job.stage == "extractor" else program
    trainset, valset, metric = training_sets(items, job)
    if not trainset:
        raise BadInput("no training examples: the dataset's train split has no metadata rows / questions")
    threshold = DEFAULT_THRESHOLD[job.stage] if job.threshold is None else job.threshold
    reflection_lm = reflection_model(settings) if job.optimizer == "gepa" else None
    options = OptimizerOptions(
        seed=job.seed,
        num_threads=job.threads,
        max_demos=job.max_demos,
        max_labeled_demos=0,
        reflection_lm=reflection_lm,
        extra=optimizer_extra(job, threshold),
    )
    priced = check_budget(job, trainset, valset, program.catalog, options, len(student.predictors()))
    if lm_check is not None:
        lm_check()  # the one request before the optimizer's: raises when the LM cannot answer
    budget, tracker, start_state = (
        Budget(job.max_calls, job.max_tokens, job.max_usd),
        BestSoFar(valset),
        state_of(program),
    )
    # the starting program as it is, for the summary's score before (optimizers copy the student, but the
    # extractor stage's result is loaded into `program` itself)
    start_program, start_snapshot = student.deepcopy(), snapshot(student)
    lm_counts = RunCounts(program)  # tokens and dollars per stage, the optimizer's and dev scoring's
    data_hash = dataset_hash(items)  # serialises every item: once, for the params and the sidecar
    located = {k: str(Path(v).resolve()) for k, v in (sources or {}).items() if v}
    # the settings and the optimizer's arguments; the program itself is an artifact, never params
    all_params = {
        **settings.as_params(),
        "optimizer": job.optimizer,
        "stage": job.stage,
        "seed": job.seed,
        "max_calls": job.max_calls or "",
        "threads": job.threads,
        "max_demos": job.max_demos,
        "threshold": threshold,
        "final_weight": job.final_weight,
        "train_examples": len(trainset),
        "val_examples": len(valset),
        "dataset_hash": data_hash,
        **{f"optimizer.{k}": v for k, v in logged_arguments(job.optimizer, options, len(trainset)).items()},
        **(params or {}),
    }
    started = time.perf_counter()
    with tracking.start_run(
        f"compile {job.optimizer} ({job.stage})",
        params=all_params,
        tags={
            "kind": "compile",
            "optimizer": job.optimizer,
            "stage": job.stage,
            "dataset_hash": data_hash,
            **located,
        },
    ) as run:
        with tracking.dspy_autolog(autolog), libraries_logged_to(log):
            optimizer = make_optimizer(job.optimizer, metric, options, len(trainset))
            logger.info(
                "compiling with %s on %d train / %d val examples", job.optimizer, len(trainset), len(valset)
            )
            stopped, found = None, None
            with enforced(budget), tracker.watch():
                try:
                    compiled_student = get_spec(job.optimizer).run(
                        optimizer, student, trainset, valset or None, options
                    )
                except BudgetExhausted:
                    compiled_student, found, stopped = salvage(optimizer, student, tracker, job, budget)
        if stopped:
            # INFO: the summary says it once ("stopped early: ..."); a WARNING here printed it twice, the
            # first on the progress bar's line
            logger.info("compile stopped: %s", stopped)
        # Scored outside autolog: inside, MLflow logged the scored program's every demo field as a param of
        # the compile run (282 of them); the program is an artifact (below).
        dev_budget = Budget()  # scoring the result is not optimizing: counted apart, never capped
        if found is not None and found.on_valset:
            dev_score = round(found.score, 4)  # the optimizer scored it on dev already: no request spent
        else:
            with enforced(dev_budget), libraries_logged_to(log):
                dev_score = evaluate_on(compiled_student, valset, metric, job.threads)
        whole = merge_into_analyst(program, compiled_student, job.stage)
        changes = program_diff.diff(start_state, whole)
        before_budget = Budget()  # the starting program's dev scoring: counted apart too
        with enforced(before_budget), libraries_logged_to(log):
            before = score_before(
                dev_score, changes, tracker, start_snapshot, start_program, valset, metric, job
            )
        lm_stages = lm_counts.stages()
        meta = {
            "optimizer": job.optimizer,
            "stage": job.stage,
            "seed": job.seed,
            **located,
            "settings": settings.as_params(),
            "dataset_hash": data_hash,
            "dataset_items": len(items),
            "train_examples": len(trainset),
            "val_examples": len(valset),
            "threshold": threshold,
            "scores": {
                "dev_metric": dev_score,
                "dev_metric_before": before[0],
                "before_from": before[1],
                "metric": metric.__name__,
            },
            "budget": budget.summary(),
            "estimate": priced.as_record(),
            "dev_scoring": {"lm_calls": dev_budget.calls, "cache_hits": dev_budget.cache_hits},
            "before_scoring": {"lm_calls": before_budget.calls, "cache_hits": before_budget.cache_hits},
            "cost": {**cost_figures(lm_stages, settings=settings), "stages": lm_stages},
            "stopped_early": stopped,
            "changes": program_diff.as_record(changes),
            "seconds": round(time.perf_counter() - started, 2),
            "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "dspy_version": dspy.__version__,
            "predictors": [name for name, _ in whole.named_predictors()],
            "mlflow_run_id": run.run_id,
            "log": str(log),
        }
        out = compiled.save_or_keep(whole, out, meta)  # never lose a paid compile to a failing save
        sidecar = compiled.sidecar_path(out)
        meta = compiled.read_meta(out)
        state_hash = compiled.file_hash(out)
        spent, cost_note = known_cost(cost_metrics(lm_stages), lm_stages, meta["cost"])
        tracking.drop_autolog_models(run.run_id)  # one model per compiled program: its own, below
        model_id = compiled_model(run, job, state_hash, meta, settings, out, sidecar)
        run.log_metrics(
            {
                "dev_metric": dev_score,
                "dev_metric_before": before[0],
                **budget.summary(),
                "needed_calls": priced.first_score_calls,
                "dev_lm_calls": dev_budget.calls,
                "before_lm_calls": before_budget.calls,
                "dev_cache_hits": dev_budget.cache_hits,
                "seconds": meta["seconds"],
                "stopped_early": stopped is not None,
                "changed_predictors": len(changes),
                "demos_added": meta["changes"]["demos_added"],
                **spent,
            },
            model_id=model_id,
            dataset=dev_dataset(items, job, located.get("dataset", "")),
            linked={
                "dev/metric"
            },  # the compile's score of its program; its cost is the compile's, not the program's
        )
        run.set_tags(
            {
                "mlflow.runName": f"compile {job.optimizer} ({job.stage}) -> {state_hash}",
                "program_hash": state_hash,
                "program_change": meta["changes"]["summary"],
                "budget_hit": budget.exhausted,
                "stopped_early": stopped or "",
                **({"cost_note": cost_note} if cost_note else {}),
            }
        )
        run.log_artifact(out)
        run.log_artifact(sidecar)
        run.log_program(whole)
    return CompileResult(whole, meta, run.run_id)


def compiled_model(
    run, job: CompileJob, state_hash: str, meta: dict, settings: Settings, out: Path, sidecar: Path
) -> str:
    """The compiled program's LoggedModel, produced by this compile run: its optimizer and settings as
    params, compiled.json and its sidecar as artifacts; every evaluation of the same program links to it."""
    variant = f"compiled:{job.optimizer}" + ("" if job.stage == "program" else f"-{job.stage}")
    model_id = tracking.program_model(
        tracking.model_name(variant, state_hash),
        state_hash,
        run.experiment_id,
        params={
            "optimizer": job.optimizer,
            "stage": job.stage,
            "seed": job.seed,
            "max_demos": job.max_demos,
            "threshold": meta["threshold"],
            "train_examples": meta["train_examples"],
            "val_examples": meta["val_examples"],
            "dataset_hash": meta["dataset_hash"],
            "lm": settings.lm,
        },
        tags={"variant": variant, "compile_run": run.run_id},
        source_run_id=run.run_id,
        files=tuple(f for f in (out, sidecar) if f.is_file()),
    )
    tracking.link_model(run.run_id, model_id, produced=True)
    return model_id


def dev_dataset(items: list[DatasetItem], job: CompileJob, dataset_file: str) -> dict:
    """The dev questions the compile scored its program on, as the Models page names a dataset."""
    dev = split(items, seed=job.seed).dev
    if job.limit is not None and job.stage == "program":
        dev = dev[: job.limit]
    name = Path(dataset_file).name if dataset_file else "questions"
    return {"name": f"{name} dev", "digest": dataset_hash(dev)[:8], "source": dataset_file}


def score_before(
    after: float | None,
    changes: list,
    tracker: BestSoFar,
    state,
    start,
    valset: list,
    metric,
    job: CompileJob,
) -> tuple[float | None, str]:
    """(the starting program's dev score, where it comes from), for the summary's before/after. Unchanged
    program: the after score. MIPROv2 and GEPA score the starting program on the dev split first: their
    score, no request. Otherwise (bootstrap, SIMBA: they score on the train split or nothing) one dev
    evaluation of the starting program, counted with dev scoring (a cache hit where the dev questions were
    asked before), quoted by the compile's --estimate."""
    if after is None:
        return None, "no dev examples"
    if not changes:
        return after, "the saved program is the starting program"
    scored = tracker.valset_score(state)
    if scored is not None:
        return round(scored, 4), f"{job.optimizer} scored the starting program on dev"
    return evaluate_on(
        start, valset, metric, job.threads
    ), "the starting program scored on dev after the compile"


def reflection_model(settings: Settings):
    """GEPA's reflection LM: its own where COLLATE_LM_REFLECTION (or its endpoint or price) is set, else the
    configured default LM."""
    return build_lm(settings, "reflection") if has_own_lm(settings, "reflection") else dspy.settings.lm


def check_budget(job: CompileJob, trainset, valset, catalog, options, predictors: int):
    """Price the compile before spending (optimize/call_estimate.py); refuse a cap that buys no scored
    candidate, or with job.force warn and go on. The estimate, for the sidecar."""
    priced = estimate(job.optimizer, job.stage, trainset, valset, catalog, options, predictors)
    short = priced.shortfall(job.max_calls)
    if short and not job.force:
        raise BadInput(short)
    if short:
        logger.warning(
            "%s (--force: spending it)", short.removesuffix(f", or --force to spend {job.max_calls} anyway")
        )
    return priced


def cost_metrics(stages: dict) -> dict:
    """tokens/ and cost/ figures in all and per stage; not lm_calls: a compile's are the budget's requests."""
    spent = {k: v for k, v in totals(stages).items() if k.startswith(("tokens_", "cost_"))}
    return spent | {k: v for k, v in stage_metrics(stages).items() if k.startswith(("tokens_", "cost_"))}


def salvage(optimizer, student, tracker: BestSoFar, job: CompileJob, budget: Budget):
    """(program, Candidate or None, reason) when the budget stopped the optimizer: the best it had found."""
    cap = budget.ended_line() or f"LM call cap of {job.max_calls} requests reached"
    found = tracker.best()
    if found is not None:
        where = "on the dev set" if found.on_valset else f"on {found.examples} example(s)"
        return (
            adopt(student, found.state),
            found,
            f"{cap}; saved the best candidate found so far ({found.source} {where}: {found.score:.3f})",
        )
    kept = bootstrapped_demos(optimizer, student, job.max_demos) if job.optimizer == "bootstrap" else None
    if kept is not None:
        return kept, None, f"{cap}; saved the demos bootstrapped so far"
    return student, None, f"{cap} before any candidate was scored; saved the starting program"


def budget_line(meta: dict) -> str:
    """'LM requests 300 of 300 (cache hits 41, 12 refused); dev scoring 0 requests (24 cache hits)'."""
    b, dev, start = meta["budget"], meta["dev_scoring"], meta.get("before_scoring") or {}
    cap = f" of {b['max_calls']}" if b["max_calls"] else ""
    refused = f", {b['refused_calls']} refused" if b["refused_calls"] else ""
    before = (
        f"; the starting program's dev scoring {start['lm_calls']} requests ({start['cache_hits']} cache hits)"
        if start.get("lm_calls") or start.get("cache_hits")
        else ""
    )
    return (
        f"LM requests {b['lm_calls']}{cap} (cache hits "
        f"{b['cache_hits']}{refused}); dev scoring {dev['lm_calls']} requests ({dev['cache_hits']} cache hits)"
        + before
    )


def score_line(meta: dict) -> str:
    """'score on 3 dev examples (final_and_process): before 0.412 -> after 0.538 (+0.126)', or why none."""
    scores = meta["scores"]
    after, before = scores["dev_metric"], scores.get("dev_metric_before")
    if after is None:
        return "score: none (no dev examples: the dataset is too small to split; every example trained)"
    where = f"score on {meta['val_examples']} dev example(s) ({scores['metric']})"
    if before is None:
        return f"{where}: after {after:.3f}"
    return f"{where}: before {before:.3f} -> after {after:.3f} ({after - before:+.3f}; before: {scores['before_from']})"


def optimizer_extra(job: CompileJob, threshold: float) -> dict:
    extra = dict(job.extra)
    if job.optimizer in ("bootstrap", "mipro"):
        extra.setdefault("metric_threshold", threshold)
    return extra


def merge_into_analyst(program, tuned, stage: str):
    """A whole Analyst carrying the tuned state: the compiled program itself, or the tuned extractor."""
    if stage == "extractor":
        program.extractor.extract.load_state(tuned.extractor.extract.dump_state())
        return program
    return tuned
