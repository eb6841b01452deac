"""Log a scored run folder to the MLflow store: retried, resumable, never at the cost of the scores.

Why apart from the answering: before, the whole run sat inside one MLflow run context, so a store locked
by another process while the questions were asked ended the command in an 829-line traceback, the scores
never printed and the MLflow run left RUNNING (issue 33). Now the answers and scores are written to the
folder and printed first; then this step logs them, each attempt idempotent (the same run, params logged
once, question traces recorded in OUT/mlflow.json as they land), retried on a store fault
(tracking.with_retries), and on a fault that outlasts the retries the caller says so in one line. The
same step runs later from the folder alone (`collate run ... --log-only`, or the same command again).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluate import tracking
from evaluate.runs.outcome import LineAt, Outcome
from evaluate.runs.question_trace import assessments, question_tree
from evaluate.runs.run_outputs import question_folder
from evaluate.runs.store_record import StoreRecord
from evaluate.tracking.known_cost import known_cost
from programs.lm.progress import stage_metrics

RESULTS = "results.jsonl"
SUMMARY = "summary.json"


@dataclass
class ScoredRun:
    """What one evaluation run logs: its labels, its figures and files, per question its answer and score."""

    out_dir: Path
    name: str
    params: dict
    tags: dict
    questions: dict  # the dataset input: name, digest, context (the split), source
    summary: dict
    answered: list[Outcome]  # each question's trace is read back as it is logged (Outcome.full)
    scores: list[dict]
    gold: dict[str, str] = field(default_factory=dict)  # question id -> its gold answer
    program_file: Path | None = None
    program_state: dict | None = None
    failure: str = ""  # set: the run is ended FAILED with this reason (every question failed)
    traces: bool = True  # one trace per question (evaluate.runs.question_trace)


def store_line(out_dir: Path, reason: str, command: str = "collate run") -> str:
    """The one line a store fault prints: what failed, that nothing is lost, and how to log it later."""
    return (
        f"could not log to the MLflow store {tracking.tracking_uri()} ({reason}), after retrying; the "
        f"scores are kept in {out_dir / SUMMARY}: run the same {command} with --log-only (or again) to log them"
    )


def open_run(out_dir: Path, name: str, tags: dict, on_retry: Callable | None = None) -> tracking.TrackedRun:
    """The folder's MLflow run: the one an earlier, faulted attempt left unfinished, or a new one (RUNNING,
    so the UI shows it while the questions are asked). tracking.StoreFault after the retries."""
    record = StoreRecord.read(out_dir)

    def attempt() -> tracking.TrackedRun:
        found = tracking.reopen_run(record.run_id) if record.pending else None
        return found or tracking.create_run(name, tags)

    run = tracking.with_retries(attempt, on_retry=on_retry)
    record.opened(run.run_id)
    return run


def close_interrupted(out_dir: Path, run_id: str, reason: str) -> None:
    """Ctrl-C: the run ends FAILED with the reason (the rerun that resumes the folder logs a new one); one
    attempt only (the user is waiting), and a store fault then is left unsaid: the interrupt's own line
    is the one the user reads."""
    StoreRecord.read(out_dir).closed()
    try:
        tracking.with_retries(lambda: tracking.finish_run(run_id, reason), waits=())
    except tracking.StoreFault:
        return


def log_scored(run: tracking.TrackedRun, scored: ScoredRun, on_retry: Callable | None = None) -> str:
    """Everything of `scored` into `run`, then the run ended; its id. tracking.StoreFault after the
    retries, with OUT/mlflow.json saying why (the next attempt logs into the same run)."""
    record = StoreRecord.read(scored.out_dir)
    if record.run_id != run.run_id:
        record.opened(run.run_id)
    try:
        tracking.with_retries(lambda: _log(run, scored, record), on_retry=on_retry)
    except tracking.StoreFault as fault:
        record.failed(str(fault))
        raise
    record.closed()
    return run.run_id


def _log(run: tracking.TrackedRun, scored: ScoredRun, record: StoreRecord) -> None:
    from evaluate.runs.run_outputs import table_rows

    out = scored.out_dir
    run.log_params(scored.params, keep_logged=True)
    run.set_tags(scored.tags)
    if scored.questions:
        run.log_dataset(**scored.questions)
    for report in sorted(out.glob("questions/*/audit.html")):
        run.log_artifact(report, artifact_path=f"audit/{report.parent.name}")
    metrics, cost_note = known_cost(
        flat_metrics(scored.summary), scored.summary.get("lm_stages") or {}, scored.summary.get("cost")
    )
    model_id = _program_model(run, scored)
    tracking.link_model(run.run_id, model_id)
    run.log_metrics(metrics, model_id=model_id, dataset=scored.questions)
    if cost_note:
        run.set_tags({"cost_note": cost_note})
    run.log_table(table_rows(scored.answered, scored.scores))
    for name in (RESULTS, "agent_output.json", SUMMARY):
        if (out / name).is_file():
            run.log_artifact(out / name)
    if scored.program_file is not None:
        from programs import compiled

        run.log_artifact(scored.program_file)
        sidecar = compiled.sidecar_path(scored.program_file)
        if sidecar.is_file():
            run.log_artifact(sidecar)
    if scored.program_state is not None:
        run.log_json(scored.program_state, "program/state.json")
    if scored.traces:
        _log_traces(run, scored, record, model_id)
    tracking.finish_run(run.run_id, scored.failure or None)


def _program_model(run: tracking.TrackedRun, scored: ScoredRun) -> str:
    """The LoggedModel of the evaluated program: its compile's (found by the program's hash), or one made
    now for a program no compile logged (the uncompiled Analyst, flat RAG, a file compiled elsewhere)."""
    program_hash = str(scored.tags.get("program_hash") or "")
    variant = str(scored.summary.get("variant") or scored.tags.get("variant") or "program")
    files = (scored.program_file,) if scored.program_file is not None else ()
    return tracking.program_model(
        tracking.model_name(variant, program_hash),
        program_hash,
        run.experiment_id,
        params={"variant": variant, "program_hash": program_hash, "lm": scored.params.get("lm", "")},
        tags={"variant": variant},
        files=tuple(f for f in files if f.is_file()),
        state=scored.program_state if not files else None,
    )


def _log_traces(
    run: tracking.TrackedRun, scored: ScoredRun, record: StoreRecord, model_id: str | None = None
) -> None:
    """One trace per question, with its gold and verdict; those an earlier attempt logged are skipped."""
    done = set(record.traces)
    for answered, score in zip(scored.answered, scored.scores, strict=True):
        if answered.question_id in done:
            continue
        trace_id = tracking.log_trace(
            question_tree(answered.full()),
            run.experiment_id,
            answered.seconds,
            tags={
                "question_id": answered.question_id,
                "variant": scored.summary.get("variant", ""),
                tracking.COMPARE_ON: scored.tags.get(tracking.COMPARE_ON, ""),
            },
            run_id=run.run_id,
            model_id=model_id,
        )
        expectations, feedback = assessments(score, scored.gold.get(answered.question_id))
        tracking.log_assessments(trace_id, expectations, feedback)
        record.traced(answered.question_id)


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


def scored_from_folder(
    out_dir: Path, question_ids: list[str]
) -> tuple[dict, list[Outcome], list[dict]] | None:
    """(summary, answers, scores) of a folder whose run was scored to the end, for logging it as it was
    (its own tokens, cost and seconds, not those of the command that logs it); None when it was not.
    Each answer is its Outcome, read back in full (results.jsonl and its trace.json) when logged."""
    try:
        summary = json.loads((out_dir / SUMMARY).read_text(encoding="utf-8"))
        answered, scores = _rows(out_dir)
    except (OSError, ValueError):
        return None
    if not isinstance(summary, dict) or [a.question_id for a in answered] != question_ids:
        return None
    return summary, answered, scores


def _rows(out_dir: Path) -> tuple[list[Outcome], list[dict]]:
    """Each results.jsonl row's Outcome (its line and trace.json read back when needed) and scores, read
    one row at a time. ValueError when a row is not an answer."""
    answered, scores, offset = [], [], 0
    with (out_dir / RESULTS).open("rb") as f:
        for raw in f:
            if raw.strip():
                row = json.loads(raw)
                if not isinstance(row, dict) or not isinstance(row.get("question_id"), str):
                    raise ValueError(f"{out_dir / RESULTS}: a row without its question id")
                source = LineAt(
                    out_dir / RESULTS, offset, question_folder(out_dir, row["question_id"]) / "trace.json"
                )
                answered.append(Outcome.of(source.load(), source))
                scores.append(row.get("scores") or {})
            offset += len(raw)
    return answered, scores
