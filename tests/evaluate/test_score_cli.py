"""`python -m evaluate.score`: matcher first, the judge for the rest, process and full accuracy, bad input."""

import json

import dspy
import pytest
from dspy.utils.dummies import DummyLM

import collate.score as score

QUESTION_TOP = "针对中国A股市场，请你给出你知识库中2021年资本充足率最高的三家公司股票代码"
QUESTION_FIRM = "针对中国A股市场，在你的ESG报告知识库中2021年审验客户数量最多的第三方审验机构是哪家？"


def _row(doc, symbol, **values):
    return {"id": doc, "symbol": symbol, "year": 2021, "doctype": "A股年报", "schema": {}, **values}


DATASET = [
    {
        "question_id": "q_top",
        "question": QUESTION_TOP,
        "source_answer": [],
        "final_answer": "资本充足率最高的三家公司股票代码分别是：601398、002142、601166。",
        "metadata": [
            _row("d1", "601398", value_capital_adequacy_ratio_pct=18.02),
            _row("d2", "002142", value_capital_adequacy_ratio_pct=15.44),
            _row("d3", "601166", value_capital_adequacy_ratio_pct=14.39),
            _row("d4", "002839", value_capital_adequacy_ratio_pct=14.30),
        ],
    },
    {
        "question_id": "q_wrong",
        "question": QUESTION_TOP.replace("2021", "2022"),
        "source_answer": [],
        "final_answer": "分别是：601398、601939、601288。",
        "metadata": [_row("e1", "601398"), _row("e2", "601939"), _row("e3", "601288"), _row("e4", "002839")],
    },
    {
        "question_id": "q_firm",
        "question": QUESTION_FIRM,
        "source_answer": [],
        "final_answer": "审验客户数量最多的机构是普华永道中天会计师事务所(特殊普通合伙)",
        "metadata": [_row("f1", "601077")],
    },
]
PREDICTIONS = [
    {
        "question_id": "q_top",
        "model_answer": "601398、002142、601166",
        "facts": {
            "d1": {"capital_adequacy_ratio": "18.02%"},
            "d2": {"capital_adequacy_ratio": 15.44},
            "d3": {"capital_adequacy_ratio": 0.1439},
            "d4": {"capital_adequacy_ratio": 14.3},
        },
    },
    {"question_id": "q_wrong", "model_answer": "601398、601288、601939"},  # wrong order
    {"question_id": "q_firm", "model_answer": "普华永道"},  # a short name: the matcher cannot decide
]


@pytest.fixture
def files(tmp_path):
    dataset, predictions = tmp_path / "ds.json", tmp_path / "pred.json"
    dataset.write_text(json.dumps(DATASET, ensure_ascii=False), encoding="utf-8")
    predictions.write_text(json.dumps(PREDICTIONS, ensure_ascii=False), encoding="utf-8")
    return dataset, predictions


def _run(capsys, argv):
    code = score.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_matcher_only_reports_undecided_and_both_accuracies(files, capsys):
    dataset, predictions = files
    code, out, _ = _run(capsys, ["--dataset", str(dataset), "--predictions", str(predictions), "--json"])
    assert code == 0
    report = json.loads(out)
    assert (report["n"], report["decided"], report["judged"], report["undecided"]) == (3, 2, 0, 1)
    # only a correct answer scores: the undecided one counts as not correct, and is reported apart
    assert report["final_accuracy"] == pytest.approx(1 / 3)
    assert report["final_accuracy_decided"] == 0.5  # 1 of the 2 decided
    assert report["judge"] == "" and report["self_judged"] is False
    per = {q["question_id"]: q for q in report["per_question"]}
    assert per["q_top"]["correct"] is True and per["q_wrong"]["correct"] is False
    assert per["q_firm"]["decided_by"] == "undecided" and per["q_firm"]["correct"] is None
    # process and full accuracy for the one question with facts
    assert report["process_micro"] == {"cell": 1.0, "row": 1.0, "column": 1.0}
    assert per["q_top"]["full"] is True and report["full_accuracy"] == 1.0
    assert report["dataset_hash"]


def test_judge_settles_the_undecided_and_caches(files, capsys, monkeypatch, tmp_path):
    dataset, predictions = files
    lm = DummyLM({"普华永道": {"correct": "True", "reason": "same firm, short name"}})
    monkeypatch.setattr(score, "build_judge_lm", lambda model: lm)
    argv = [
        "--dataset",
        str(dataset),
        "--predictions",
        str(predictions),
        "--judge",
        "openai/judge-x",
        "--json",
    ]
    code, out, _ = _run(capsys, argv)
    report = json.loads(out)
    assert code == 0 and (report["decided"], report["judged"], report["undecided"]) == (2, 1, 0)
    assert report["final_accuracy"] == pytest.approx(2 / 3)
    assert len(lm.history) == 1  # only the undecided answer went to the judge
    assert (tmp_path / "judge_cache.sqlite").exists()
    code, out, _ = _run(capsys, argv)
    assert json.loads(out)["judged"] == 1 and len(lm.history) == 1  # second run: from the cache


