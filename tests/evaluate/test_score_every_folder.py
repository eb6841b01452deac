"""Issue 31 item 3: `python -m evaluate.score RUN_DIR` scores every run folder a command writes.

Before: `collate run` recorded the dataset in its summary.json as an empty string (the dataset path was
a tag, not a param, where the summary looked for it), so every fresh run folder was refused with exit 2
"names no dataset (a run from before it did ...)"; a stopped run's folder (answers.jsonl only) and
`collate ask --run-dir`'s (answer.json) were "not a run folder". Each folder here is written by the real
command, against the rule-based fake LM on 127.0.0.1.
"""

from __future__ import annotations

import json
from pathlib import Path

import collate.score as score
from collate import ask as collate_ask
from collate import run as collate_run
from evaluate.dataset import load_dataset

LIMIT = 2


def _score(capsys, *argv) -> tuple[int, dict, str]:
    code = score.main([str(a) for a in argv] + ["--json"])
    captured = capsys.readouterr()
    return code, (json.loads(captured.out) if code == 0 else {}), captured.err


def _run(small_corpus, out: Path) -> int:
    corpus, index = small_corpus
    return collate_run.main(
        ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out),
         "--limit", str(LIMIT), "--concurrency", "1", "--no-judge", "--no-autolog", "--no-progress"]
    )  # fmt: skip


def test_a_finished_run_and_the_same_run_stopped_before_its_end_are_scored(
    small_corpus, brain_server, tmp_path, capsys
):
    out = tmp_path / "run"
    assert _run(small_corpus, out) == 0, capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    capsys.readouterr()
    code, report, err = _score(capsys, out)
    assert code == 0, err
    assert report["n"] == LIMIT and report["final_accuracy"] == summary["final_accuracy"]
    assert report["process_macro"] == summary["process_macro"]
    # a run stopped by Ctrl-C leaves its journal and run.json, not the files written at the end
    for name in ("results.jsonl", "agent_output.json", "summary.json"):
        (out / name).unlink()
    code, stopped, err = _score(capsys, out)
    assert code == 0, err
    assert stopped["n"] == LIMIT and stopped["final_accuracy"] == summary["final_accuracy"]
    assert stopped["process_macro"] == summary["process_macro"]


def test_an_ask_of_a_dataset_question_is_scored_and_a_free_question_says_why_not(
    small_corpus, brain_server, tmp_path, capsys
):
    corpus, index = small_corpus
    dataset = corpus / "dataset.json"
    item = load_dataset(dataset)[0]
    folder = tmp_path / "ask"
    code = collate_ask.main(
        ["--index", str(index), "--dataset", str(dataset), "--question-id", item.question_id,
         "--run-dir", str(folder), "--no-progress"]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    code, report, err = _score(capsys, folder)
    assert code == 0, err
    assert report["n"] == 1 and [q["question_id"] for q in report["per_question"]] == [item.question_id]
    assert report["missing"] == 0 and report["process_macro"]  # the records were saved and read back

    free = tmp_path / "free"
    code = collate_ask.main(["--index", str(index), "--run-dir", str(free), "--no-progress", item.question])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    code, _, err = _score(capsys, free)
    assert code == 2 and "--dataset DS --question-id QID" in err and len(err.strip().splitlines()) == 1
