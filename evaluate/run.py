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

import argparse
import json
import logging
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluate import tracking
from evaluate.answering import Answered, answer_all
from evaluate.dataset import DatasetError, DatasetItem, dataset_hash, load_dataset, split, strip_gold
from evaluate.judge import AnswerJudge, JudgeCache
from evaluate.process import process_scores, records_to_facts
from evaluate.run_outputs import table_rows, verification_metrics, write_outputs, write_reports
from evaluate.score import headline, score_items, unanswered_warnings
from programs.runtime.cli_inputs import BadInput, add_lm_arguments, lm_overrides, open_store, parse_cli
from programs.runtime.lm_progress import RunCounts, current_watch, stage_metrics, totals, trouble_line
from programs.runtime.settings import NoLMConfigured, Settings, build_lm, configure

logger = logging.getLogger(__name__)

FLAT_VARIANTS = {"flat-rag": True, "flat-rag-plain": False}  # name -> with document metadata
UNCOMPILED = "uncompiled"


@dataclass
class RunResult:
    summary: dict
    out_dir: Path
    run_id: str
    answered: list[Answered]


def compile_origin(program_file: Path) -> dict:
    """What optimize.compile wrote beside a compiled program (compiled.meta.json), or {} when there is none.

    Read here, not through optimize/ (evaluate/ must not import it): only the keys that name a variant.
    """
    sidecar = sidecar_of(program_file)
    try:
        meta = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        logger.warning(
            "no readable %s beside %s: the run cannot say which compile it came from",
            sidecar.name,
            program_file,
        )
        return {}
    return {k: meta.get(k) for k in ("optimizer", "stage", "mlflow_run_id", "dataset_hash")}


def sidecar_of(program_file: Path) -> Path:
    """compiled.json -> compiled.meta.json, where optimize.compile writes what it did."""
    return program_file.with_name(program_file.stem + ".meta.json")


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
        path = Path(program_arg)
        if not path.is_file():
            raise BadInput(
                f"no compiled program at {path}: pass a compiled.json from optimize.compile, "
                f"'flat-rag', or omit --program for the uncompiled program"
            )
        try:
            program.load(str(path))
        except Exception as exc:
            raise BadInput(
                f"cannot load {path} into the Analyst ({exc}); recompile it with optimize.compile"
            ) from exc
    return program


def select_items(items: list[DatasetItem], part: str, seed: int, limit: int | None) -> list[DatasetItem]:
    if part != "all":
        items = getattr(split(items, seed=seed), part)
    if limit is not None:
        if limit < 1:
            raise BadInput(f"--limit must be at least 1 (got {limit})")
        items = items[:limit]
    if not items:
        raise BadInput(f"no questions to run (split {part!r}); use --split all or a larger dataset")
    return items


def make_judge(settings: Settings, out_dir: Path) -> AnswerJudge:
    model = settings.model_for("judge") or ""
    judge = AnswerJudge(cache=JudgeCache(out_dir / "judge_cache.sqlite"), model=model)
    judge.set_lm(build_lm(settings.replace(temperature=0.0), "judge"))
    watch = current_watch()
    if watch is not None:  # its calls are counted as the judge's, apart from the program's stages
        watch.label(judge, "judge")
    return judge


