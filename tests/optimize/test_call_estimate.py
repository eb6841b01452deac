"""Issue 21 part 6: a compile prices its budget before spending it, and refuses one that buys no scored candidate.

MIPROv2 at --max-calls 80 stopped before scoring any candidate and nothing said what would have been
enough. The estimate (optimize/call_estimate.py) names that number up front; these tests hold it to
the calls the fake LM endpoint really saw.
"""

from __future__ import annotations

import json
import re

import dspy
import pytest
from mlflow.tracking import MlflowClient

from evaluate import tracking
from optimize import compile as compile_cli
from optimize.call_estimate import ONE_PASS, estimate, example_calls
from optimize.optimizers import OPTIMIZERS, OptimizerOptions
from retrievers.catalog import Catalog
from signatures.types import Document


def _compile(small_corpus, out, *extra: str) -> int:
    corpus, index = small_corpus
    return compile_cli.main(
        ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out), *extra]
    )


def _catalog(n: int) -> Catalog:
    return Catalog([Document(id=f"d{i}", symbol=f"S{i}", year=2022, doctype="10-K") for i in range(n)])


def _question(*doc_ids: str) -> dspy.Example:
    return dspy.Example(question="q", doc_ids=list(doc_ids), question_id="x").with_inputs(
        "question", "doc_ids"
    )


def test_a_question_costs_one_call_per_stage_and_one_extraction_per_document_in_scope():
    catalog = _catalog(5)
    calls = example_calls(_question("d0", "d1", "d2", "not-indexed"), "program", catalog)
    assert calls == {"plan": 1, "extract": 3, "normalize": 1, "code": 1, "answer": 1}
    assert sum(ONE_PASS.values()) == 4
    assert example_calls(_question("d0"), "extractor", catalog) == {"extract": 1}


def test_each_optimizer_is_priced_up_to_its_first_scored_candidate():
    catalog, options = _catalog(8), OptimizerOptions(max_demos=2, max_labeled_demos=0, num_threads=1)
    train = [_question(f"d{i}", f"d{i + 1}") for i in range(6)]  # 2 documents: 6 calls a question
    dev = [_question("d0", "d1", "d2")] * 3  # 3 documents: 7 calls a question
    priced = {
        name: estimate(name, "program", train, dev, catalog, options, predictors=6) for name in OPTIMIZERS
    }
    assert {p.candidate_calls for p in priced.values()} == {21} and priced["gepa"].question_calls[
        "extract"
    ] == 3
    assert priced["bootstrap"].first_score_calls == 2 * 6  # traces --max-demos training questions
    assert priced["gepa"].first_score_calls == 21  # scores the starting program on dev
    # MIPROv2 light (N=6): bootstrap (2 + 3 runs), data summary (2) + 3 instructions x 6 predictors x 3 calls, dev
    assert priced["mipro"].first_score_calls == (2 + 3) * 6 + 2 + 3 * 6 * 3 + 21
    assert (
        priced["simba"].first_score_calls == 6 * 4 * 6
    )  # 4 candidates on a batch of the 6 training questions
    short = priced["mipro"].shortfall(80)
    assert "--max-calls 107 or more" in short and "--force" in short
    assert priced["mipro"].shortfall(107) is None and priced["mipro"].shortfall(None) is None


def test_a_cap_that_buys_nothing_is_refused_before_any_request_naming_the_one_that_would_do(
    small_corpus, brain_server, tmp_path, capsys
):
    base = ("--optimizer", "bootstrap", "--limit", "3", "--no-autolog")
    assert _compile(small_corpus, tmp_path / "refused.json", *base, "--max-calls", "5") == 2
    err = capsys.readouterr().err
    assert brain_server.calls == 0, "the refused compile sent requests"
    assert not (tmp_path / "refused.json").exists()
    needed = int(re.search(r"Pass --max-calls (\d+) or more", err).group(1))
    assert "--max-calls 5 cannot buy one scored candidate" in err and needed > 5
    assert _compile(small_corpus, tmp_path / "short.json", *base, "--max-calls", str(needed - 1)) == 2

    # The number named is enough: the compile runs its course uncapped by it, and says what it priced.
    assert _compile(small_corpus, tmp_path / "enough.json", *base, "--max-calls", str(needed)) == 0
    meta = json.loads((tmp_path / "enough.meta.json").read_text())
    assert meta["estimate"]["first_score_calls"] == needed
    assert "before any candidate" not in (meta["stopped_early"] or ""), meta["stopped_early"]
    # The price of one candidate evaluation against what scoring the saved program on dev really sent
    # (the fake LM needs no repair and no code fix, so one clean pass is what it costs).
    assert meta["dev_scoring"]["lm_calls"] <= meta["estimate"]["candidate_calls"]
    run = MlflowClient(tracking.tracking_uri()).get_run(meta["mlflow_run_id"])
    assert run.data.metrics["budget/needed_calls"] == needed


def test_force_spends_a_small_cap_and_warns_with_the_number_needed(
    small_corpus, brain_server, tmp_path, caplog
):
    args = ("--optimizer", "bootstrap", "--limit", "3", "--max-calls", "5", "--force", "--no-autolog")
    assert _compile(small_corpus, tmp_path / "forced.json", *args) == 0
    meta = json.loads((tmp_path / "forced.meta.json").read_text())
    warned = [r.getMessage() for r in caplog.records if "cannot buy one scored candidate" in r.getMessage()]
    assert len(warned) == 1 and f"--max-calls {meta['estimate']['first_score_calls']} or more" in warned[0]
    assert meta["budget"]["lm_calls"] == 5 and meta["budget"]["budget_exhausted"]


@pytest.mark.slow
def test_mipro_given_the_named_budget_scores_a_candidate(small_corpus, brain_server, tmp_path, capsys):
    """The issue's case: MIPROv2 at --max-calls 80 saved the starting program unscored by any trial."""
    base = ("--optimizer", "mipro", "--limit", "3", "--max-demos", "1", "--threshold", "0", "--no-autolog")
    assert _compile(small_corpus, tmp_path / "m.json", *base, "--max-calls", "20") == 2
    needed = int(re.search(r"Pass --max-calls (\d+) or more", capsys.readouterr().err).group(1))
    assert _compile(small_corpus, tmp_path / "m.json", *base, "--max-calls", str(needed)) == 0
    meta = json.loads((tmp_path / "m.meta.json").read_text())
    assert "before any candidate was scored" not in (meta["stopped_early"] or ""), meta["stopped_early"]