def test_judge_failure_leaves_the_question_undecided(files, capsys, monkeypatch):
    dataset, predictions = files

    class DownEngine:  # a rule-based engine whose every call fails, as a dead endpoint would
        def complete(self, request):
            raise ConnectionError("judge endpoint down")

    broken = dspy.LM("fake/down", engine=DownEngine(), cache=False, num_retries=0)
    monkeypatch.setattr(score, "build_judge_lm", lambda model: broken)
    code, out, _ = _run(
        capsys, ["--dataset", str(dataset), "--predictions", str(predictions), "--judge", "m", "--json"]
    )
    report = json.loads(out)
    assert code == 0 and report["undecided"] == 1 and report["decided"] == 2
    assert "judge failed" in {q["question_id"]: q for q in report["per_question"]}["q_firm"]["reason"]


def test_records_file_and_text_summary(files, capsys, tmp_path):
    dataset, predictions = files
    records = tmp_path / "rec.json"
    rows = [{"id": "e1", "symbol": "601398"}, {"id": "e2", "symbol": "601939"}]  # no fields: every cell wrong
    records.write_text(json.dumps({"q_wrong": rows}), encoding="utf-8")
    code, out, _ = _run(
        capsys, ["--dataset", str(dataset), "--predictions", str(predictions), "--records", str(records)]
    )
    assert code == 0
    assert "final accuracy 0.333: 1 of 3 correct" in out and "1 undecided" in out
    assert "accuracy over the decided 0.500" in out and "judge: none" in out
    # process accuracy in words, never a Python dict
    assert (
        "process accuracy over 2 questions with records: macro cell 1.000 row 1.000 column 1.000; micro"
        in out
    )
    assert "{" not in out and "'cell'" not in out


@pytest.mark.parametrize(
    "content, fragment",
    [
        (None, "no such predictions file"),
        ("{}", "expected a JSON list"),
        ('[{"question_id": "q_top"}]', "needs question_id and model_answer"),
        ('[{"question_id": "q_unknown", "model_answer": "x"}]', "not in the dataset"),
        ("[oops", "not valid JSON"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(files, capsys, tmp_path, content, fragment):
    dataset, _ = files
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content, encoding="utf-8")
    code, out, err = _run(capsys, ["--dataset", str(dataset), "--predictions", str(bad), "--json"])
    assert code == 2 and out == ""
    assert fragment in err and len(err.strip().splitlines()) == 1


def test_missing_dataset_exit_2(files, capsys, tmp_path):
    _, predictions = files
    code, _, err = _run(capsys, ["--dataset", str(tmp_path / "none.json"), "--predictions", str(predictions)])
    assert code == 2 and "no such dataset" in err


def test_judge_without_model_config_is_a_clear_error(files, capsys, monkeypatch):
    from programs.lm.settings import NoLMConfigured

    def no_lm(model):
        raise NoLMConfigured()

    monkeypatch.setattr(score, "build_judge_lm", no_lm)
    dataset, predictions = files
    code, _, err = _run(
        capsys, ["--dataset", str(dataset), "--predictions", str(predictions), "--judge", "m"]
    )
    assert code == 2 and "COLLATE_LM" in err and len(err.strip().splitlines()) == 1


def test_build_judge_lm_uses_settings_at_temperature_zero():
    lm = score.build_judge_lm("openai/judge-model")
    assert lm.model == "openai/judge-model" and lm.kwargs["temperature"] == 0.0


def test_malformed_records_of_one_question_do_not_sink_the_run(files):
    from evaluate.dataset import load_dataset

    items = load_dataset(files[0])
    predictions = [
        {"question_id": "q_top", "model_answer": "601398、002142、601166", "records": ["not a record"]},
        {"question_id": "q_wrong", "model_answer": "601398、601939、601288", "records": [{"id": "e1"}]},
    ]
    report = score.score_items(items, predictions).as_dict()
    assert report["correct"] == 2 and report["process_micro"]["cell"] == 0.0
    assert [q["full"] for q in report["per_question"]] == [False, False]


@pytest.mark.parametrize(
    "content, fragment",
    [
        (None, "no such records file"),
        ("{oops", "not valid JSON"),
        ('"facts"', "expected {question_id: facts-or-records}"),
        ('{"q_top": 3}', "facts must be {doc_id: {value_key: value}}"),
    ],
)
def test_bad_records_file_is_one_line_naming_the_shape_and_exit_2(files, capsys, tmp_path, content, fragment):
    dataset, predictions = files
    records = tmp_path / "rec.json"
    if content is not None:
        records.write_text(content, encoding="utf-8")
    code, out, err = _run(
        capsys, ["--dataset", str(dataset), "--predictions", str(predictions), "--records", str(records)]
    )
    assert code == 2 and out == ""
    assert fragment in err and str(records) in err and len(err.strip().splitlines()) == 1


def test_records_file_as_a_list_of_question_entries(files, tmp_path):
    records = tmp_path / "rec.json"
    records.write_text(
        json.dumps(
            [
                {"question_id": "q_wrong", "facts": {"e1": {"value_x": 1}}},
                {"question_id": "q_top", "records": [{"id": "d1", "value_y": 2}]},
                {"question_id": "q_firm"},
            ]
        ),
        encoding="utf-8",
    )
    assert score.load_records(records) == {"q_wrong": {"e1": {"value_x": 1}}, "q_top": {"d1": {"value_y": 2}}}
