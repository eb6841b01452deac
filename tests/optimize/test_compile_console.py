"""Issue 31 item 7: a compile's console is progress, then our summary; DSPy's own logs go to a file.

Before: GEPA printed two tracebacks (a reflection it logged at INFO with the stack, then went on) and
succeeded; MIPROv2 printed 416 DSPy INFO lines; bootstrap printed its own "Bootstrapped ..." line; the
cost table named DSPy classes (StringSignature, ExtractFacts) where run and ask name stages.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from collate import compile as compile_cli
from evaluate import tracking
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
