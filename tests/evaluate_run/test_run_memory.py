"""Issue 33 item 11: a dataset run's memory is bounded over the whole run, not grown with its questions.

Before: every finished question's Answered (its trace alone 62 KB of JSON a demo question, of 75 KB)
stayed in memory until the run had written its outputs and logged its traces, in the run's list, in
the journal's `kept`, and in the RunResult. Now the run keeps each question's Outcome (answer, records,
counts) and reads the rest back from the journal one question at a time (evaluate.runs.outcome).
"""

from __future__ import annotations

import gc
import json
import weakref

import dspy

from evaluate.dataset import load_dataset
from evaluate.runs import answering, evaluation
from evaluate.runs.job import RunJob
from evaluate.runs.journal import AnswerJournal
from evaluate.runs.outcome import Answered
from programs.lm.settings import Settings


class _Heavy(dspy.Module):
    """An answer with a trace and facts of some size, as the Analyst's are."""

    def forward(self, question, doc_ids=None):
        return dspy.Prediction(
            answer=f"answer to {question[:20]}",
            records=[{"company": "A", "value": 1.0}],
            facts=[
                {"doc_id": "d", "field": f"f{i}", "value": i, "verdict": "verified" if i % 2 else ""}
                for i in range(20)
            ],
            code="result = 1",
            result="1",
            citations=[],
            missing=[],
            run_log={"doc_interactions": {"d": ["x" * 500]}},
            trace={"extract": {"repair_calls": 1, "pages": ["page text " * 200]}},
        )


def test_no_finished_question_s_whole_answer_stays_in_memory(small_corpus, tmp_path, monkeypatch):
    made: list[weakref.ref] = []

    class Tracked(Answered):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(weakref.ref(self))

    monkeypatch.setattr(answering, "Answered", Tracked)
    items = load_dataset(small_corpus[0] / "dataset.json")[:6]
    out = tmp_path / "run"
    alive_when_scored: list[int] = []

    def scored(summary: dict) -> None:  # the outputs are written; the store is not yet
        gc.collect()
        alive_when_scored.append(sum(ref() is not None for ref in made))

    result = evaluation.evaluate_program(
        _Heavy(),
        items,
        RunJob(variant="heavy", out_dir=out, concurrency=2, autolog=True, progress=False),
        settings=Settings(lm="fake/x"),
        journal=AnswerJournal.open(out / "answers.jsonl"),
        on_scored=scored,
    )
    gc.collect()
    assert len(made) == 6 and len(result.answered) == 6
    assert alive_when_scored == [0], "the run held every question's whole answer to its outputs"  # before: 6
    assert sum(ref() is not None for ref in made) == 0  # before: 6 (the RunResult held them)
    # the whole answers are in the folder all the same: read back from the journal, one at a time
    assert result.answered[0].full().trace["extract"]["pages"][0].startswith("page text")
    row = json.loads((out / "results.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert len(row["facts"]) == 20 and "trace" not in row
    trace = json.loads((out / "questions" / items[0].question_id / "trace.json").read_text(encoding="utf-8"))
    assert trace["extract"]["repair_calls"] == 1
    summary = result.summary
    assert summary["facts_checked"] == 60 and summary["facts_verified_share"] == 1.0
    assert summary["repair_calls"] == 6
