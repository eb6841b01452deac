"""One question's MLflow trace, as plain data: the question, each stage as a span, each document's extraction a
child span, the code and its sandbox runs, the answer; the gold answer and the verdict as its assessments.

Why built from the run folder, not by DSPy's autolog: the Analyst plans every question first and asks each
document once for all of them (programs.batch), so autolog's traces are per stage and per module call,
a question spread over a dozen of them, none holding its gold or verdict (issue 31). Here each question's
own stage outputs (Answered.trace, also questions/<qid>/trace.json) become one trace, logged by
tracking.log_trace. The stages of a run share their time (planning and extraction are shared between
questions), so every span carries the question's share of the run's time, not a timing of its own.
No mlflow import here.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from evaluate.runs.outcome import Answered

MAX_TEXT = 4000  # a passage or a stdout cut to this many characters: a trace is read, not archived


def question_tree(answered: Answered) -> dict:
    """{name, type, inputs, outputs, status, children}: the question's span and its stages'."""
    trace = answered.trace or {}
    children = [span for span in (_plan(trace), _extract(trace), _normalize(trace), _code(trace)) if span]
    children += [_stage(name, value) for name, value in trace.items() if name not in KNOWN and value]
    answer = trace.get("answer") or {}
    if answer:
        children.append(
            {
                "name": "answer",
                "type": "LLM",
                "inputs": _cut(answer.get("inputs") or {}),
                "outputs": _cut({k: v for k, v in answer.items() if k != "inputs"}),
            }
        )
    return {
        "name": f"question {answered.question_id}",
        "type": "AGENT",
        "inputs": {"question": answered.question, "doc_ids": answered.doc_ids},
        "outputs": {"answer": answered.answer, "coverage": answered.coverage_line, "error": answered.error},
        "status": "ERROR" if answered.error else "OK",
        "children": children,
    }


def assessments(score: dict, gold: str | None) -> tuple[dict, list[dict]]:
    """(expectations, feedback) of a question: the gold answer; the verdict (correct: a bool where it was
    decided, with the reason), who decided it, and the process figures. Each feedback is {name, value,
    rationale, source} with source 'CODE' (the matcher) or 'LLM_JUDGE'."""
    expectations = {"expected_answer": gold} if gold else {}
    decided_by = str(score.get("decided_by") or "undecided")
    source = "LLM_JUDGE" if decided_by == "judge" else "CODE"
    feedback = []
    if score.get("final_correct") is not None:
        feedback.append(
            {
                "name": "correct",
                "value": bool(score["final_correct"]),
                "rationale": str(score.get("final_reason") or ""),
                "source": source,
            }
        )
    feedback.append({"name": "decided_by", "value": decided_by, "rationale": "", "source": "CODE"})
    for name in ("cell_accuracy", "row_accuracy", "column_accuracy"):
        if isinstance(score.get(name), (int, float)):
            feedback.append({"name": name, "value": float(score[name]), "rationale": "", "source": "CODE"})
    return expectations, feedback


KNOWN = ("plan", "extract", "normalize", "code", "answer")


def _plan(trace: dict) -> dict | None:
    plan = trace.get("plan")
    if not plan:
        return None
    return {
        "name": "plan",
        "type": "LLM",
        "inputs": _cut({"question": plan.get("question"), "scope": plan.get("scope")}),
        "outputs": _cut({k: v for k, v in plan.items() if k not in ("question", "scope")}),
    }


def _extract(trace: dict) -> dict | None:
    """The extraction, one child span per document: the passages it read and the facts it gave."""
    extract = trace.get("extract")
    if not extract:
        return None
    facts: dict[str, list] = defaultdict(list)
    for fact in extract.get("facts") or []:
        facts[str(fact.get("doc_id"))].append(fact)
    passages = extract.get("passages") or {}
    documents = list(dict.fromkeys([*passages, *facts]))
    children = [
        {
            "name": f"extract {doc_id}",
            "type": "RETRIEVER",
            "inputs": {"doc_id": doc_id, "passages": _cut(passages.get(doc_id) or [])},
            "outputs": {"facts": _cut(facts.get(doc_id) or [])},
            "status": "ERROR" if _failed(extract, doc_id) else "OK",
        }
        for doc_id in documents
    ]
    summary = {k: v for k, v in extract.items() if k not in ("facts", "passages")}
    return {
        "name": "extract",
        "type": "CHAIN",
        "inputs": {"documents": documents},
        "outputs": _cut(summary),
        "children": children,
    }


def _failed(extract: dict, doc_id: str) -> bool:
    return any(
        str((f or {}).get("doc_id")) == doc_id for f in extract.get("failures") or [] if isinstance(f, dict)
    )


def _normalize(trace: dict) -> dict | None:
    normalize = trace.get("normalize")
    if not normalize:
        return None
    return {"name": "normalize", "type": "PARSER", "inputs": {}, "outputs": _cut(normalize)}


def _code(trace: dict) -> dict | None:
    """The analysis: each attempt's code and what the sandbox said of it, then the result."""
    code = trace.get("code")
    if not code:
        return None
    attempts = code.get("attempts") or []
    children = [
        {
            "name": f"sandbox run {number}",
            "type": "TOOL",
            "inputs": {"code": attempt.get("code")},
            "outputs": _cut({k: v for k, v in attempt.items() if k != "code"}),
            "status": "OK" if attempt.get("ok") else "ERROR",
        }
        for number, attempt in enumerate(attempts, start=1)
        if isinstance(attempt, dict)
    ]
    return {
        "name": "code",
        "type": "CHAIN",
        "inputs": {"attempts": len(children)},
        "outputs": _cut({"result": code.get("result")}),
        "children": children,
    }


def _stage(name: str, value: Any) -> dict:
    """A stage this module does not know (the flat-RAG baseline's), shown as it is."""
    return {
        "name": name,
        "type": "CHAIN",
        "inputs": {},
        "outputs": _cut(value if isinstance(value, dict) else {name: value}),
    }


def _cut(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[:MAX_TEXT] + "...[cut]"
    if isinstance(value, dict):
        return {str(k): _cut(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_cut(v) for v in value]
    return value
