"""A score report as a person reads it: figures in words, never a Python dict.

    final accuracy 0.400: 12 of 30 correct (...); coverage 28/30 answered (0.933)
    decided 25 (22 by the matcher, 3 by the judge), accuracy over the decided 0.480; 3 undecided; ...
    judge: none (...)
    process accuracy over 28 questions with records: macro cell 0.833 row 0.500 column 0.667; ...

and with --verbose one line per question: id, verdict, who decided, the reason, its cell accuracy.
"""

from __future__ import annotations

from evaluate.matching.scoring import headline

SCOPES = (("macro", "process_macro"), ("micro", "process_micro"))
REASON_WIDTH = 110  # characters of a question's reason shown on its line


def process_line(report: dict) -> str:
    """'process accuracy over N questions with records: macro cell .. row .. column ..; micro ...;
    full ..', or a line saying why there is none."""
    if report.get("process_macro") is None:
        return "process accuracy: none (no records saved with the answers)"
    with_records = sum(q.get("process") is not None for q in report.get("per_question", []))
    parts = [
        f"{name} " + " ".join(f"{k} {report[key].get(k, 0.0):.3f}" for k in ("cell", "row", "column"))
        for name, key in SCOPES
    ]
    over = f" over {with_records} questions with records" if with_records else ""
    return f"process accuracy{over}: {'; '.join(parts)}; full {report.get('full_accuracy', 0.0):.3f}"


def _verdict(q: dict) -> str:
    if q["decided_by"] in ("empty", "failed"):
        return q["decided_by"]
    return {True: "correct", False: "wrong", None: "undecided"}[q["correct"]]


def question_lines(report: dict) -> list[str]:
    """One line per question: id, verdict, who decided it, the reason, and its cell accuracy."""
    lines = []
    for q in report.get("per_question", []):
        process = q.get("process") or {}
        cells = f"  cells {process['cell_accuracy']:.3f}" if "cell_accuracy" in process else ""
        reason = " ".join(str(q["reason"]).split())
        if len(reason) > REASON_WIDTH:
            reason = reason[: REASON_WIDTH - 3] + "..."
        lines.append(f"{q['question_id']}  {_verdict(q):<9}  {q['decided_by']:<9}  {reason}{cells}")
    for qid in report.get("missing_ids", []):
        lines.append(f"{qid}  {'missing':<9}  {'-':<9}  no answer in the run")
    return lines


def text_report(report: dict, source: str = "", verbose: bool = False) -> str:
    """The whole report: where the answers came from, the headline, process accuracy, and per question."""
    lines = [f"scored: {source}"] if source else []
    lines += [headline(report), process_line(report)]
    if verbose:
        lines += ["", *question_lines(report)]
    return "\n".join(lines)
