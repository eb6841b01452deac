"""The run folder: a JSON trace of every stage, and run_log.json in the MuDABench reference shape.

The reference evaluator (MuDABench eval/evaluate.py) reads `<run dir>/run_log.json` and uses
`doc_interactions`: document id -> list of {ts, attempt, prompt, answer}; it joins them into a
"Q: ...\\nA: ..." transcript per document and judges that against the gold row. We write one
item per (sub-query, field), rendered from the facts (reused facts included, since the transcript
must cover every document), and one item per failed document stating the failure.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from pathlib import Path

from signatures.types import DocumentFailure, Fact, SubQuery

logger = logging.getLogger(__name__)


def render_fact(fact: Fact | None) -> str:
    if fact is None or not fact.disclosed:
        return "not disclosed"
    text = f"{fact.value}" + (f" {fact.unit}" if fact.unit else "")
    if fact.page is not None or fact.quote:
        text += f' (page {fact.page}: "{fact.quote or ""}")'
    return text


def build_run_log(
    question: str, assignments: dict[str, list[SubQuery]], facts: list[Fact], failures: list[DocumentFailure]
) -> dict:
    ts = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    by_key = {(f.doc_id, f.field): f for f in facts}
    interactions: dict[str, list[dict]] = {}
    for doc_id, subqueries in assignments.items():
        items = interactions.setdefault(doc_id, [])
        for sq in subqueries:
            for spec in sq.fields:
                items.append(
                    {
                        "ts": ts,
                        "attempt": len(items),
                        "prompt": f"{sq.query} [{spec.name}: {spec.description}]",
                        "answer": render_fact(by_key.get((doc_id, spec.name))),
                    }
                )
    for failure in failures:
        items = interactions.setdefault(failure.doc_id, [])
        items.append(
            {
                "ts": ts,
                "attempt": len(items),
                "prompt": f"{failure.stage} this document",
                "answer": f"FAILED ({failure.stage}): {failure.reason}",
            }
        )
    return {"question": question, "doc_interactions": interactions}


def to_jsonable(value):
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return value


def write_run(run_dir: str | Path, pred, question_id: str | None = None, extra: dict | None = None) -> Path:
    """trace/<stage>.json for every stage, run_log.json and answer.json; returns the folder."""
    folder = Path(run_dir)
    (folder / "trace").mkdir(parents=True, exist_ok=True)
    for stage, content in (pred.trace or {}).items():
        dump(folder / "trace" / f"{stage}.json", content)
    run_log = dict(pred.run_log)
    if question_id:
        run_log["question_id"] = question_id
    dump(folder / "run_log.json", run_log)
    summary = {
        "question_id": question_id,
        "model_answer": pred.answer,
        "error": getattr(pred, "error", None),
        "records": getattr(pred, "records", None),  # what evaluate.score's process accuracy reads
        "result": pred.result,
        "code": pred.code,
        "citations": pred.citations,
        "missing": pred.missing,
        "warnings": pred.warnings,
        **(extra or {}),
    }
    dump(folder / "answer.json", summary)
    logger.info("run written to %s", folder)
    return folder


def dump(path: Path, content) -> None:
    path.write_text(
        json.dumps(to_jsonable(content), ensure_ascii=False, indent=2, default=str), encoding="utf-8"
    )
