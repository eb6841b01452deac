"""Evaluate a program on a dataset: answer every question, score it, track it as ONE MLflow run.

    python -m evaluate.run --dataset DS.json --index DIR [--program compiled.json | flat-rag | flat-rag-plain]
                           [--limit N] [--split test --seed S] [--out DIR] [--concurrency N] [--lm MODEL]

--program omitted = the uncompiled Analyst; a path = the Analyst with that compiled state; flat-rag =
the paper's flat-RAG baseline (flat-rag-plain: without document metadata in the prompt). The three
variants log to the same MLflow experiment, side by side. Gold fields are stripped before the
program sees an item; one failing question is recorded with its error and the run goes on.
Each run keeps its own fact store (OUT/facts.sqlite, unless COLLATE_FACT_STORE names one), so no
variant reuses another variant's extractions. The summary (summary.json, the console, MLflow metrics)
carries the run's LM calls, LM errors and adapter parse failures per stage (lm_parse_failures_<stage>, ...).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from evaluate import tracking
from evaluate.dataset import DatasetItem, dataset_hash, strip_gold
from evaluate.matching.judge import AnswerJudge, JudgeCache
from evaluate.matching.process import process_scores, records_to_facts
from evaluate.matching.scoring import headline, score_items
from evaluate.runs import store_log
from evaluate.runs.answering import answer_all
from evaluate.runs.job import RunJob
from evaluate.runs.journal import AnswerJournal
from evaluate.runs.outcome import Outcome
from evaluate.runs.run_outputs import verification_metrics, write_outputs, write_reports
from evaluate.runs.store_log import flat_metrics  # noqa: F401 (evaluation.flat_metrics, as before)
from programs import compiled
from programs.lm.cost_report import cost_figures, cost_lines
from programs.lm.progress import RunCounts, current_watch, totals, trouble_line
from programs.lm.settings import Settings, build_lm
from programs.lm.spend import Budget, cut_by_budget, enforced
from programs.stages.cascade import cascade_line, cascade_summary
from signatures.errors import BadInput

logger = logging.getLogger(__name__)

FLAT_VARIANTS = {"flat-rag": True, "flat-rag-plain": False}  # name -> with document metadata
UNCOMPILED = "uncompiled"


@dataclass
class RunResult:
    summary: dict
    out_dir: Path
    run_id: str
    answered: list[Outcome]  # each question as the run kept it; .full() reads the rest back


def variant_name(program_arg: str | None, origin: dict | None = None) -> str:
    """uncompiled | flat-rag | compiled:<optimizer> (compiled:<optimizer>-extractor for an extractor-only compile)."""
    if not program_arg:
        return UNCOMPILED
    if program_arg in FLAT_VARIANTS:
        return program_arg
    if origin and origin.get("optimizer"):
        stage = origin.get("stage") or "program"
        return f"compiled:{origin['optimizer']}" + ("" if stage == "program" else f"-{stage}")
    return f"compiled:{Path(program_arg).stem}"


def run_name(variant: str, program_hash: str, part: str, n: int) -> str:
    """'compiled:bootstrap 3f9a1c2 test n=8': two compiled files of one optimizer differ by their hash."""
    return f"{variant} {program_hash} {part} n={n}"


def run_labels(
    variant: str, state_hash: str, items_hash: str, part: str, n: int, dataset_file: str | None = None
) -> tuple[str, dict, dict]:
    """(name, tags, dataset input) of an evaluation run: what the runs table and the headline view show of it."""
    file_name = Path(dataset_file).name if dataset_file else "questions"
    tags = {
        **tracking.EVALUATION,  # kind=evaluation: the rows of the headline view
        "variant": variant,
        "split": part,
        "program_hash": state_hash,
        "optimizer": "none",
        "dataset_hash": items_hash,
        # the headline view's groups, labelled in a narrow column: split and hash first, the file after
        tracking.COMPARE_ON: f"{part} {items_hash[:8]} {file_name}",
    }
    questions = {  # the default runs view's Dataset column, and the Models page's: file and split, hash
        "name": f"{file_name} {part}",
        "digest": items_hash[:8],
        "context": part,
        "source": str(Path(dataset_file).resolve()) if dataset_file else "",
    }
    return run_name(variant, state_hash, part, n), tags, questions


def variant_tags(program_arg: str | None, origin: dict) -> dict:
    """Tags every evaluation run carries, so the runs table tells the variants apart (and links the compile)."""
    kind = "flat-rag" if program_arg in FLAT_VARIANTS else "analyst"
    return {
        "program": kind,
        "optimizer": origin.get("optimizer") or "none",
        "stage": origin.get("stage") or "",
        "compiled_from": origin.get("mlflow_run_id") or "",
        "compiled_on_dataset": origin.get("dataset_hash") or "",
    }


def build_variant(program_arg: str | None, settings: Settings, store, out_dir: Path):
    """The program to evaluate, with a fact store private to this run."""
    if program_arg in FLAT_VARIANTS:
        from programs.flat_rag import build_flat_rag

        return build_flat_rag(settings, store, with_metadata=FLAT_VARIANTS[program_arg])
    from programs.analyst import build_program

    program = build_program(settings, store)  # settings.fact_store: this run's own (see main)
    if program_arg:
        if not Path(program_arg).is_file():
            raise BadInput(
                f"no compiled program at {program_arg}: pass a compiled.json from optimize.compile, "
                f"'flat-rag', or omit --program for the uncompiled program"
            )
        compiled.load(program, program_arg)
    return program


def make_judge(settings: Settings, out_dir: Path) -> AnswerJudge | None:
    """The judge named by COLLATE_LM_JUDGE / --judge ("self": the model under test, tagged), or None:
    with none, what the matcher cannot decide is reported undecided (issue 21: no model grades itself
    unless asked to)."""
    model = settings.judge_model()
    if not model:
        return None
    judge = AnswerJudge(
        cache=JudgeCache(out_dir / "judge_cache.sqlite"), model=model, self_judged=settings.self_judged()
    )
    judge.set_lm(build_lm(settings.replace(temperature=0.0), "judge"))
    watch = current_watch()
    if watch is not None:  # its calls are counted as the judge's, apart from the program's stages
        watch.label(judge, "judge")
    return judge


def verified_process(items: list[DatasetItem], answered) -> dict[str, float]:
    """Process accuracy counting only facts that passed the check against their page: a value flagged
    in a record's `unverified` column counts as not extracted (process_verified_*, beside process_*)."""
    by_question = {}
    for a in answered:
        if a.records:
            kept = []
            for record in a.records:
                flagged = [f for f in str(record.get("unverified") or "").split(",") if f]
                kept.append(
                    {k: (None if k in flagged else v) for k, v in record.items() if k != "unverified"}
                )
            by_question[a.question_id] = records_to_facts(kept)
    if not by_question:
        return {}
    scores = process_scores(items, by_question)
    return {
        f"process_verified_{scope}_{name}": value
        for scope, values in (("macro", scores.macro), ("micro", scores.micro))
        for name, value in values.items()
    }


