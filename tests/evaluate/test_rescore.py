"""Issue 21.5: any run can be scored again from its folder. `python -m evaluate.score RUN_DIR` reads the
answers and records the run saved (results.jsonl, or agent_output.json alone), finds the dataset and
the question selection in its summary, recomputes final and process accuracy, and prints them in
words; --split/--seed score one part of the split."""

from __future__ import annotations

import json
import shutil

import dspy
import pytest

import collate.score as score
from evaluate.dataset import load_dataset, split
from evaluate.runs import evaluation
from evaluate.runs.job import RunJob
from programs.lm.settings import Settings

N = 10


def _dataset() -> list[dict]:
    """N questions "which company is highest", each over two documents with one gold value."""
    items = []
    for k in range(N):
        top, other = f"60000{k}", f"60100{k}"
        items.append(
            {
                "question_id": f"q{k}",
                "question": f"针对中国A股市场，请你给出你知识库中2021年资本充足率最高的公司股票代码（第{k}组）",
                "final_answer": f"资本充足率最高的公司股票代码为：{top}",
                "metadata": [
                    {
                        "id": f"d{k}a",
                        "symbol": top,
                        "year": 2021,
                        "doctype": "A股年报",
                        "schema": {},
                        "value_capital_adequacy_ratio_pct": 15.0 + k,
                    },
                    {
                        "id": f"d{k}b",
                        "symbol": other,
                        "year": 2021,
                        "doctype": "A股年报",
                        "schema": {},
                        "value_capital_adequacy_ratio_pct": 11.0,
                    },
                ],
            }
        )
    return items


class _Scripted(dspy.Module):
    """Right code for even groups, the other one for odd; every third group's second value misread."""

    def forward(self, question, doc_ids=None):
        k = int(question.split("第")[1][0])
        records = [
            {"id": f"d{k}a", "symbol": f"60000{k}", "capital_adequacy_ratio": 15.0 + k},
            {"id": f"d{k}b", "symbol": f"60100{k}", "capital_adequacy_ratio": 12.0 if k % 3 == 0 else 11.0},
        ]
        answer = f"最高的是{'60000' if k % 2 == 0 else '60100'}{k}"
        return dspy.Prediction(answer=answer, records=records, facts=[], run_log={"doc_interactions": {}})


@pytest.fixture
def run(tmp_path):
    """A run folder written by evaluate_program over the whole dataset, and the dataset's path."""
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(_dataset(), ensure_ascii=False), encoding="utf-8")
    result = evaluation.evaluate_program(
        _Scripted(),
        load_dataset(path),
        RunJob(
            variant="scripted",
            out_dir=tmp_path / "run",
            params={"split": "all", "seed": 0, "limit": ""},
            dataset_file=str(path),  # as collate run passes it
            autolog=False,
            progress=False,
        ),
        settings=Settings(lm="fake/x"),
    )
    return result, path


def _score(capsys, *argv):
    code = score.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_run_folder_is_scored_again_to_the_same_figures(run, capsys):
    result, _ = run
    code, out, err = _score(capsys, result.out_dir, "--json")
    assert code == 0, err
    report, summary = json.loads(out), result.summary
    for key in ("n", "correct", "final_accuracy", "final_accuracy_decided", "undecided", "full_accuracy"):
        assert report[key] == summary[key], key
    assert (
        report["process_macro"] == summary["process_macro"]
        and report["process_micro"] == summary["process_micro"]
    )
    assert report["final_accuracy"] == 0.5 and 0 < report["process_micro"]["cell"] < 1


def test_agent_output_alone_carries_the_records(run, capsys, tmp_path):
    result, path = run
    alone = tmp_path / "elsewhere"
    alone.mkdir()
    shutil.copy(result.out_dir / "agent_output.json", alone / "agent_output.json")
    code, out, err = _score(capsys, alone / "agent_output.json", "--dataset", path, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["process_micro"] == result.summary["process_micro"]  # from json_data
    assert report["final_accuracy"] == result.summary["final_accuracy"]


def test_results_jsonl_is_read(run, capsys):
    result, _ = run
    code, out, err = _score(capsys, "--predictions", result.out_dir / "results.jsonl", "--json")
    assert code == 0, err  # the dataset comes from the summary beside it
    assert json.loads(out)["process_macro"] == result.summary["process_macro"]


def test_split_scores_one_part_of_the_run(run, capsys):
    result, path = run
    test_ids = [item.question_id for item in split(load_dataset(path), seed=0).test]
    code, out, err = _score(capsys, result.out_dir, "--split", "test", "--seed", "0", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert sorted(q["question_id"] for q in report["per_question"]) == sorted(test_ids)
    assert report["n"] == len(test_ids)
    assert report["missing"] == 0  # the run's other answers are left out, not counted missing
    assert f"left out {N - len(test_ids)} answers to questions outside split test" in err


def test_the_text_report_is_readable(run, capsys):
    result, _ = run
    code, out, _ = _score(capsys, result.out_dir, "--verbose")
    assert code == 0
    assert "final accuracy 0.500: 5 of 10 correct" in out and "judge: none" in out
    assert "process accuracy over 10 questions with records: macro cell" in out
    assert "{" not in out and "'cell'" not in out  # no Python dict anywhere
    lines = [line for line in out.splitlines() if line.startswith("q") and "  " in line]
    assert len(lines) == N and any(
        "wrong" in line and "matcher" in line and "cells" in line for line in lines
    )


def test_a_run_without_a_dataset_named_asks_for_one(run, capsys):
    result, _ = run
    summary_path = result.out_dir / "summary.json"
    summary = json.loads(summary_path.read_text())
    summary.pop("inputs")  # a run folder written before runs named their dataset
    summary_path.write_text(json.dumps(summary))
    code, out, err = _score(capsys, result.out_dir)
    assert code == 2 and out == "" and "pass --dataset DS" in err and len(err.strip().splitlines()) == 1


def test_not_a_run_folder_is_one_line_naming_the_fix(capsys, tmp_path):
    code, _, err = _score(capsys, tmp_path)
    assert code == 2 and "holds no results.jsonl or agent_output.json" in err
    code, _, err = _score(capsys)
    assert code == 2 and "pass a run folder" in err


def test_judge_self_is_the_runs_model_and_is_reported(run, capsys, monkeypatch):
    result, _ = run
    built = []
    monkeypatch.setattr(score, "build_judge_lm", lambda model: built.append(model) or dspy.utils.DummyLM({}))
    code, out, err = _score(capsys, result.out_dir, "--judge", "self", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert built == ["fake/x"] and report["judge"] == "fake/x" and report["self_judged"] is True
