"""The files an evaluation run leaves behind, in shapes other tools read.

    OUT/results.jsonl              one line per question: answer, records, facts, scores, error, timing
    OUT/agent_output.json          MuDABench's evaluator input (eval/evaluate.py --agent-output)
    OUT/questions/<qid>/run_log.json   per-document Q/A transcript the reference process judge reads
    OUT/questions/<qid>/trace.json     every stage's input and output
    OUT/summary.json               the run's metrics and settings

agent_output.json follows the reference evaluator: in agent mode each entry has question_id,
model_answer and agent_log_dir (the folder holding run_log.json) plus json_data/json_dec/code/
code_resp; for the flat-RAG baseline it is rag mode, whose entries may hold only question_id,
retrieved_chunks and model_answer.

Every file is written from the run's Outcomes one question at a time, each read back in full from
where the run kept it (the journal) and let go before the next: the run never holds every question's
trace and facts at once (evaluate.runs.outcome).
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

from evaluate.runs.outcome import Answered, Outcome
from programs.run_folder import dump, to_jsonable  # the same JSON files collate.ask writes

logger = logging.getLogger(__name__)
RAG_KEYS = ("question_id", "retrieved_chunks", "model_answer")


def question_folder(out_dir: Path, question_id: str) -> Path:
    return out_dir / "questions" / re.sub(r"[^\w.-]", "_", question_id)


def agent_entry(out_dir: Path, answered: Answered, rag: bool) -> dict[str, Any]:
    if rag:
        return {
            "question_id": answered.question_id,
            "retrieved_chunks": list(answered.retrieved_chunks),
            "model_answer": answered.answer,
        }
    columns = sorted({k for r in answered.records for k in r})
    return {
        "question_id": answered.question_id,
        "model_answer": answered.answer,
        "agent_log_dir": str(question_folder(out_dir, answered.question_id).resolve()),
        "json_data": json.dumps(answered.records, ensure_ascii=False, default=str),
        "json_dec": json.dumps(columns, ensure_ascii=False),
        "code": answered.code,
        "code_resp": answered.result if answered.error is None else f"ERROR: {answered.error}",
    }


def write_outputs(
    out_dir: Path, answered: list[Outcome], scores: list[dict], summary: dict, rag: bool = False
) -> dict[str, Path]:
    """Write every file of the run; returns name -> path for logging them as artifacts."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "results": out_dir / "results.jsonl",
        "agent_output": out_dir / "agent_output.json",
        "summary": out_dir / "summary.json",
    }
    with (
        paths["results"].open("w", encoding="utf-8") as results,
        paths["agent_output"].open("w", encoding="utf-8") as agent_output,
    ):
        entries = ListWriter(agent_output)
        for outcome, s in zip(answered, scores, strict=True):
            a = outcome.full()
            folder = question_folder(out_dir, a.question_id)
            folder.mkdir(parents=True, exist_ok=True)
            run_log = {
                "question_id": a.question_id,
                "question": a.question,
                "doc_interactions": {},
                **a.run_log,
            }
            dump(folder / "run_log.json", run_log)
            dump(folder / "trace.json", a.trace)
            row = {**a.__dict__, "scores": s}
            row.pop("trace", None)  # the trace lives in questions/<qid>/trace.json
            results.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
            entries.add(agent_entry(out_dir, a, rag))
        entries.close()
    dump(paths["summary"], summary)
    return paths


class ListWriter:
    """A JSON list written an item at a time, byte for byte as programs.run_folder.dump writes the whole
    list (indent 2): each item's lines indented one level, between "[" and "]" ("[]" when empty)."""

    def __init__(self, f):
        self.f = f
        self.count = 0

    def add(self, item) -> None:
        text = json.dumps(to_jsonable(item), ensure_ascii=False, indent=2, default=str)
        self.f.write(
            ("[\n" if not self.count else ",\n") + "\n".join("  " + line for line in text.split("\n"))
        )
        self.count += 1

    def close(self) -> None:
        self.f.write("\n]" if self.count else "[]")


def verification_metrics(answered: list[Outcome]) -> dict[str, float]:
    """How the run's facts fared against their pages (factcheck.check), next to accuracy: the
    share verified, the share whose page was corrected, the share flagged, and the repair calls."""
    verdicts: dict[str, int] = {}
    for a in answered:
        for verdict, count in a.verdicts.items():
            verdicts[verdict] = verdicts.get(verdict, 0) + count
    checked = sum(verdicts.values())
    share = (
        (lambda *names: round(sum(verdicts.get(n, 0) for n in names) / checked, 4))
        if checked
        else (lambda *n: 0.0)
    )
    return {
        "facts_checked": checked,
        "facts_verified_share": share("verified"),
        "facts_page_corrected_share": share("page_corrected"),
        "facts_unverified_share": share("value_not_in_quote", "quote_not_found"),
        "repair_calls": sum(a.repair_calls for a in answered),
    }


def write_reports(out_dir: Path, answered: list[Outcome], pdf_lookup, ocr_lookup=None) -> list[Path]:
    """questions/<qid>/audit.html for every question whose answer rests on facts (programs.audit_report)."""
    from programs.audit_report import write_program_report

    paths = []
    for outcome in answered:
        if outcome.fact_count and outcome.error is None:
            a = outcome.full()
            path = question_folder(out_dir, a.question_id) / "audit.html"
            try:
                paths.append(write_program_report(path, a.question, a.__dict__, pdf_lookup, ocr_lookup))
            except OSError as e:  # a report that cannot be written never costs the run its scores
                logger.warning("no audit report for %s: %s", a.question_id, e)
    return paths


def table_rows(answered: list[Outcome], scores: list[dict]) -> list[dict]:
    """The per-question table logged to MLflow: one flat row per question."""
    rows = []
    for a, s in zip(answered, scores, strict=True):
        rows.append(
            {
                "question_id": a.question_id,
                "question": a.question,
                "answer": a.answer,
                "error": a.error or "",
                "seconds": a.seconds,
                "documents": len(a.doc_ids),
                "records": len(a.records),
                "missing_documents": a.missing_documents,
                **{k: v for k, v in s.items() if not isinstance(v, (dict, list))},
            }
        )
    return rows