def evaluate_program(
    program,
    items: list[DatasetItem],
    job: RunJob,
    *,
    settings: Settings,
    judge: AnswerJudge | None = None,
    journal: AnswerJournal | None = None,
    store=None,
    on_scored: Callable[[dict], None] | None = None,
    on_retry: Callable[[str, float], None] | None = None,
) -> RunResult:
    """Answer, score, write the run folder and log one MLflow run, as `job` says. LMs must already be
    configured.

    `journal`: OUT/answers.jsonl (evaluate.runs.resume): the questions it holds are not asked again, each new
    answer is appended as it comes, and the scores, files and MLflow run cover both. `store`: the index
    read, whose pages the audit reports show (none: reports without pages).
    On Ctrl-C the MLflow run ends FAILED, tagged `failure: interrupted ...`, and KeyboardInterrupt is
    raised again for the command to say what was kept.
    `on_scored(summary)` runs once the scores are on disk, before the store is written; `on_retry(reason,
    wait)` at each store fault that is retried. tracking.StoreFault when the store refuses the run after
    the retries: the folder holds everything, and OUT/mlflow.json the run to finish (evaluate.runs.store_log).
    """
    out_dir, variant, budget, dataset_file = job.out_dir, job.variant, job.budget, job.dataset_file
    out_dir.mkdir(parents=True, exist_ok=True)
    identity = run_identity(job, program, items, settings, judge)
    # Opened first, so the UI shows the run while its questions are asked; only the store's own calls are
    # inside a retry, and nothing below waits on the store until the scores are on disk and printed.
    run = store_log.open_run(out_dir, identity.name, identity.tags, on_retry=on_retry)
    try:
        resumed = journal.answered(item.question_id for item in items) if journal is not None else {}
        lm_counts = RunCounts(program)  # this run's calls only, not an earlier run's in this process
        start = time.perf_counter()
        with tracking.dspy_autolog(job.lm_traces):
            with enforced(budget) if budget is not None else contextlib.nullcontext():
                answers = answer_all(
                    program, [strip_gold(item) for item in items], job.concurrency, job.progress, journal
                )
            answered = answers.answered
            predictions = [
                {
                    "question_id": a.question_id,
                    "model_answer": a.answer,
                    "records": a.records,
                    "error": a.error,
                }
                for a in answered
            ]
            report = score_items(items, predictions, judge=judge).as_dict()
    except KeyboardInterrupt:  # ended FAILED and tagged why: never left RUNNING, told apart from a crash
        store_log.close_interrupted(out_dir, run.run_id, "interrupted (Ctrl-C): the same command resumes it")
        raise
    seconds = time.perf_counter() - start
    lm_stages = lm_counts.stages()
    per_question = {q["question_id"]: q for q in report.pop("per_question")}
    scores = [_question_scores(per_question.get(a.question_id)) for a in answered]
    tokens = sum(
        int(v.get("total_tokens", 0) or 0)
        for usage in [a.usage for a in answered if a.question_id not in resumed] + [answers.shared_usage]
        for v in (usage or {}).values()
        if isinstance(v, dict)
    )
    summary = {
        **report,
        **verification_metrics(answered),
        **verified_process(items, answered),
        "errors": sum(a.error is not None for a in answered),
        "resumed": len(resumed),  # answered by an earlier, stopped run into the same folder
        "skipped": len(job.skipped),  # blank questions of the dataset, not run (evaluate.dataset)
        "skipped_ids": list(job.skipped),
        "seconds": round(seconds, 2),
        "total_tokens": tokens,
        **totals(lm_stages),
        # cascade_* keys, only when one ran; this run's documents only, like its cost
        **cascade_summary([{"cascade": a.cascade} for a in answered if a.question_id not in resumed]),
        "lm_stages": lm_stages,
        "cost": cost_figures(lm_stages, answers.documents_from_store, settings),
        **budget_figures(budget, answered),
        "variant": variant,
        "run_id": run.run_id,
        "tracking_uri": tracking.tracking_uri(),
        "inputs": run_inputs(identity.params, settings, dataset_file),  # nested: no metric of its own
    }
    write_outputs(out_dir, answered, scores, summary, rag=variant in FLAT_VARIANTS)
    write_reports(out_dir, answered, getattr(store, "pdf_path", None), getattr(store, "ocr_lines", None))
    if on_scored is not None:  # the scores are printed before the store is written (it may be locked)
        on_scored(summary)
    scored = scored_run(job, identity, program, items, summary, answered, scores)
    store_log.log_scored(run, scored, on_retry=on_retry)
    return RunResult(summary, out_dir, run.run_id, answered)


