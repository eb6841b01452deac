"""OUT/run.json (evaluate.runs.resume): a rerun adds to a run folder only if it is the same run."""

from __future__ import annotations

import json

import pytest

from evaluate.dataset import DatasetItem
from evaluate.runs.answering import Answered
from evaluate.runs.journal import AnswerJournal
from evaluate.runs.resume import HEADER, interrupted_line, open_run_folder, resumed_line, run_settings
from signatures.errors import BadInput


def _settings(**changes) -> dict:
    values = dict(
        dataset_file="ds.json",
        items_hash="abc",
        split="all",
        seed=0,
        limit=5,
        variant="uncompiled",
        program_hash="60ef53c",
        models=["openai/m"],
        index="idx",
    )
    return run_settings(**{**values, **changes})


def _items(n: int) -> list[DatasetItem]:
    return [
        DatasetItem(question_id=f"q{i}", question=f"question {i}?", metadata=[], final_answer="1")
        for i in range(n)
    ]


def test_a_new_folder_records_its_settings_and_the_same_settings_resume_it(tmp_path):
    out = tmp_path / "run"
    journal = open_run_folder(out, _settings())
    assert json.loads((out / HEADER).read_text())["limit"] == 5 and journal.kept == {}
    journal.append(Answered("q0", "question 0?", ["d1"], answer="1"))

    again = open_run_folder(out, _settings())
    assert set(again.answered(["q0", "q1"])) == {"q0"}


@pytest.mark.parametrize(
    "change, named",
    [
        ({"limit": 3}, "limit 3 now, 5 there"),
        ({"split": "test"}, "split test now, all there"),
        ({"models": ["openai/other"]}, "models"),
        ({"program_hash": "1111111"}, "program_hash 1111111 now, 60ef53c there"),
        ({"items_hash": "def"}, "dataset_hash def now, abc there"),
    ],
)
def test_other_settings_into_the_same_folder_are_refused_naming_the_fix(tmp_path, change, named):
    out = tmp_path / "run"
    open_run_folder(out, _settings()).append(Answered("q0", "question 0?", ["d1"], answer="1"))
    with pytest.raises(BadInput) as refused:
        open_run_folder(out, _settings(**change))
    message = str(refused.value)
    assert named in message and "give a new --out" in message and f"delete {out}" in message
    assert "\n" not in message


def test_answers_without_a_header_are_not_guessed_at(tmp_path):
    (tmp_path / "answers.jsonl").write_text("")
    with pytest.raises(BadInput, match="no run.json"):
        open_run_folder(tmp_path, _settings())


def test_the_lines_say_how_many_were_kept_and_how_to_resume(tmp_path):
    journal = AnswerJournal.open(tmp_path / "answers.jsonl")
    items = _items(4)
    assert resumed_line(journal, items) is None  # a fresh folder: nothing to say
    journal.append(Answered("q0", "?", [], answer="1"))
    journal.append(Answered("q1", "?", [], error="LMServerError: 500"))
    assert resumed_line(journal, items) == (
        f"resuming: 1 of 4 questions already answered in {journal.path}; asking the other 3 "
        "(1 that failed is asked again)"
    )
    assert interrupted_line(journal, items, out_given=True) == (
        f"interrupted: 1 of 4 answers kept in {journal.path}; run the same command to resume "
        "(1 that failed is asked again)"  # the file holds 2 lines: the count is not of lines
    )
    # without --out the same command would start a new folder: the line names the one to resume
    assert interrupted_line(journal, items, out_given=False).endswith(
        f"run the same command with --out {tmp_path} to resume (1 that failed is asked again)"
    )
    # the demo makes a new folder each time: the line names the command that resumes this one
    demo = interrupted_line(journal, items, out_given=True, resume="python -m evaluate.run --out demo/runs/1")
    assert (
        demo.endswith("`python -m evaluate.run --out demo/runs/1` resumes it (1 that failed is asked again)")
        and "same command" not in demo
    )
    for qid in ("q1", "q2", "q3"):
        journal.append(Answered(qid, "?", [], answer="1"))
    assert resumed_line(journal, items) == (
        f"resuming: 4 of 4 questions already answered in {journal.path}; nothing left to ask, scoring them"
    )
