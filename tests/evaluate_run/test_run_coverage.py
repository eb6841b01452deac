"""`evaluate.run` reports coverage: empty and failed answers are counted, shown and logged to MLflow
as such (issue 12: "four empty flat-RAG answers: errors=0, 4 decided by the matcher, no warning"),
and they count as wrong in the headline figure, with the settled-only figure beside it."""

from __future__ import annotations

import json

import dspy
from mlflow.tracking import MlflowClient

from collate import run as evaluate_run
from evaluate import tracking
from evaluate.dataset import load_dataset
from evaluate.matching.final_match import final_match
from evaluate.runs import evaluation
from evaluate.runs.job import RunJob
from programs.lm.settings import Settings


class _Scripted(dspy.Module):
    """Answers from a script by question: a text (possibly empty), or an exception to raise."""

    def __init__(self, script: dict[str, str | Exception]):
        super().__init__()
        self.script = script

    def forward(self, question, doc_ids=None):
        reply = self.script.get(question, "")
        if isinstance(reply, Exception):
            raise reply
        return dspy.Prediction(
            answer=reply,
            records=[],
            facts=[],
            code="",
            result="",
            citations=[],
            missing=[],
            run_log={"doc_interactions": {}},
        )


def _items(small_corpus, n=4):
    """n questions, the first one a question whose gold answer the matcher decides against itself."""
    items = load_dataset(small_corpus[0] / "dataset.json")
    decided = [i for i in items if final_match(i.question, i.final_answer, i.final_answer, i.symbols).decided]
    first = decided[0]
    return [first, *[i for i in items if i.question_id != first.question_id][: n - 1]]


def test_empty_and_failed_answers_are_counted_shown_and_logged(small_corpus, tmp_path):
    items = _items(small_corpus)
    script = {
        items[0].question: items[0].final_answer,
        items[1].question: "",
        items[2].question: RuntimeError("LM down"),
        items[3].question: "   ",
    }
    result = evaluation.evaluate_program(
        _Scripted(script),
        items,
        RunJob(
            variant="scripted",
            out_dir=tmp_path / "run",
            concurrency=2,
            autolog=False,
            progress=False,
        ),
        settings=Settings(lm="fake/x"),
    )
    summary = result.summary
    assert (summary["n"], summary["answered"], summary["decided"]) == (4, 1, 1)
    assert (summary["empty_answers"], summary["failed_answers"], summary["errors"]) == (2, 1, 1)
    assert summary["coverage"] == 0.25
    assert summary["final_accuracy"] == 0.25 and summary["final_accuracy_answered"] == 1.0
    assert summary["empty_ids"] == [items[1].question_id, items[3].question_id]
    assert summary["failed_ids"] == [items[2].question_id]

    metrics = MlflowClient(tracking.tracking_uri()).get_run(result.run_id).data.metrics
    for name, value in {  # MLflow's names group the figures (evaluate.tracking.METRIC_GROUPS)
        "answers/coverage": 0.25,
        "answers/answered": 1,
        "acc/final": 0.25,
        "acc/final_answered": 1.0,
        "answers/empty_answers": 2,
        "answers/failed_answers": 1,
        "answers/missing": 0,
        "answers/decided": 1,
    }.items():
        assert metrics[name] == value, name

    saved = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert saved["empty_ids"] == summary["empty_ids"] and saved["coverage"] == 0.25
    rows = {
        json.loads(line)["question_id"]: json.loads(line)
        for line in (tmp_path / "run" / "results.jsonl").open()
    }
    assert rows[items[1].question_id]["scores"]["decided_by"] == "empty"
    assert rows[items[2].question_id]["scores"]["decided_by"] == "failed"
    assert "LM down" in rows[items[2].question_id]["scores"]["final_reason"]

    text = evaluation.format_summary(summary)
    assert "coverage 1/4 answered" in text and "3 unanswered counted wrong" in text and "errors=1" in text


def test_the_cli_warns_about_empty_answers(small_corpus, brain_server, tmp_path, capsys, monkeypatch):
    items = load_dataset(small_corpus[0] / "dataset.json")[:4]
    script = {items[0].question: "", items[1].question: "", items[2].question: "", items[3].question: ""}
    monkeypatch.setattr(evaluate_run, "build_variant", lambda *args: _Scripted(script))
    code = evaluate_run.main(
        [
            "--dataset",
            str(small_corpus[0] / "dataset.json"),
            "--index",
            str(small_corpus[1]),
            "--out",
            str(tmp_path / "r"),
            "--limit",
            "4",
            "--no-progress",
            "--no-autolog",
            "--no-judge",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "warning: 4 of 4 answers are empty, counted wrong (not decided by the matcher)" in captured.err
    assert items[0].question_id in captured.err and "summary.json" in captured.err
    assert "coverage 0/4 answered" in captured.out and "0 by the matcher" in captured.out
