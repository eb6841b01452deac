"""One run's LM figures from the process-wide LMWatch (programs.lm.progress.RunCounts): what
the watch counted before the run is subtracted, a parse failure is counted under its stage, a run in
a process with no watch still gets figures, and the one-line report names only stages in trouble."""

from __future__ import annotations

import dspy
import pytest
from dspy.utils.dummies import DummyLM

from programs.lm.progress import LMWatch, RunCounts, current_watch, install, since, trouble_line


@pytest.fixture
def planner():
    return dspy.Predict("question -> answer")


def test_a_run_counts_only_what_happened_after_it_started(planner):
    watch = install(LMWatch(every=0))
    watch.label(planner, "planner")
    # the reply lacks the `answer` field: the adapter cannot parse it (a parse failure, not an LM error)
    replies = [{"answer": "before"}, {"answer": "ok"}, {"reasoning": "no answer field"}]
    with dspy.context(lm=DummyLM(replies)):
        planner(question="earlier run")
        counts = RunCounts()
        planner(question="this run")
        with pytest.raises(Exception, match="(?i)parse"):
            planner(question="this run, garbled")
    stages = counts.stages()
    assert list(stages) == ["planner"]
    assert {k: stages["planner"][k] for k in ("calls", "lm_errors", "parse_failures")} == {
        "calls": 2,
        "lm_errors": 0,
        "parse_failures": 1,
    }
    assert watch.summary()["planner"]["calls"] == 3  # the watch itself still holds the process's figures
    assert trouble_line(stages) == "LM: planner 1 parse failure of 2 calls"


def test_with_no_watch_installed_a_quiet_one_counts_the_run(planner):
    dspy.configure(callbacks=[])
    counts = RunCounts()
    assert current_watch() is not None and current_watch().every == 0  # no waiting lines from it
    with dspy.context(lm=DummyLM([{"answer": "ok"}])):
        planner(question="q")
    (stage,) = counts.stages().values()
    assert stage["calls"] == 1 and trouble_line(counts.stages()) == ""


def test_the_line_names_each_stage_in_trouble_in_pipeline_order():
    after = {
        "extractor": {"calls": 9, "lm_errors": 1, "parse_failures": 2, "seconds": 4.0},
        "answer": {"calls": 1, "lm_errors": 0, "parse_failures": 0, "seconds": 1.0},
        "planner": {"calls": 3, "lm_errors": 0, "parse_failures": 1, "seconds": 2.0},
        "coder": {"calls": 1, "lm_errors": 0, "parse_failures": 0, "seconds": 0.5},
    }
    before = {"coder": after["coder"]}  # counted before the run: not this run's
    stages = since(after, before)
    assert list(stages) == ["planner", "extractor", "answer"]
    assert trouble_line(stages) == (
        "LM: planner 1 parse failure of 3 calls; extractor 2 parse failures and 1 LM error of 9 calls"
    )