@dataclass(frozen=True)
class RunIdentity:
    """How the store shows a run: its name, tags, dataset input and params."""

    name: str
    tags: dict
    questions: dict  # the dataset input: name, digest, context (the split), source
    params: dict


def run_identity(job: RunJob, program, items: list[DatasetItem], settings: Settings, judge) -> RunIdentity:
    """The run's name, tags, dataset input and params, from its job, program, questions and settings."""
    name, tags, questions = run_labels(
        job.variant,
        compiled.program_hash(program),
        dataset_hash(items),
        job.part,
        len(items),
        job.dataset_file,
    )
    params = run_params(settings, job.variant, items, job.concurrency, judge, job.params)
    return RunIdentity(name, {**tags, **judge_tags(judge), **job.tags}, questions, params)


def scored_run(
    job: RunJob,
    identity: RunIdentity,
    program,
    items: list[DatasetItem],
    summary: dict,
    answered: list[Outcome],
    scores: list[dict],
) -> store_log.ScoredRun:
    """What a scored run logs to the store, the one builder of it: for the run that has just scored its
    questions (evaluate_program) and for a scored folder logged later (`collate run --log-only`, or a
    rerun after a store fault), so the two log the same run. Before, each built its own and they differed
    (the later one's failure reason lacked the first question's error)."""
    return store_log.ScoredRun(
        job.out_dir,
        identity.name,
        identity.params,
        identity.tags,
        identity.questions,
        summary,
        answered,
        scores,
        gold={item.question_id: item.final_answer for item in items},
        program_file=job.program_file,
        program_state=program_state(program),
        failure=f"every question failed, e.g. {answered[0].error}" if all_failed(summary) else "",
        traces=job.autolog,
    )


def run_params(settings: Settings, variant: str, items, concurrency: int, judge, params: dict | None) -> dict:
    """Every setting of the run, and what it ran on: the MLflow run's params."""
    return {
        **settings.as_params(),
        "variant": variant,
        "questions": len(items),
        "dataset_hash": dataset_hash(items),
        "question_concurrency": concurrency,
        "judge": settings.model_for("judge") if judge is not None else "",
        **(params or {}),
    }


def judge_tags(judge) -> dict:
    return {"self_judged": str(bool(judge is not None and judge.self_judged)).lower()}


def program_state(program) -> dict | None:
    """The program's state (demos + instructions per predictor) as JSON data; never a pickle."""
    try:
        return program.dump_state()
    except Exception as exc:  # a program that cannot dump its state must not sink the run
        logger.warning("could not dump the program state: %s", exc)
        return None


