"""Rerunning `collate run` into the same --out (issue 22 item 4), in process, against the fake LM.

The interrupted case is tests/evaluate_run/test_interrupt_resume.py (a subprocess and a real Ctrl-C);
these are the other ways a folder is resumed: every question already answered, one that failed, one
whose line a killed process cut short, the per-question path of flat RAG, and other settings refused.
"""

from __future__ import annotations

import json
from pathlib import Path

from collate import run as collate_run
from evaluate.dataset import load_dataset

LIMIT = 3


def _run(small_corpus, out: Path, *extra: str, limit: int = LIMIT) -> int:
    corpus, index = small_corpus
    return collate_run.main(
        ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out),
         "--limit", str(limit), "--no-progress", "--no-autolog", "--no-judge", *extra]
    )  # fmt: skip


def _questions(small_corpus) -> list:
    return load_dataset(small_corpus[0] / "dataset.json")[:LIMIT]


def _asked(server, kind: str, questions: list[str]) -> list[int]:
    with server._lock:
        sent = [r.last_message for r in server.records if r.kind == kind]
    return [sum(q in text for text in sent) for q in questions]


def _results(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]


def test_a_finished_run_rerun_asks_nothing_and_scores_the_same(small_corpus, brain_server, tmp_path, capsys):
    out = tmp_path / "run"
    assert _run(small_corpus, out) == 0
    first = _results(out)
    brain_server.reset_counts()
    capsys.readouterr()
    assert _run(small_corpus, out) == 0
    err = capsys.readouterr().err
    assert brain_server.calls == 0, "not even the LM check: there is nothing to ask"
    assert f"resuming: {LIMIT} of {LIMIT} questions already answered" in err and "nothing left to ask" in err
    again = _results(out)
    assert [(r["question_id"], r["answer"], r["scores"]) for r in again] == [
        (r["question_id"], r["answer"], r["scores"]) for r in first
    ]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["n"] == LIMIT and summary["resumed"] == LIMIT


def test_a_question_that_failed_or_was_cut_short_is_asked_again(
    small_corpus, brain_server, tmp_path, capsys, caplog
):
    out = tmp_path / "run"
    assert _run(small_corpus, out) == 0
    journal = out / "answers.jsonl"
    ids = [item.question_id for item in _questions(small_corpus)]
    rows = {
        row["question_id"]: row for row in map(json.loads, journal.read_text(encoding="utf-8").splitlines())
    }
    failed = {**rows[ids[0]], "answer": "", "error": "LMServerError: the endpoint fell over"}
    # the first question failed; the last one's line was cut short by a kill in the middle of its write
    lines = [json.dumps(failed), json.dumps(rows[ids[1]]), json.dumps(rows[ids[2]])[:40]]
    journal.write_text("\n".join(lines), encoding="utf-8")
    brain_server.reset_counts()
    capsys.readouterr()
    assert _run(small_corpus, out) == 0
    err = capsys.readouterr().err
    questions = [item.question for item in _questions(small_corpus)]
    assert _asked(brain_server, "plan", questions) == [1, 0, 1]
    assert "last line is cut short" in caplog.text  # a warning on stderr, outside pytest
    assert "resuming: 1 of 3 questions already answered" in err and "(1 that failed is asked again)" in err
    assert all(row["error"] is None and row["answer"] for row in _results(out))


def test_flat_rag_keeps_each_answer_as_it_comes_and_resumes(small_corpus, brain_server, tmp_path):
    out = tmp_path / "flat"
    assert _run(small_corpus, out, "--program", "flat-rag") == 0
    kept = [json.loads(line) for line in (out / "answers.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(row["question_id"] for row in kept) == sorted(
        i.question_id for i in _questions(small_corpus)
    )
    brain_server.reset_counts()
    assert _run(small_corpus, out, "--program", "flat-rag") == 0
    assert brain_server.calls_by_kind()["flat_rag"] == 0
    assert len(_results(out)) == LIMIT


def test_other_settings_into_a_run_folder_are_one_line_and_nothing_is_asked(
    small_corpus, brain_server, tmp_path, capsys
):
    out = tmp_path / "run"
    assert _run(small_corpus, out) == 0
    brain_server.reset_counts()
    capsys.readouterr()
    assert _run(small_corpus, out, limit=2) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: --out {out} holds a run with other settings (") and "\n" not in err
    assert "limit 2 now, 3 there" in err and "give a new --out" in err and f"delete {out}" in err
    assert brain_server.calls == 0


def test_the_questions_a_budget_cut_are_asked_by_a_rerun_with_a_larger_cap(
    small_corpus, brain_server, tmp_path, monkeypatch, capsys
):
    """A cap is not part of what a run is (run.json): the same run with a larger one finishes it. (The
    first plan call alone costs more than this cap, so every question is cut.)"""
    monkeypatch.setenv("COLLATE_PRICE_IN", "1000")
    monkeypatch.setenv("COLLATE_PRICE_OUT", "1000")
    out = tmp_path / "run"
    assert _run(small_corpus, out, "--max-usd", "0.5") == 1
    cut = json.loads((out / "summary.json").read_text(encoding="utf-8"))["budget_cut"]
    ids = [item.question_id for item in _questions(small_corpus)]
    assert sorted(cut) == sorted(ids)
    brain_server.reset_counts()
    capsys.readouterr()
    assert _run(small_corpus, out) == 0
    assert _asked(brain_server, "plan", [item.question for item in _questions(small_corpus)]) == [1] * LIMIT
    err = capsys.readouterr().err
    assert f"resuming: 0 of {LIMIT} questions already answered" in err and f"({LIMIT} that failed are" in err
    assert [row["question_id"] for row in _results(out)] == ids
    assert all(row["error"] is None for row in _results(out))


def test_a_journal_line_of_the_right_id_and_wrong_types_is_set_aside_and_its_question_asked_again(
    small_corpus, brain_server, tmp_path, capsys, caplog
):
    """Issue 33: such a line crashed every rerun (TypeError in run_outputs.py) until edited by hand."""
    out = tmp_path / "run"
    assert _run(small_corpus, out) == 0
    journal = out / "answers.jsonl"
    rows = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    broken = rows[1]["question_id"]
    rows[1] |= {"doc_ids": 3, "records": "none", "missing": [5], "trace": {"extract": []}}
    journal.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    brain_server.reset_counts()
    capsys.readouterr()
    assert _run(small_corpus, out) == 0
    assert "line 2 is not an answer" in caplog.text and "answers.rejected.jsonl" in caplog.text
    questions = [item.question for item in _questions(small_corpus)]
    asked = _asked(brain_server, "plan", questions)
    assert asked == [int(item.question_id == broken) for item in _questions(small_corpus)]
    assert {r["question_id"] for r in _results(out)} == {
        item.question_id for item in _questions(small_corpus)
    }
    assert json.loads((out / "answers.rejected.jsonl").read_text(encoding="utf-8"))["question_id"] == broken


def test_an_answers_file_that_is_a_folder_is_one_line_and_exit_2(
    small_corpus, brain_server, tmp_path, capsys
):
    out = tmp_path / "run"
    (out / "answers.jsonl").mkdir(parents=True)
    assert _run(small_corpus, out) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "answers.jsonl is a folder" in err and "move it aside" in err
    assert brain_server.calls == 0