def flat_metrics(report: dict) -> dict[str, float]:
    """The scalar figures of a score report, process ones flattened (process_macro_cell, ...), and the
    LM figures per stage (lm_calls_planner, lm_parse_failures_extractor, ...)."""
    metrics: dict[str, Any] = {
        k: v for k, v in report.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
    }
    for scope in ("process_macro", "process_micro"):
        for name, value in (report.get(scope) or {}).items():
            metrics[f"{scope}_{name}"] = value
    metrics.update(stage_metrics(report.get("lm_stages") or {}))
    return metrics


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
    *,
    variant: str,
    settings: Settings,
    out_dir: Path,
    concurrency: int = 2,
    judge: AnswerJudge | None = None,
    params: dict | None = None,
    autolog: bool = True,
    progress: bool = True,
    program_file: Path | None = None,
    tags: dict | None = None,
    pdf_lookup=None,
    ocr_lookup=None,
) -> RunResult:
    """Answer, score, write the run folder and log one MLflow run. LMs must already be configured."""
    out_dir.mkdir(parents=True, exist_ok=True)
    all_params = {
        **settings.as_params(),
        "variant": variant,
        "questions": len(items),
        "dataset_hash": dataset_hash(items),
        "question_concurrency": concurrency,
        "judge": settings.model_for("judge") if judge is not None else "",
        **(params or {}),
    }
    run_tags = {
        "variant": variant,
        "optimizer": "none",
        "dataset_hash": all_params["dataset_hash"],
        **(tags or {}),
    }
    with tracking.start_run(f"{variant} n={len(items)}", params=all_params, tags=run_tags) as run:
        lm_counts = RunCounts(program)  # this run's calls only, not an earlier run's in this process
        start = time.perf_counter()
        with tracking.dspy_autolog(autolog):
            answered = answer_all(program, [strip_gold(item) for item in items], concurrency, progress)
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
        seconds = time.perf_counter() - start
        lm_stages = lm_counts.stages()
        per_question = {q["question_id"]: q for q in report.pop("per_question")}
        scores = [_question_scores(per_question.get(a.question_id)) for a in answered]
        tokens = sum(
            int(v.get("total_tokens", 0) or 0)
            for a in answered
            for v in (a.usage or {}).values()
            if isinstance(v, dict)
        )
        summary = {
            **report,
            **verification_metrics(answered),
            **verified_process(items, answered),
            "errors": sum(a.error is not None for a in answered),
            "seconds": round(seconds, 2),
            "total_tokens": tokens,
            **totals(lm_stages),
            "lm_stages": lm_stages,
            "variant": variant,
            "run_id": run.run_id,
            "tracking_uri": tracking.tracking_uri(),
        }
        paths = write_outputs(out_dir, answered, scores, summary, rag=variant in FLAT_VARIANTS)
        for report_path in write_reports(out_dir, answered, pdf_lookup, ocr_lookup):
            run.log_artifact(report_path, artifact_path=f"audit/{report_path.parent.name}")
        run.log_metrics(flat_metrics(summary))
        run.log_table(table_rows(answered, scores))
        for path in paths.values():
            run.log_artifact(path)
        if program_file is not None:
            run.log_artifact(program_file)
            sidecar = sidecar_of(program_file)
            if sidecar.is_file():
                run.log_artifact(sidecar)
        run.log_program(program)
    return RunResult(summary, out_dir, run.run_id, answered)


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
    lm = lm_line(summary)
    return f"{text}\n{lm}" if lm else text


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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m evaluate.run", description=__doc__.split("\n")[0])
    p.add_argument("--dataset", required=True, help="MuDABench-format dataset.json (or its folder)")
    p.add_argument("--index", required=True, help="index folder built by python -m retrievers.build")
    p.add_argument(
        "--program", help="compiled.json, 'flat-rag' or 'flat-rag-plain'; omitted = uncompiled Analyst"
    )
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument(
        "--split",
        choices=["all", "train", "dev", "test"],
        default="all",
        help="evaluate one part of the seeded, doctype-stratified split (default all)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the split (default 0)")
    p.add_argument("--out", help="run folder (default runs/<variant>-<time>)")
    p.add_argument("--concurrency", type=int, default=2, help="questions answered at once (default 2)")
    add_lm_arguments(p)
    p.add_argument("--judge", help="judge model (COLLATE_LM_JUDGE; default the main LM)")
    p.add_argument("--no-judge", action="store_true", help="leave what the matcher cannot decide undecided")
    p.add_argument("--no-autolog", action="store_true", help="do not write MLflow traces of every LM call")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("-v", "--verbose", action="store_true")
    return p


def main(argv=None) -> int:
    args = parse_cli(build_parser(), argv)
    if isinstance(args, int):  # argparse already printed its one-line reason (or --help)
        return args
    program_file = Path(args.program) if args.program and args.program not in FLAT_VARIANTS else None
    origin = compile_origin(program_file) if program_file is not None and program_file.is_file() else {}
    variant = variant_name(args.program, origin)
    out_dir = Path(args.out or f"runs/{variant.replace(':', '-')}-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        if args.concurrency < 1:
            raise BadInput(f"--concurrency must be at least 1 (got {args.concurrency})")
        settings = Settings.from_env({**lm_overrides(args), "lm_judge": args.judge})
        if (
            not settings.fact_store
        ):  # a run keeps its own facts (never scored on another run's), logged with it
            settings = settings.replace(fact_store=str(out_dir / "facts.sqlite"))
        items = select_items(load_dataset(args.dataset), args.split, args.seed, args.limit)
        store = open_store(args.index)
        check_coverage(items, store, args.dataset, args.index)
        program = build_variant(args.program, settings, store, out_dir)
        configure(settings, program)
        judge = None if args.no_judge else make_judge(settings, out_dir)
    except (BadInput, DatasetError, NoLMConfigured, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    params = {
        "dataset": str(args.dataset),
        "index": str(args.index),
        "program": args.program or "",
        "split": args.split,
        "seed": args.seed,
        "limit": args.limit or "",
        "out": str(out_dir),
    }
    result = evaluate_program(
        program,
        items,
        variant=variant,
        settings=settings,
        out_dir=out_dir,
        concurrency=args.concurrency,
        judge=judge,
        params=params,
        autolog=not args.no_autolog,
        progress=not args.no_progress,
        program_file=program_file,
        tags=variant_tags(args.program, origin),
        pdf_lookup=getattr(store, "pdf_path", None),
        ocr_lookup=getattr(store, "ocr_lines", None),
    )
    print(format_summary(result.summary))
    for line in unanswered_warnings(result.summary, f"all in {out_dir / 'summary.json'}"):
        print(line, file=sys.stderr)
    print(f"run folder: {out_dir}  (agent_output.json, results.jsonl, summary.json)")
    ui = tracking.ui_command(experiment_id=tracking.experiment_id())
    print(f"MLflow run {result.run_id} in {tracking.tracking_uri()}; open the UI with:\n  {ui}")
    return 0


def check_coverage(items: list[DatasetItem], store, dataset: str, index: str) -> None:
    """None of the dataset's documents indexed is a setup mistake; some missing is reported per question."""
    indexed = {doc.id for doc in store.catalog.documents()}
    wanted = {doc_id for item in items for doc_id in item.doc_ids}
    missing = wanted - indexed
    if wanted and missing == wanted:
        raise BadInput(
            f"the index {index} holds none of the {len(wanted)} documents of {dataset}: build it with "
            f"python -m retrievers.build --catalog {dataset} --pdf-dir PDFS --index {index}"
        )
    if missing:
        logger.warning(
            "%d of %d documents are not in the index; questions over them will fail",
            len(missing),
            len(wanted),
        )


if __name__ == "__main__":
    sys.exit(main())
