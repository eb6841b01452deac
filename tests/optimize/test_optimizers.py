"""The optimizer table builds each DSPy optimizer and runs its compile on a toy program."""

from __future__ import annotations

import dspy
import pytest

from optimize.best_so_far import BestSoFar, adopt, bootstrapped_demos
from optimize.optimizers import OPTIMIZERS, OptimizerOptions, make_optimizer
from programs.lm.spend import Budget, BudgetExhausted, enforced
from tests.optimize.one_call import compile_with


def _score(program, examples, metric) -> float:
    return sum(metric(ex, program(**ex.inputs())) for ex in examples) / len(examples)


def test_names_map_to_the_dspy_optimizers(rule_lm, toy):
    metric = toy["metric"]
    assert isinstance(make_optimizer("bootstrap", metric), dspy.BootstrapFewShot)
    assert isinstance(make_optimizer("mipro", metric), dspy.MIPROv2)
    assert isinstance(make_optimizer("simba", metric, n_train=3), dspy.SIMBA)
    gepa = make_optimizer(
        "gepa", lambda g, p, t=None, pn=None, pt=None: 1.0, OptimizerOptions(reflection_lm=rule_lm)
    )
    assert isinstance(gepa, dspy.GEPA)
    assert set(OPTIMIZERS) == {"bootstrap", "mipro", "gepa", "simba"}


def test_unknown_name_and_missing_reflection_lm_say_what_to_do(toy):
    with pytest.raises(ValueError, match="choose one of bootstrap, mipro, gepa, simba"):
        make_optimizer("adam", toy["metric"])
    with pytest.raises(ValueError, match="COLLATE_LM or pass --lm"):
        make_optimizer("gepa", toy["metric"])


def test_bootstrap_adds_demos_that_raise_the_score(rule_lm, toy):
    train, dev = toy["examples"](6), toy["examples"](12)[6:]
    student = toy["program"]()
    assert _score(student, dev, toy["metric"]) == 0.0
    compiled = compile_with("bootstrap", toy["metric"], student, train)
    assert compiled.demos, "bootstrap attached no demos"
    assert _score(compiled, dev, toy["metric"]) == 1.0


def test_simba_and_mipro_compile_the_toy_program(rule_lm, toy):
    train, val = toy["examples"](4), toy["examples"](8)[4:]
    student = toy["program"]()
    simba = compile_with(
        "simba",
        toy["metric"],
        student,
        train,
        options=OptimizerOptions(num_threads=1, extra={"max_steps": 1, "num_candidates": 2}),
    )
    mipro = compile_with(
        "mipro",
        toy["metric"],
        toy["program"](),
        train,
        val,
        options=OptimizerOptions(
            num_threads=1, extra={"auto": None, "num_candidates": 2}, compile_extra={"num_trials": 2}
        ),
    )
    assert isinstance(simba, dspy.Predict) and simba is not student  # a copy: the student is never mutated
    assert not student.demos and _score(simba, val, toy["metric"]) >= _score(student, val, toy["metric"])
    assert isinstance(mipro, dspy.Predict) and mipro.demos, "MIPROv2 kept none of its bootstrapped demos"
    assert _score(mipro, val, toy["metric"]) == 1.0


def test_budget_counts_every_call_and_refuses_past_the_cap(rule_lm):
    program = dspy.Predict("question -> answer")
    budget = Budget(max_calls=2)
    with enforced(budget):
        program(question="one a")
        program(question="two b")
        with pytest.raises(BudgetExhausted, match="--max-calls"):
            program(question="three c")
    assert budget.calls == 2 and budget.refused == 1 and budget.exhausted
    assert rule_lm.rule_engine.calls == 2
    program(question="outside the cap")  # the patch is gone after the block
    assert rule_lm.rule_engine.calls == 3


