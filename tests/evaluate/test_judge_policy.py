"""Issue 21.3: the model does not grade itself. No judge unless one is named; the model under test judges
only when asked for in so many words, and then the run says so (summary, MLflow tag, console)."""

from __future__ import annotations

import json

import dspy
import pytest
from dspy.utils.dummies import DummyLM
from mlflow.tracking import MlflowClient

from evaluate import tracking
from evaluate.matching.judge import AnswerJudge, JudgeCache
from evaluate.runs import evaluation
from evaluate.runs.job import RunJob
from programs.lm.settings import Settings

US_Q = "Based on US stock market, Which three companies had the highest debt-to-assets ratios in {year}? Provide their stock symbols."


def _dataset() -> list[dict]:
    """Three ticker questions and one whose gold the matcher cannot check (a firm's short name)."""
    items = []
    for year, gold in ((2021, "ARAY, SAIC, AMCR"), (2022, "FLEX, WOOF, CNM"), (2023, "ORCL, GEN, BBY")):
        tickers = gold.split(", ")
        items.append(
            {
                "question_id": f"q{year}",
                "question": US_Q.format(year=year),
                "final_answer": "The companies are: " + ", ".join(f"[{t}]" for t in tickers),
                "metadata": [
                    {
                        "id": f"{t}-{year}",
                        "symbol": t,
                        "year": year,
                        "doctype": "US Stock Annual Report",
                        "schema": {},
                    }
                    for t in [*tickers, "KE"]
                ],
            }
        )
    items.append(
        {
            "question_id": "q_firm",
            "question": "针对中国A股市场，在你的ESG报告知识库中2021年审验客户数量最多的第三方审验机构是哪家？",
            "final_answer": "审验客户数量最多的机构是普华永道中天会计师事务所(特殊普通合伙)",
            "metadata": [
                {"id": "f1", "symbol": "601077", "year": 2021, "doctype": "A股ESG报告", "schema": {}}
            ],
        }
    )
    return items


class _Fake(dspy.Module):
    """The fake model of the report: 'fake answer 658' to every ticker question, a short name to the firm one."""

    def forward(self, question, doc_ids=None):
        answer = "普华永道" if "审验机构" in question else f"fake answer {len(question) * 7 % 1000}"
        return dspy.Prediction(answer=answer, records=[], facts=[], run_log={"doc_interactions": {}})


def _items(tmp_path):
    from evaluate.dataset import load_dataset

    path = tmp_path / "ds.json"
    path.write_text(json.dumps(_dataset(), ensure_ascii=False), encoding="utf-8")
    return path, load_dataset(path)


def _yes_man() -> DummyLM:
    """A judge that calls every answer correct, as the model under test judging itself did."""
    return DummyLM({"": {"correct": "True", "reason": "looks right"}})


def test_settings_name_no_judge_by_default():
    settings = Settings.from_env({"lm": "openai/model-under-test"}, environ={})
    assert settings.judge_model() is None and settings.model_for("judge") is None
    assert not settings.self_judged()
    assert evaluation.make_judge(settings, None) is None  # no judge built, nothing to grade itself


@pytest.mark.parametrize(
    "overrides, judge, self_judged",
    [
        ({"lm_judge": "openai/independent"}, "openai/independent", False),
        ({"lm_judge": "self"}, "openai/model-under-test", True),
        ({"lm_judge": "openai/model-under-test"}, "openai/model-under-test", True),  # named, still itself
        ({"lm_judge": "openai/coder", "lm_coder": "openai/coder"}, "openai/coder", True),  # a stage's model
    ],
)
def test_a_named_judge_and_whether_it_is_the_model_under_test(overrides, judge, self_judged):
    settings = Settings.from_env({"lm": "openai/model-under-test", **overrides}, environ={})
    assert settings.judge_model() == judge and settings.self_judged() is self_judged


def test_the_environment_names_a_judge_too():
    settings = Settings.from_env(environ={"COLLATE_LM": "openai/a", "COLLATE_LM_JUDGE": "self"})
    assert settings.judge_model() == "openai/a" and settings.self_judged()


def test_make_judge_builds_only_the_named_one(tmp_path):
    judge = evaluation.make_judge(Settings(lm="openai/a", lm_judge="self"), tmp_path)
    assert judge.model == "openai/a" and judge.self_judged
    other = evaluation.make_judge(Settings(lm="openai/a", lm_judge="openai/b"), tmp_path)
    assert other.model == "openai/b" and not other.self_judged


def _evaluate(tmp_path, judge=None):
    path, items = _items(tmp_path)
    return evaluation.evaluate_program(
        _Fake(),
        items,
        RunJob(
            variant="fake",
            out_dir=tmp_path / "run",
            params={"split": "all", "seed": 0, "limit": ""},
            dataset_file=str(path),
            autolog=False,
            progress=False,
        ),
        settings=Settings(lm="fake/x", lm_judge="self" if judge is not None else None),
        judge=judge,
    )


def test_without_a_judge_the_fake_model_scores_nothing(tmp_path):
    result = _evaluate(tmp_path)
    summary = result.summary
    # the three "fake answer 658" are wrong by the matcher; the short firm name is undecided, not correct
    assert (summary["correct"], summary["decided"], summary["undecided"], summary["judged"]) == (0, 3, 1, 0)
    assert summary["final_accuracy"] == 0.0 and summary["self_judged"] is False
    tags = MlflowClient(tracking.tracking_uri()).get_run(result.run_id).data.tags
    assert tags["self_judged"] == "false"
    assert "judge: none" in evaluation.format_summary(summary)


def test_a_self_judged_run_is_tagged_and_says_so(tmp_path):
    judge = AnswerJudge(cache=JudgeCache(tmp_path / "j.sqlite"), model="fake/x", self_judged=True)
    lm = _yes_man()
    judge.set_lm(lm)
    result = _evaluate(tmp_path, judge)
    summary = result.summary
    # the yes-man judge only ever sees the one answer the matcher could not decide
    assert len(lm.history) == 1 and summary["judged"] == 1 and summary["correct"] == 1
    assert summary["self_judged"] is True and summary["judge"] == "fake/x"
    saved = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert saved["self_judged"] is True and saved["inputs"]["models_under_test"] == ["fake/x"]
    tags = MlflowClient(tracking.tracking_uri()).get_run(result.run_id).data.tags
    assert tags["self_judged"] == "true"
    assert "SELF-JUDGED" in evaluation.format_summary(summary)
