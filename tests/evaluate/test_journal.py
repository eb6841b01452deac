"""OUT/answers.jsonl (evaluate.runs.journal): each finished question on disk at once, read back by a rerun."""

from __future__ import annotations

import dataclasses
import json
import logging
import threading

from evaluate.runs.answering import Answered
from evaluate.runs.journal import AnswerJournal, read_answers


def _answer(qid: str, answer: str = "42", error: str | None = None) -> Answered:
    return Answered(qid, f"question {qid}?", ["d1"], answer=answer, records=[{"v": 1.5}], error=error)


def test_appended_answers_read_back_whole_and_a_failed_one_is_asked_again(tmp_path):
    path = tmp_path / "answers.jsonl"
    journal = AnswerJournal.open(path)
    journal.append(_answer("q1"))
    journal.append(_answer("q2", error="LMServerError: 500"))
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2  # on disk before append returns

    again = AnswerJournal.open(path)
    assert set(again.answered(["q1", "q2", "q3"])) == {"q1"}, "failed and unknown questions are asked"
    assert again.kept["q1"].full() == _answer("q1") and again.kept["q2"].error == "LMServerError: 500"
    again.append(_answer("q2", answer="7"))  # asked again: the last line counts
    assert AnswerJournal.open(path).answered(["q2"])["q2"].answer == "7"


def test_a_line_cut_short_by_a_kill_is_ignored_with_a_warning_and_cut_off(tmp_path, caplog):
    path = tmp_path / "answers.jsonl"
    journal = AnswerJournal.open(path)
    journal.append(_answer("q1"))
    journal.append(_answer("q2"))
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) - 25])  # the process died in the middle of the second line

    with caplog.at_level(logging.WARNING):
        again = AnswerJournal.open(path)
    assert set(again.answered(["q1", "q2"])) == {"q1"}
    assert "last line is cut short" in caplog.text and "asked again" in caplog.text
    again.append(_answer("q2"))  # starts on a line of its own, not glued to the cut one
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [row["question_id"] for row in rows] == ["q1", "q2"]


def test_a_line_that_is_not_an_answer_is_skipped_with_its_number(tmp_path, caplog):
    path = tmp_path / "answers.jsonl"
    line = json.dumps({"question_id": "q1", "question": "?", "doc_ids": [], "answer": "1"})
    path.write_text(f"{line}\n[1, 2]\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        assert set(read_answers(path)) == {"q1"}
    assert "line 2 is not an answer" in caplog.text


def test_after_close_nothing_more_is_written(tmp_path):
    """The threads an interrupted run abandons may still finish a question: the count already printed
    must stay the count on disk."""
    path = tmp_path / "answers.jsonl"
    journal = AnswerJournal.open(path)
    journal.append(_answer("q1"))
    journal.close()
    journal.append(_answer("q2"))
    assert set(read_answers(path)) == {"q1"}


def test_appends_from_many_threads_stay_whole_lines(tmp_path):
    path = tmp_path / "answers.jsonl"
    journal = AnswerJournal.open(path)
    threads = [
        threading.Thread(target=journal.append, args=(_answer(f"q{i}", "x" * 5000),)) for i in range(16)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(read_answers(path)) == {f"q{i}" for i in range(16)}


def test_a_full_disk_is_one_warning_and_the_run_goes_on(tmp_path, caplog):
    journal = AnswerJournal.open(tmp_path / "missing-folder" / "answers.jsonl")
    with caplog.at_level(logging.WARNING):
        journal.append(_answer("q1"))
        journal.append(_answer("q2"))
    assert caplog.text.count("cannot write") == 1 and "free space" in caplog.text


def test_a_line_with_the_right_id_and_wrong_types_is_set_aside_and_its_question_asked_again(tmp_path, caplog):
    """Issue 33: such a line crashed every rerun with a TypeError in run_outputs.py until edited by hand."""
    path = tmp_path / "answers.jsonl"
    good = json.dumps(dataclasses.asdict(_answer("q1")))
    bad = [
        {"question_id": "q2", "question": "?", "doc_ids": "d1", "answer": "1"},  # a string for a list
        {"question_id": "q3", "question": "?", "doc_ids": [], "records": [1, 2]},  # records not objects
        {"question_id": "q4", "question": "?", "doc_ids": [], "seconds": "fast"},
        {"question_id": "q5", "question": "?", "doc_ids": [], "trace": {"extract": {"repair_calls": "x"}}},
        {"question_id": "q6", "question": "?", "doc_ids": [], "facts": [{"doc_id": "d1"}]},  # no field
        {"question_id": "q7", "question": 7, "doc_ids": []},
    ]
    lines = [good, *(json.dumps(b) for b in bad)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with caplog.at_level(logging.WARNING):
        journal = AnswerJournal.open(path)
    assert set(journal.kept) == {"q1"} and journal.kept["q1"].full() == _answer("q1")
    assert "line 2 is not an answer (doc_ids: Input should be a valid array)" in caplog.text
    assert caplog.text.count("that question is asked again") == len(bad)
    assert "answers.rejected.jsonl" in caplog.text
    # set aside, not lost: the journal keeps the valid line, the rejected ones sit beside it, whole
    assert path.read_text(encoding="utf-8").splitlines() == [good]
    assert (tmp_path / "answers.rejected.jsonl").read_text(encoding="utf-8").splitlines() == lines[1:]
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert set(AnswerJournal.open(path).kept) == {"q1"}
    assert "not an answer" not in caplog.text  # said once, not on every rerun


def test_a_journal_that_is_a_folder_is_one_clear_error(tmp_path):
    import pytest

    from evaluate.runs.journal import JournalUnusable

    (tmp_path / "answers.jsonl").mkdir()
    with pytest.raises(JournalUnusable, match="is not a file .a folder.*move it aside"):
        AnswerJournal.open(tmp_path / "answers.jsonl")


def test_kept_answers_read_back_whole_after_the_journal_is_repaired(tmp_path):
    """The run keeps each answer's place in the journal, not the answer (issue 33 item 11): a place that
    set-aside lines and a cut-short last line moved still reads back the answer written there."""
    path = tmp_path / "answers.jsonl"
    answers = [_answer("q1", answer="a" * 300), _answer("q2", answer="b"), _answer("q3", error="boom")]
    lines = [json.dumps(dataclasses.asdict(a)) for a in answers]
    bad = json.dumps({"question_id": "q9", "question": 9, "doc_ids": []})
    path.write_text("\n".join([bad, lines[0], bad, lines[1], lines[2]]) + '\n{"question_id": "q4"', "utf-8")
    journal = AnswerJournal.open(path)
    assert {qid: o.full() for qid, o in journal.kept.items()} == {a.question_id: a for a in answers}
    appended = journal.append(_answer("q4"))
    assert appended.full() == _answer("q4") and journal.kept["q1"].full() == answers[0]
    assert {qid: o.full() for qid, o in read_answers(path).items()} == {
        a.question_id: a for a in [*answers, _answer("q4")]
    }