def budget_figures(budget: Budget | None, answered) -> dict:
    """The caps of a run and, when one ended it, which one and the questions it cut (their LM requests
    were refused: spend.BudgetReached in their error)."""
    if budget is None:
        return {}
    cut = [a.question_id for a in answered if cut_by_budget(a.error)]
    return {
        **{k: v for k, v in budget.summary().items() if k not in ("lm_calls", "cache_hits")},
        "budget_line": budget.ended_line(),
        "budget_cut": cut,
    }


def run_inputs(params: dict, settings: Settings, dataset: str | None) -> dict:
    """What re-scoring the run folder needs (python -m evaluate.score RUN_DIR): the dataset file, the
    question selection and the models under test (so `--judge self` and self-judging can be told)."""
    return {
        "dataset": str(Path(dataset).resolve()) if dataset else "",
        "split": params.get("split", "all"),
        "seed": params.get("seed", 0),
        "limit": params.get("limit") or None,
        "lm": settings.lm,
        "models_under_test": settings.models_under_test(),
    }


def all_failed(summary: dict) -> bool:
    """Every question of the run failed (its program raised or returned an error): nothing was answered."""
    return summary["n"] > 0 and summary["failed_answers"] == summary["n"]


def _question_scores(score: dict | None) -> dict:
    if score is None:
        return {"final_correct": None, "decided_by": "undecided"}
    process = score.get("process") or {}
    return {
        "final_correct": score["correct"],
        "decided_by": score["decided_by"],
        "final_reason": score["reason"],
        "cell_accuracy": process.get("cell_accuracy"),
        "row_accuracy": process.get("row_accuracy"),
        "column_accuracy": process.get("column_accuracy"),
        "full": score.get("full"),
        "wrong_cells": process.get("wrong_cells", []),
    }


def format_summary(summary: dict) -> str:
    """The run's figures: headline accuracy and coverage, the settled-only figure, process accuracy,
    and the LM calls per stage with their errors and parse failures."""
    macro, micro = summary.get("process_macro") or {}, summary.get("process_micro") or {}
    text = (
        f"{summary['variant']}: {headline(summary)}, errors={summary['errors']}\n"
        f"process cell/row/column macro {macro.get('cell', 0):.3f}/{macro.get('row', 0):.3f}/"
        f"{macro.get('column', 0):.3f}  micro {micro.get('cell', 0):.3f}/{micro.get('row', 0):.3f}/"
        f"{micro.get('column', 0):.3f}  full {summary.get('full_accuracy', 0):.3f}  ({summary['seconds']} s)"
    )
    skipped = summary.get("skipped_ids") or []
    if skipped:
        shown = ", ".join(skipped[:10]) + (", ..." if len(skipped) > 10 else "")
        text += (
            f"\nskipped {len(skipped)} question{'' if len(skipped) == 1 else 's'} with a blank text ({shown}): "
            "write their question in the dataset to include them"
        )
    lm = lm_line(summary)
    text = f"{text}\n{lm}" if lm else text
    figures = summary.get("cost") or None  # made with the run's settings: they name a model of unknown price
    cost = cost_lines(
        summary.get("lm_stages") or {},
        int((figures or {}).get("facts_saved_calls", 0)),
        figures=figures if figures and "price_known" in figures else None,
    )
    cascade = cascade_line(summary)
    return "\n".join([text, *cost, *([cascade] if cascade else []), *budget_lines(summary)])


def budget_lines(summary: dict) -> list[str]:
    """'budget: the --max-usd budget of $0.5 ended it (...); 3 questions not answered: q7, q8, q9 ...'."""
    if not summary.get("budget_line"):
        return []
    cut = summary.get("budget_cut") or []
    shown = ", ".join(cut[:10]) + (", ..." if len(cut) > 10 else "")
    return [
        f"budget: {summary['budget_line']}"
        + (f"; {len(cut)} question{'' if len(cut) == 1 else 's'} not answered: {shown}" if cut else "")
    ]


def lm_line(summary: dict) -> str:
    """'LM calls 41 (answer 3, extractor 30, planner 3, ...), errors 0, parse failures 1: planner 1
    parse failure of 3 calls', or '' for a summary without LM figures."""
    stages = summary.get("lm_stages")
    if stages is None:
        return ""
    per_stage = ", ".join(f"{stage} {c['calls']}" for stage, c in stages.items())
    trouble = trouble_line(stages).removeprefix("LM: ")
    return (
        f"LM calls {summary.get('lm_calls', 0)}"
        + (f" ({per_stage})" if per_stage else "")
        + f", errors {summary.get('lm_errors', 0)}, parse failures {summary.get('lm_parse_failures', 0)}"
        + (f": {trouble}" if trouble else "")
    )
