"""Score saved answers against a MuDABench-format dataset; no program and, for what the matcher
decides, no LM.

    python -m evaluate.score RUN_DIR [--split test --seed 0] [--dataset DS] [--judge MODEL] [--verbose]
    python -m evaluate.score --dataset DS.json --predictions PRED.json [--records REC.json] --json

PRED.json: a list of {question_id, model_answer}, optionally with `facts` ({doc_id: {value_key:
value}}) or `records` (the program's rows, `id` attached) per question for process accuracy, and
`error` (the question failed). REC.json (optional): the same facts or records kept apart, as
{question_id: facts-or-records}. A run folder's files are read by evaluate/runs/run_reading.py.

Every question of the dataset counts, and only a correct answer scores: the headline
`final_accuracy` is correct answers over all questions, so an undecided answer (the matcher could not
decide and no judge was named), a missing, empty or failed one all count as not correct. Beside it,
`final_accuracy_decided` is the accuracy over the decided answers, `undecided` how many were left
undecided, and `coverage` how many were answered: a partial run never scores perfect.

There is no judge unless one is named; one that is the model under test is reported as self-judged.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from evaluate.dataset import DatasetItem, dataset_hash
from evaluate.matching.final_match import final_match
from evaluate.matching.judge import AnswerJudge
from evaluate.matching.metrics import full_correct
from evaluate.matching.process import aggregate, records_to_facts, score_question
from programs.lm.settings import Settings, build_lm
from signatures.errors import BadInput

logger = logging.getLogger(__name__)


class InputError(BadInput):  # a ValueError too, as before
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
    judge: str = ""  # the judge's model, "" when none was named
    self_judged: bool = False  # the judge is a model under test

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
        report: dict[str, Any] = {
            # headline: only a correct answer scores; undecided and unanswered count as not correct
            "final_accuracy": correct / n if n else 0.0,
            "final_accuracy_decided": correct / settled if settled else 0.0,  # over the decided answers
            # the same two figures under the names earlier runs logged them with (MLflow comparisons)
            "final_accuracy_answered": correct / settled if settled else 0.0,
            "final_accuracy_undecided_as_wrong": correct / n if n else 0.0,
            "n": n,
            "answered": answered,
            "coverage": answered / n if n else 0.0,
            "correct": correct,
            "settled": settled,
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
            "judge": self.judge,
            "self_judged": self.self_judged,
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
    """Three lines: the headline accuracy with coverage; who judged (none, a model, or the model under
    test); the decided, undecided and unanswered counts with the accuracy over the decided."""
    n, undecided = report["n"], report["undecided"]
    settled = report["decided"] + report["judged"]
    unanswered = n - report["answered"]
    return (
        f"final accuracy {report['final_accuracy']:.3f}: {report['correct']} of {n} correct (undecided and "
        f"unanswered count as not correct); coverage {report['answered']}/{n} answered, {report['failed_answers']} failed ({report['coverage']:.3f})\n"
        + judge_line(report)
        + f"\ndecided {settled} ({report['decided']} by the matcher, {report['judged']} by the judge), accuracy "
        f"over the decided {report['final_accuracy_decided']:.3f}; {undecided} undecided; "
        f"{unanswered} unanswered counted wrong"
    )


def judge_line(report: dict) -> str:
    judge = report.get("judge") or ""
    if not judge:
        return (
            "judge: none (what the matcher cannot decide stays undecided; name one with --judge MODEL "
            "or COLLATE_LM_JUDGE)"
        )
    if report.get("self_judged"):
        return (
            f"judge: {judge}, the model under test: SELF-JUDGED, its {report['judged']} verdicts grade "
            "its own answers (name another model with --judge for independent verdicts)"
        )
    return f"judge: {judge}"


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


def as_facts(value: Any, where: str) -> dict[str, dict[str, Any]]:
    if isinstance(value, list):
        if not all(isinstance(r, Mapping) for r in value):
            raise InputError(f"{where}: records must be a list of objects with an `id` key")
        return records_to_facts(value)
    if isinstance(value, Mapping) and all(isinstance(v, Mapping) for v in value.values()):
        return {str(k): dict(v) for k, v in value.items()}
    raise InputError(
        f"{where}: facts must be {{doc_id: {{value_key: value}}}} or a list of records with `id`"
    )


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
                facts_by_question[p["question_id"]] = as_facts(extra, f"prediction {p['question_id']}")
            except InputError as e:  # one malformed record list never sinks the scoring of the rest
                logger.warning("%s; its process accuracy counts every cell wrong", e)
                facts_by_question[p["question_id"]] = {}
    report = ScoreReport(
        dataset_hash=dataset_hash(items),
        question_ids=list(by_id),
        judge=judge.model if judge is not None else "",
        self_judged=bool(judge is not None and judge.self_judged),
    )
    processes = []
    for p in predictions:
        qid = p["question_id"]
        item = by_id[qid]
        answer = str(p.get("model_answer") or "")
        correct: bool | None  # None: undecided (no judge)
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
    """The judge LM, built where every LM is built (programs.lm.settings), at temperature 0."""
    settings = Settings.from_env({"lm_judge": model, "temperature": 0.0}, require_lm=False)
    return build_lm(settings, "judge")
