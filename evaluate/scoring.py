"""Score saved answers against a MuDABench-format dataset; no program and, for what the matcher
decides, no LM.

    python -m evaluate.score --dataset DS.json --predictions PRED.json [--judge MODEL] [--records REC.json] --json

PRED.json: a list of {question_id, model_answer}, optionally with `facts` ({doc_id: {value_key:
value}}) or `records` (the program's rows, `id` attached) per question for process accuracy, and
`error` (the question failed). REC.json (optional): the same facts or records kept apart, as
{question_id: facts-or-records}.

Every question of the dataset counts: one without a prediction, with an empty answer or a failed
one is unanswered, and unanswered counts as wrong in the headline `final_accuracy`. Beside it,
`final_accuracy_answered` is the settled-only figure over the answered questions, and `coverage`
says how many were answered: a partial run never scores perfect.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from evaluate.final_match import final_match
from evaluate.judge import AnswerJudge
from evaluate.metrics import full_correct
from evaluate.process import aggregate, records_to_facts, score_question
from programs.runtime.settings import Settings, build_lm
from retrievers.dataset import DatasetItem, dataset_hash, read_json_file

logger = logging.getLogger(__name__)


class InputError(ValueError):
    """Bad predictions or records; the message names the file and the fix."""


UNANSWERED = ("empty", "failed")  # decided_by of an answer nobody scores: counted wrong, shown apart
MAX_IDS_SHOWN = 10  # question ids printed per warning line; --json and summary.json list them all


@dataclass
class QuestionScore:
    question_id: str
    correct: bool | None
    decided_by: str  # matcher | judge | undecided, or empty | failed (unanswered: wrong, not scored)
    reason: str
    model_answer: str
    process: dict | None = None
    full: bool | None = None


@dataclass
class ScoreReport:
    per_question: list[QuestionScore] = field(default_factory=list)
    dataset_hash: str = ""
    process_macro: dict | None = None
    process_micro: dict | None = None
    question_ids: list[str] = field(default_factory=list)  # every question of the dataset, in order

    def as_dict(self) -> dict:
        scored = {q.question_id for q in self.per_question}
        ids = self.question_ids or [q.question_id for q in self.per_question]
        missing = [qid for qid in ids if qid not in scored]
        n = len(ids)
        kinds = ("matcher", "judge", "undecided", *UNANSWERED)
        by = {k: [q.question_id for q in self.per_question if q.decided_by == k] for k in kinds}
        correct = sum(q.correct is True for q in self.per_question)
        settled = len(by["matcher"]) + len(by["judge"])
        answered = settled + len(by["undecided"])
        counted = n - len(by["undecided"])  # settled answers plus every unanswered question
        report: dict[str, Any] = {
            # headline: unanswered questions (missing, empty, failed) count as wrong; undecided are left out
            "final_accuracy": correct / counted if counted else 0.0,
            "final_accuracy_answered": correct / settled
            if settled
            else 0.0,  # settled-only, answered questions
            "final_accuracy_undecided_as_wrong": correct / n if n else 0.0,  # the conservative figure
            "n": n,
            "answered": answered,
            "coverage": answered / n if n else 0.0,
            "correct": correct,
            "decided": len(by["matcher"]),
            "judged": len(by["judge"]),
            "undecided": len(by["undecided"]),
            "missing": len(missing),
            "empty_answers": len(by["empty"]),
            "failed_answers": len(by["failed"]),
            "missing_ids": missing,
            "empty_ids": by["empty"],
            "failed_ids": by["failed"],
            "dataset_hash": self.dataset_hash,
        }
        if self.process_macro is not None:
            fulls = [q.full for q in self.per_question if q.full is not None]
            report["process_macro"] = self.process_macro
            report["process_micro"] = self.process_micro
            report["full_accuracy"] = sum(fulls) / len(fulls) if fulls else 0.0
        report["per_question"] = [asdict(q) for q in self.per_question]
        return report


def _some(ids: list[str]) -> str:
    shown = ", ".join(ids[:MAX_IDS_SHOWN])
    return shown + (f" ... and {len(ids) - MAX_IDS_SHOWN} more" if len(ids) > MAX_IDS_SHOWN else "")


def headline(report: dict) -> str:
    """Two lines: the headline accuracy with coverage, then the settled-only figure over the answered."""
    n, undecided = report["n"], report["undecided"]
    settled = report["decided"] + report["judged"]
    return (
        f"final accuracy {report['final_accuracy']:.3f} over {n - undecided} of {n} questions "
        f"({n - report['answered']} unanswered counted wrong, {undecided} undecided left out); "
        f"coverage {report['answered']}/{n} answered, {report['failed_answers']} failed ({report['coverage']:.3f})\n"
        f"settled-only final accuracy {report['final_accuracy_answered']:.3f} over the {settled} settled of "
        f"{report['answered']} answered ({report['decided']} by the matcher, {report['judged']} by the judge, "
        f"{undecided} undecided); {report['final_accuracy_undecided_as_wrong']:.3f} counting undecided as wrong "
        f"too, n={n}"
    )


def unanswered_warnings(report: dict, listed: str = "--json lists them all") -> list[str]:
    """One line per kind of unanswered question, naming the first ids: never scored quietly."""
    n, lines = report["n"], []
    if report["missing"]:
        lines.append(
            f"warning: {report['missing']} of {n} questions have no prediction, counted wrong: "
            f"{_some(report['missing_ids'])} ({listed})"
        )
    if report["empty_answers"]:
        lines.append(
            f"warning: {report['empty_answers']} of {n} answers are empty, counted wrong (not decided by "
            f"the matcher): {_some(report['empty_ids'])} ({listed})"
        )
    if report["failed_answers"]:
        lines.append(
            f"warning: {report['failed_answers']} of {n} questions failed, counted wrong: "
            f"{_some(report['failed_ids'])} ({listed}; each error is in per_question)"
        )
    return lines


def _as_facts(value: Any, where: str) -> dict[str, dict[str, Any]]:
    if isinstance(value, list):
        if not all(isinstance(r, Mapping) for r in value):
            raise InputError(f"{where}: records must be a list of objects with an `id` key")
        return records_to_facts(value)
    if isinstance(value, Mapping) and all(isinstance(v, Mapping) for v in value.values()):
        return {str(k): dict(v) for k, v in value.items()}
    raise InputError(
        f"{where}: facts must be {{doc_id: {{value_key: value}}}} or a list of records with `id`"
    )


def load_predictions(path: str | Path) -> list[dict]:
    path = Path(path)
    raw = read_json_file(
        path,
        InputError,
        missing="no such predictions file; pass a JSON list of {question_id, model_answer}",
        expected="a list of {question_id, model_answer}",
    )
    if not isinstance(raw, list):
        raise InputError(
            f"{path}: expected a JSON list of {{question_id, model_answer}}, got {type(raw).__name__}"
        )
    for i, entry in enumerate(raw):
        if not isinstance(entry, Mapping) or "question_id" not in entry or "model_answer" not in entry:
            raise InputError(f"{path} item {i}: each prediction needs question_id and model_answer")
    check_predictions(raw, str(path))
    return raw


def check_predictions(predictions: list[dict], where: str = "the predictions") -> None:
    """No predictions, or two answers to one question, cannot be scored: say which and how to fix it."""
    if not predictions:
        raise InputError(
            f"{where}: no predictions to score (an empty list); pass a list of "
            "{question_id, model_answer}, one per answered question"
        )
    repeats = {qid: k for qid, k in Counter(str(p["question_id"]) for p in predictions).items() if k > 1}
    if repeats:
        qid, k = next(iter(repeats.items()))
        more = f" ({len(repeats)} ids repeat)" if len(repeats) > 1 else ""
        raise InputError(
            f"{where}: question id {qid} appears {k} times{more}; keep one answer per question "
            "(remove the repeats) and score again"
        )


def load_records(path: str | Path) -> dict[str, dict[str, dict[str, Any]]]:
    """REC.json: {question_id: facts or records} or a list of {question_id, facts|records}."""
    path = Path(path)
    raw = read_json_file(
        path,
        InputError,
        missing="no such records file; pass {question_id: {doc_id: {value_key: value}}}",
        expected="{question_id: facts-or-records}",
    )
    if isinstance(raw, list):
        raw = {
            str(e.get("question_id")): e.get("facts", e.get("records")) for e in raw if isinstance(e, Mapping)
        }
    if not isinstance(raw, Mapping):
        raise InputError(f"{path}: expected {{question_id: facts-or-records}}")
    return {str(qid): _as_facts(v, f"{path} [{qid}]") for qid, v in raw.items() if v is not None}


def _judge(judge: AnswerJudge, item: DatasetItem, answer: str) -> tuple[bool | None, str, str]:
    try:
        verdict = judge(question=item.question, gold_answer=item.final_answer, model_answer=answer)
        return bool(verdict.correct), "judge", str(verdict.reason)
    except Exception as e:  # one failed judge call never sinks the scoring run
        logger.warning("judge failed on %s: %s", item.question_id, e)
        return None, "undecided", f"judge failed: {type(e).__name__}: {e}"


def _settle(item: DatasetItem, answer: str, judge: AnswerJudge | None) -> tuple[bool | None, str, str]:
    """(correct, decided_by, reason) of a non-empty answer: the matcher first, then the judge if given."""
    match = final_match(item.question, item.final_answer, answer, item.symbols)
    if match.decided:
        return match.correct, "matcher", match.reason
    if judge is None:
        return None, "undecided", match.reason
    correct, decided_by, reason = _judge(judge, item, answer)
    return correct, decided_by, reason if decided_by == "judge" else f"{match.reason}; {reason}"


def score_items(
    items: list[DatasetItem],
    predictions: list[dict],
    judge: AnswerJudge | None = None,
    records: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
) -> ScoreReport:
    """Final accuracy (matcher first, then the judge if given) and, where facts exist, process and full.

    Every item counts: one without a prediction is reported missing, an empty or failed answer is
    reported as such, and all three count as wrong in the headline figure."""
    check_predictions(predictions)
    by_id = {item.question_id: item for item in items}
    unknown = [p["question_id"] for p in predictions if p["question_id"] not in by_id]
    if unknown:
        raise InputError(
            f"{len(unknown)} predictions name question ids not in the dataset (first: {unknown[0]}); "
            "score against the dataset the answers came from"
        )
    facts_by_question: dict[str, dict] = {qid: dict(f) for qid, f in (records or {}).items()}
    for p in predictions:
        extra = p.get("facts", p.get("records"))
        if extra is not None:
            try:
                facts_by_question[p["question_id"]] = _as_facts(extra, f"prediction {p['question_id']}")
            except InputError as e:  # one malformed record list never sinks the scoring of the rest
                logger.warning("%s; its process accuracy counts every cell wrong", e)
                facts_by_question[p["question_id"]] = {}
    report = ScoreReport(dataset_hash=dataset_hash(items), question_ids=list(by_id))
    processes = []
    for p in predictions:
        qid = p["question_id"]
        item = by_id[qid]
        answer = str(p.get("model_answer") or "")
        if p.get("error"):  # the program raised: nothing to score, and it must not pass for "decided"
            correct, decided_by, reason = False, "failed", f"failed: {str(p['error'])[:300]}"
        elif not answer.strip():
            correct, decided_by, reason = False, "empty", "empty answer"
        else:
            correct, decided_by, reason = _settle(item, answer, judge)
        score = QuestionScore(qid, correct, decided_by, reason, answer)
        if qid in facts_by_question:
            process = score_question(item, facts_by_question[qid])
            processes.append(process)
            score.process, score.full = process.summary(), full_correct(correct, process)
        report.per_question.append(score)
    if processes:
        scores = aggregate(processes)
        report.process_macro, report.process_micro = scores.macro, scores.micro
    return report


def build_judge_lm(model: str):
    """The judge LM, built where every LM is built (programs.runtime.settings), at temperature 0."""
    settings = Settings.from_env({"lm_judge": model, "temperature": 0.0}, require_lm=False)
    return build_lm(settings, "judge")