def test_budget_stops_a_compile_at_the_first_refusal_and_keeps_the_demos_so_far(rule_lm, toy):
    budget = Budget(max_calls=3)
    optimizer = make_optimizer("bootstrap", toy["metric"])
    student = toy["program"]()
    with enforced(budget), pytest.raises(BudgetExhausted):
        optimizer.compile(student, trainset=toy["examples"](10))
    assert rule_lm.rule_engine.calls == 3 and budget.refused == 1, "refused calls went on after the first"
    kept = bootstrapped_demos(optimizer, student, max_demos=4)
    assert kept is not None and 0 < len(kept.demos) <= 3 and not student.demos


def test_cache_hits_are_free_and_counted_apart(toy):
    """Issue 12 item 1: an identical rerun sent 0 requests and was charged 57; a cap stopped a free compile."""
    from tests.optimize.conftest import RuleEngine

    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=True)
    engine = RuleEngine()
    dspy.configure(lm=dspy.LM("fake/rule", engine=engine, cache=True, num_retries=0))
    program = dspy.Predict("question -> answer")
    budget = Budget(max_calls=2)
    with enforced(budget):
        for _ in range(5):  # two real requests, then eight answers from the cache
            program(question="one a")
            program(question="two b")
    assert engine.calls == 2
    assert budget.summary() == {
        "lm_calls": 2,
        "cache_hits": 8,
        "max_calls": 2,
        "max_tokens": None,
        "max_usd": None,
        "refused_calls": 0,
        "budget_exhausted": False,
        "budget_ended_by": "",
    }
    with enforced(budget), pytest.raises(BudgetExhausted):  # a new prompt past the cap is refused
        program(question="three c")


def test_mipro_stops_at_the_cap_and_its_best_trial_is_kept(rule_lm, toy):
    """Issue 12 item 2: MIPROv2 ran all its trials on refused calls and the best trial was lost."""
    train, val = toy["examples"](4), toy["examples"](8)[4:]
    options = OptimizerOptions(
        num_threads=2, extra={"auto": None, "num_candidates": 3}, compile_extra={"num_trials": 10}
    )
    uncapped = Budget()
    with enforced(uncapped):
        compile_with("mipro", toy["metric"], toy["program"](), train, val, options=options)
    budget, tracker = Budget(max_calls=uncapped.calls // 2), BestSoFar(val)
    rule_lm.rule_engine.calls = 0
    with enforced(budget), tracker.watch(), pytest.raises(BudgetExhausted):
        compile_with("mipro", toy["metric"], toy["program"](), train, val, options=options)
    assert rule_lm.rule_engine.calls == budget.calls == uncapped.calls // 2
    assert budget.refused <= options.num_threads, "trials went on after the cap"
    best = tracker.best()
    assert best is not None and best.on_valset and best.score == 1.0, (
        "a trial scored 1.0 on dev before the cap"
    )
    program = adopt(toy["program"](), best.state)
    assert program.demos and _score(program, val, toy["metric"]) == 1.0


def test_budget_rejects_a_nonsense_cap():
    with pytest.raises(ValueError, match="--max-calls"):
        Budget(max_calls=0)


def test_gepa_compiles_with_feedback_and_a_reflection_lm(rule_lm, toy):
    seen_feedback = []

    def feedback_metric(gold, pred, trace=None, pred_name=None, pred_trace=None):
        score = toy["metric"](gold, pred)
        feedback = (
            "right" if score else f"expected {gold.answer!r}, got {pred.answer!r}: upper-case the last word"
        )
        seen_feedback.append(feedback)
        return dspy.Prediction(score=score, feedback=feedback)

    compiled = compile_with(
        "gepa",
        feedback_metric,
        toy["program"](),
        toy["examples"](3),
        toy["examples"](6)[3:],
        options=OptimizerOptions(num_threads=1, reflection_lm=rule_lm, max_metric_calls=12),
    )
    assert isinstance(compiled, dspy.Predict)
    assert any("upper-case" in f for f in seen_feedback)
