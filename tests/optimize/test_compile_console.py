"""Issue 31 item 7: a compile's console is progress, then our summary; DSPy's own logs go to a file.

Before: GEPA printed two tracebacks (a reflection it logged at INFO with the stack, then went on) and
succeeded; MIPROv2 printed 416 DSPy INFO lines; bootstrap printed its own "Bootstrapped ..." line; the
cost table named DSPy classes (StringSignature, ExtractFacts) where run and ask name stages.
"""

from __future__ import annotations

import json
from pathlib import Path

import dspy
import pytest
from mlflow.tracking import MlflowClient

from collate import compile as compile_cli
from evaluate import tracking
from fakes.brain import Brain
from fakes.chat_format import format_reply, kind_of_prompt, parse_prompt
from fakes.server import FakeLMServer
from optimize.best_so_far import BestSoFar, snapshot
from optimize.compiler import CompileJob, score_before
from programs.lm.stages import STAGES

COST_ROW = "  {name} "


@pytest.mark.parametrize("optimizer", ["bootstrap", "gepa"])
def test_the_console_shows_our_summary_by_stage_and_the_library_logs_go_to_the_log_file(
    small_corpus, brain_server, tmp_path, capfd, optimizer
):
    tracking.use_store()  # the store exists: MLflow's "creating tables" lines are not the command's
    capfd.readouterr()
    corpus, index = small_corpus
    out = tmp_path / "compiled.json"
    code = compile_cli.main(
        ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out),
         "--optimizer", optimizer, "--limit", "2", "--max-demos", "1", "--threshold", "0", "--no-autolog"]
    )  # fmt: skip
    printed = capfd.readouterr()
    assert code == 0, printed.err
    console = printed.out + printed.err
    assert "Traceback" not in console and "Bootstrapped" not in console
    assert not [
        line
        for line in console.splitlines()
        if any(f"INFO {lib}" in line for lib in ("dspy", "gepa", "optuna"))
    ]
    table = printed.out.split("cost:", 1)[1].split("changes:", 1)[0].splitlines()[1:]
    names = {row.split()[0] for row in table if row.strip()}
    assert names and names <= {row.name for row in STAGES.values()} | {"optimizer"}, table
    log = Path(str(out).removesuffix(".json") + ".log")
    assert f"the optimizer's own log (DSPy, GEPA, Optuna): {log}" in printed.out
    assert "dspy" in log.read_text(encoding="utf-8")  # DSPy's own lines are kept there
    assert f"saved {out}" in printed.out and "MLflow run " in printed.out


class DemoHungryBrain(Brain):
    """The demo reader, except that its answer stage answers only when the prompt carries a demo: a
    compile that adds demos then really raises the score, so the summary's before and after differ."""

    def __call__(self, messages: list[dict], model: str = "fake-brain") -> str:
        parsed = parse_prompt(messages)
        outputs = self.outputs(parsed)
        if kind_of_prompt(parsed) == "answer" and not any(m["role"] == "assistant" for m in messages):
            outputs["answer"] = "I cannot tell."
        return format_reply(outputs, as_json=parsed.wants_json)


def test_the_summary_gives_the_score_before_and_after_what_changed_by_stage_and_where_things_are(
    small_corpus, tmp_path, capfd, monkeypatch
):
    """Issue 31 item 7: score before -> after on the dev split, changes and cost by stage name, the program's
    and the MLflow run's whereabouts."""
    tracking.use_store()
    capfd.readouterr()
    corpus, index = small_corpus
    out = tmp_path / "compiled.json"
    with FakeLMServer(DemoHungryBrain()) as server:
        for name, value in {**server.env(), "COLLATE_CACHE": "false"}.items():
            monkeypatch.setenv(name, value)
        code = compile_cli.main(
            ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out),
             "--optimizer", "bootstrap", "--limit", "2", "--max-demos", "1", "--threshold", "0", "--no-autolog"]
        )  # fmt: skip
    printed = capfd.readouterr().out
    assert code == 0, printed
    meta = json.loads(out.with_suffix(".meta.json").read_text(encoding="utf-8"))
    before, after = meta["scores"]["dev_metric_before"], meta["scores"]["dev_metric"]
    assert before is not None and after is not None and before < after  # the demos made the answers right
    assert (
        f"score on 2 dev example(s) (final_and_process): before {before:.3f} -> after {after:.3f} "
        f"({after - before:+.3f}; before: the starting program scored on dev after the compile)"
    ) in printed
    changes = next(line for line in printed.splitlines() if line.startswith("changes: "))
    stages = [part.split()[0] for part in changes.removeprefix("changes: ").split("; ")]
    assert "answer" in stages and set(stages) <= set(STAGES), changes  # stage names, not predictor names
    assert "answerer.answer" not in changes and "+1 demo" in changes
    table = printed.split("cost:", 1)[1].split("changes:", 1)[0].splitlines()[1:]
    assert {row.split()[0] for row in table if row.strip()} >= {"planner", "extractor", "answer"}
    # the starting program's dev scoring is counted apart, and said
    start = meta["before_scoring"]["lm_calls"]
    assert start > 0 and f"the starting program's dev scoring {start} requests (0 cache hits)" in printed
    assert f"saved {out}" in printed and f"MLflow run {meta['mlflow_run_id']}" in printed
    run = MlflowClient(tracking.tracking_uri()).get_run(meta["mlflow_run_id"])
    assert run.data.metrics["dev/metric_before"] == before and run.data.metrics["dev/metric"] == after


class Counted(dspy.Module):
    """A starting program that answers 'a' and counts how often it was asked."""

    def __init__(self):
        super().__init__()
        self.asked = 0

    def forward(self, question):
        self.asked += 1
        return dspy.Prediction(answer="a")


def test_an_unchanged_program_is_its_own_before_and_an_optimizers_own_score_of_it_is_reused():
    """No request for the score before where it is known: the program did not change, or the optimizer
    (MIPROv2, GEPA) scored the starting program on the dev split itself."""
    valset = [
        dspy.Example(question=str(i), answer="a" if i else "b").with_inputs("question") for i in range(3)
    ]
    start = dspy.Predict("question -> answer")
    tracker, job, program = BestSoFar(valset), CompileJob("mipro", threads=1), Counted()

    def metric(example, pred, trace=None):
        return float(example.answer == pred.answer)

    def before(after, changes):
        return score_before(after, changes, tracker, snapshot(start), program, valset, metric, job)

    assert before(0.5, []) == (0.5, "the saved program is the starting program") and program.asked == 0
    tracker.record(start.deepcopy(), 0.25, valset[:2])  # a mini-batch: not the dev score
    tuned = start.deepcopy()
    tuned.demos = [dspy.Example(question="q", answer="a")]
    tracker.record(tuned, 0.75, valset)  # another program on the dev split
    assert before(0.75, ["changed"]) == (0.6667, "the starting program scored on dev after the compile")
    assert program.asked == 3
    tracker.record(start.deepcopy(), 0.3333333, list(valset))  # the starting program on the dev split
    assert before(0.75, ["changed"]) == (0.3333, "mipro scored the starting program on dev")
    assert before(None, ["changed"])[0] is None and program.asked == 3
