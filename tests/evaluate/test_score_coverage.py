"""`python -m evaluate.score` on partial, repeated, empty and failed predictions: every question of the
dataset counts, unanswered ones as wrong, and each kind is named (never a quiet "decided")."""

import json

import pytest

import collate.score as score


def _dataset(n: int) -> list[dict]:
    """n count questions the matcher decides on its own ("共有k家")."""
    items = []
    for k in range(1, n + 1):
        items.append(
            {
                "question_id": f"q{k:02d}",
                "question": f"针对中国A股市场，在你的知识库中2021年有多少家公司的ESG报告披露了第{k}类信息？",
                "final_answer": f"根据2021年数据分析，共有{k}家公司披露了该类信息。",
                "metadata": [
                    {"id": f"d{k}", "symbol": "600000", "year": 2021, "doctype": "A股ESG报告", "schema": {}}
                ],
            }
        )
    return items


def _right(k: int) -> dict:
    return {"question_id": f"q{k:02d}", "model_answer": f"共有{k}家公司。"}


def _score(capsys, tmp_path, n, predictions, *extra):
    dataset, pred = tmp_path / "ds.json", tmp_path / "pred.json"
    dataset.write_text(json.dumps(_dataset(n), ensure_ascii=False), encoding="utf-8")
    pred.write_text(json.dumps(predictions, ensure_ascii=False), encoding="utf-8")
    code = score.main(["--dataset", str(dataset), "--predictions", str(pred), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_partial_run_does_not_score_perfect(capsys, tmp_path):
    # 5 right answers for a dataset of 32 questions: the report of issue 11 said "1.000 ... n=5"
    code, out, err = _score(capsys, tmp_path, 32, [_right(k) for k in range(1, 6)], "--json")
    assert code == 0
    report = json.loads(out)
    assert (report["n"], report["answered"], report["missing"]) == (32, 5, 27)
    assert report["coverage"] == pytest.approx(5 / 32)
    assert report["final_accuracy"] == pytest.approx(5 / 32)  # the headline: unanswered counted wrong
    assert report["final_accuracy_answered"] == 1.0  # the settled-only figure, beside it
    assert report["missing_ids"] == [f"q{k:02d}" for k in range(6, 33)]  # all of them in the JSON
    assert "27 of 32 questions have no prediction" in err and "q06" in err and "... and 17 more" in err
    assert "q16" not in err  # ten ids shown on the warning line


def test_text_report_shows_coverage_beside_both_figures(capsys, tmp_path):
    code, out, err = _score(
        capsys, tmp_path, 4, [_right(1), _right(2), {"question_id": "q03", "model_answer": "共有9家"}]
    )
    assert code == 0
    assert "final accuracy 0.500: 2 of 4 correct" in out and "coverage 3/4 answered" in out
    assert "decided 3 (3 by the matcher, 0 by the judge), accuracy over the decided 0.667" in out
    assert "1 unanswered counted wrong" in out
    assert "1 of 4 questions have no prediction, counted wrong: q04" in err


def test_a_repeated_question_id_is_an_error_naming_it(capsys, tmp_path):
    predictions = [_right(1), _right(2), {"question_id": "q02", "model_answer": "共有5家"}]
    code, out, err = _score(capsys, tmp_path, 3, predictions)
    assert code == 2 and out == ""
    assert "question id q02 appears 2 times" in err and "keep one answer per question" in err
    assert "pred.json" in err and len(err.strip().splitlines()) == 1


def test_an_empty_predictions_list_is_an_error_not_zero_over_zero(capsys, tmp_path):
    code, out, err = _score(capsys, tmp_path, 3, [])
    assert code == 2 and out == ""
    assert "no predictions to score" in err and "pred.json" in err and len(err.strip().splitlines()) == 1


def test_the_api_refuses_repeats_and_nothing_too(tmp_path):
    from evaluate.dataset import load_dataset

    path = tmp_path / "ds.json"
    path.write_text(json.dumps(_dataset(2), ensure_ascii=False), encoding="utf-8")
    items = load_dataset(path)
    with pytest.raises(score.InputError, match="question id q01 appears 2 times"):
        score.score_items(items, [_right(1), _right(1)])
    with pytest.raises(score.InputError, match="no predictions"):
        score.score_items(items, [])


def test_empty_and_failed_answers_are_counted_and_shown_not_decided(capsys, tmp_path):
    # issue 12: four empty flat-RAG answers showed as "errors=0, 4 decided by the matcher", no warning
    predictions = [
        _right(1),
        {"question_id": "q02", "model_answer": ""},
        {"question_id": "q03", "model_answer": "  "},
        {"question_id": "q04", "model_answer": "", "error": "RuntimeError: the LM endpoint fell over"},
    ]
    code, out, err = _score(capsys, tmp_path, 4, predictions, "--json")
    assert code == 0
    report = json.loads(out)
    assert (report["empty_answers"], report["failed_answers"], report["decided"], report["answered"]) == (
        2,
        1,
        1,
        1,
    )
    assert report["empty_ids"] == ["q02", "q03"] and report["failed_ids"] == ["q04"]
    assert report["final_accuracy"] == 0.25 and report["final_accuracy_answered"] == 1.0
    per = {q["question_id"]: q for q in report["per_question"]}
    assert per["q02"]["decided_by"] == "empty" and per["q02"]["correct"] is False
    assert per["q04"]["decided_by"] == "failed" and "fell over" in per["q04"]["reason"]
    assert "2 of 4 answers are empty, counted wrong (not decided by the matcher): q02, q03" in err
    assert "1 of 4 questions failed, counted wrong: q04" in err


def test_a_complete_run_has_no_warning(capsys, tmp_path):
    code, out, err = _score(capsys, tmp_path, 3, [_right(k) for k in range(1, 4)], "--json")
    report = json.loads(out)
    assert code == 0 and err == ""
    assert report["coverage"] == 1.0 and report["final_accuracy"] == report["final_accuracy_answered"] == 1.0
    assert report["missing_ids"] == report["empty_ids"] == report["failed_ids"] == []
