"""Read back what a run saved, so any run can be scored again (python -m evaluate.score RUN_DIR).

A run folder (evaluate/runs/run_outputs.py) holds results.jsonl (one line per question: answer, records,
error), agent_output.json (MuDABench's evaluator input; the records in `json_data`) and summary.json
(the figures, and under `inputs` the dataset file, the question selection and the models under test).
A run stopped before its end (Ctrl-C) holds only answers.jsonl (evaluate/runs/journal.py) and run.json (its
dataset and selection); `collate ask --run-dir` writes answer.json (with `inputs` when the question
came from a dataset). Any of these answer files can be read alone too, as can a predictions list
[{question_id, model_answer, records?|facts?, error?}]. Records come back with every answer that had
them, so final and process accuracy are recomputed from what the run saved, not copied from it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluate.dataset import read_json_file
from evaluate.matching.scoring import InputError, as_facts, check_predictions
from evaluate.runs.journal import JOURNAL, read_answers
from evaluate.runs.resume import HEADER

ASK_ANSWER = "answer.json"  # programs/run_folder.write_run
# in order of preference: results hold errors; answers.jsonl is a stopped run's; answer.json is collate ask's
ANSWER_FILES = ("results.jsonl", "agent_output.json", JOURNAL, ASK_ANSWER)
ERROR_PREFIX = "ERROR: "  # agent_output.json's code_resp of a question that failed


@dataclass
class SavedRun:
    predictions: list[dict]  # {question_id, model_answer, records?, error?}
    source: Path  # the file the answers came from
    summary: dict = field(default_factory=dict)  # the run's summary.json, {} when there is none

    @property
    def inputs(self) -> dict:
        """The run's dataset, split, seed, limit and models under test (runs since issue 21); for an
        ask, `question_ids`: the one question it answered."""
        return dict(self.summary.get("inputs") or {})


def read_run(path: str | Path) -> SavedRun:
    """A run folder, or one answer file of it (or a predictions list), as predictions."""
    path = Path(path)
    if path.is_dir():
        found = [path / name for name in ANSWER_FILES if (path / name).is_file()]
        if not found:
            raise InputError(
                f"{path} holds no {' or '.join(ANSWER_FILES)}: pass the folder collate run "
                "wrote (--out) or collate ask wrote (--run-dir), or an answer file"
            )
        source = found[0]
    elif path.is_file():
        source = path
    else:
        raise InputError(f"no such run folder or file: {path}; pass the folder collate run wrote")
    if source.name == JOURNAL:
        predictions = [
            _prediction(vars(a), f"{source} ({a.question_id})") for a in read_answers(source).values()
        ]
    elif source.name == ASK_ANSWER:
        predictions = [_ask_prediction(source)]
    elif source.suffix == ".jsonl":
        predictions = read_jsonl(source)
    else:
        predictions = read_answer_list(source)
    check_predictions(predictions, str(source))
    return SavedRun(predictions, source, _summary_beside(source))


def _summary_beside(source: Path) -> dict:
    """summary.json of a finished run; else a stopped run's run.json (its dataset and question
    selection, as summary.json's `inputs`); else an ask's answer.json, which carries its own inputs."""
    folder = source.parent
    if (folder / "summary.json").is_file():
        return _object(folder / "summary.json")
    if (folder / HEADER).is_file():
        header = _object(folder / HEADER)
        keys = ("dataset", "split", "seed", "limit")
        return {"inputs": {k: header.get(k) for k in keys}, "dataset_hash": header.get("dataset_hash")}
    if source.name == ASK_ANSWER:
        return {"inputs": _object(source).get("inputs") or {}}
    return {}


def _ask_prediction(source: Path) -> dict:
    answer = _object(source)
    if not answer.get("question_id"):
        raise InputError(
            f"{source}: collate ask answered a question of no dataset, so there is no gold answer to score "
            "it against; ask it with --dataset DS --question-id QID --run-dir DIR to score it"
        )
    return _prediction(answer, str(source))


def _object(path: Path) -> dict:
    found = read_json_file(path, InputError, missing="", expected="a JSON object")
    return found if isinstance(found, dict) else {}


def read_jsonl(path: Path) -> list[dict]:
    """results.jsonl: one JSON object per line, the answer under `answer` (or `model_answer`)."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as e:
            raise InputError(
                f"{path} line {number} is not valid JSON ({e}); fix or remove that line"
            ) from None
        if not isinstance(row, Mapping) or "question_id" not in row:
            raise InputError(f"{path} line {number}: each line needs a question_id")
        rows.append(_prediction(row, f"{path} line {number}"))
    return rows


def read_answer_list(path: Path) -> list[dict]:
    """agent_output.json or a predictions list: a JSON list of {question_id, model_answer, ...}."""
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
    predictions = []
    for i, entry in enumerate(raw):
        if not isinstance(entry, Mapping) or "question_id" not in entry or "model_answer" not in entry:
            raise InputError(f"{path} item {i}: each prediction needs question_id and model_answer")
        predictions.append(_prediction(entry, f"{path} item {i}"))
    return predictions


def _prediction(entry: Mapping, where: str) -> dict:
    answer = entry.get("model_answer", entry.get("answer"))
    prediction = {"question_id": str(entry["question_id"]), "model_answer": str(answer or "")}
    error = entry.get("error")
    code_resp = str(entry.get("code_resp") or "")
    if not error and not prediction["model_answer"].strip() and code_resp.startswith(ERROR_PREFIX):
        error = code_resp.removeprefix(ERROR_PREFIX)  # agent_output.json of a question that failed
    if error:
        prediction["error"] = str(error)
    records = _records(entry, where)
    if records is not None:
        prediction["records"] = records
    return prediction


def _records(entry: Mapping, where: str):
    """The records (or facts) an entry carries: `records`/`facts`, else agent_output's `json_data`;
    an agent_output entry of the flat-RAG baseline (retrieved_chunks, nothing extracted) has none: []."""
    for key in ("records", "facts"):
        if entry.get(key) is not None:
            return entry[key]
    if "json_data" in entry:
        try:
            return json.loads(entry["json_data"] or "[]")
        except ValueError as e:
            raise InputError(f"{where}: json_data is not valid JSON ({e})") from None
    if "retrieved_chunks" in entry:
        return []
    return None


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
    return {str(qid): as_facts(v, f"{path} [{qid}]") for qid, v in raw.items() if v is not None}
