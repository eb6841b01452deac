"""The LLM judge: a typed DSPy module at temperature 0 with a SQLite verdict cache."""

import copy

import dspy
from dspy.utils.dummies import DummyLM

from evaluate.matching.judge import AnswerJudge, JudgeCache


def _lm():
    return DummyLM(
        {
            "answer says ICBC": {"correct": "True", "reason": "names the same bank"},
            "answer says BOC": {"correct": "False", "reason": "a different bank"},
        }
    )


def test_verdicts_come_from_the_lm_typed(tmp_path):
    lm = _lm()
    judge = AnswerJudge(cache=JudgeCache(tmp_path / "cache.sqlite"), model="dummy")
    judge.set_lm(lm)
    yes = judge(question="Which bank?", gold_answer="601398", model_answer="the answer says ICBC")
    no = judge(question="Which bank?", gold_answer="601398", model_answer="the answer says BOC")
    assert (yes.correct, no.correct) == (True, False)
    assert isinstance(yes.correct, bool) and yes.reason == "names the same bank"
    assert judge.judge.config["temperature"] == 0.0


def test_cache_answers_repeats_without_the_lm(tmp_path):
    path = tmp_path / "cache.sqlite"
    first = AnswerJudge(cache=JudgeCache(path), model="dummy")
    lm = _lm()
    first.set_lm(lm)
    first(question="Q", gold_answer="G", model_answer="answer says ICBC")
    calls = len(lm.history)
    assert calls == 1
    # A new judge on the same file (a later scoring run) answers from the cache: no LM at all.
    second = AnswerJudge(cache=JudgeCache(path), model="dummy")
    again = second(question="Q", gold_answer="G", model_answer="answer says ICBC")
    assert again.cached and again.correct is True and again.reason == "names the same bank"
    assert len(lm.history) == calls
    # The key includes the judge model: another model is asked afresh.
    other = AnswerJudge(cache=JudgeCache(path), model="another-model")
    other.set_lm(lm)
    assert other(question="Q", gold_answer="G", model_answer="answer says ICBC").cached is False
    assert len(lm.history) == calls + 1 and len(JudgeCache(path)) == 2


def test_key_separates_every_part():
    base = JudgeCache.key("q", "g", "a", "m")
    assert (
        len(
            {
                base,
                JudgeCache.key("q2", "g", "a", "m"),
                JudgeCache.key("q", "g2", "a", "m"),
                JudgeCache.key("q", "g", "a2", "m"),
                JudgeCache.key("q", "g", "a", "m2"),
            }
        )
        == 5
    )


def test_deepcopy_shares_the_cache(tmp_path):
    judge = AnswerJudge(cache=JudgeCache(tmp_path / "c.sqlite"), model="m")
    clone = copy.deepcopy(judge)
    assert clone.cache is judge.cache and clone.judge is not judge.judge
    assert isinstance(clone.judge, dspy.Predict)
