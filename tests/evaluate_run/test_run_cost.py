"""Issue 25 items 1 and 3 for `python -m evaluate.run`: tokens and dollars per stage in summary.json, the
console and MLflow, exactly as the server counted them; a dollar cap that ends the run keeps what was
answered, lists the questions it cut, says which budget ended it, and exits 1.
"""

from __future__ import annotations

import json

import pytest
from mlflow.tracking import MlflowClient

from collate import run as evaluate_run
from evaluate import tracking
from tests.evaluate_run.test_lm_counts import serve


def run(small_corpus, out, *extra) -> int:
    corpus, index = small_corpus
    return evaluate_run.main(
        ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out)]
        + ["--no-progress", "--no-judge", "--no-autolog", "--concurrency", "1", *extra]
    )


def test_the_run_s_tokens_and_dollars_per_stage_are_the_server_s_in_summary_console_and_mlflow(
    small_corpus, monkeypatch, tmp_path, capsys
):
    monkeypatch.setenv("COLLATE_PRICE_IN", "3")
    monkeypatch.setenv("COLLATE_PRICE_OUT", "15")
    server = serve(monkeypatch)
    try:
        code = run(small_corpus, tmp_path / "run", "--limit", "3")
        answered = [r for r in server.records if r.status == 200 and r.kind != "preflight"]
    finally:
        server.stop()
    printed = capsys.readouterr()
    assert code == 0, printed.err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    tokens_in, tokens_out = sum(r.prompt_tokens for r in answered), sum(r.completion_tokens for r in answered)
    assert (summary["tokens_in"], summary["tokens_out"]) == (tokens_in, tokens_out)
    assert summary["cost_usd"] == pytest.approx((3 * tokens_in + 15 * tokens_out) / 1e6)
    assert summary["cost"]["price_known"] and summary["cost_unpriced_calls"] == 0
    assert sum(s["usd"] for s in summary["lm_stages"].values()) == pytest.approx(summary["cost_usd"])
    assert f"cost: {tokens_in:,} tokens in / {tokens_out:,} out, ${summary['cost_usd']:.4f}" in printed.out
    metrics = MlflowClient(tracking.tracking_uri()).get_run(summary["run_id"]).data.metrics
    assert metrics["cost/usd"] == pytest.approx(summary["cost_usd"]) and metrics["tokens/in"] == tokens_in
    extractor = summary["lm_stages"]["extractor"]
    assert metrics["cost/usd_extractor"] == pytest.approx(extractor["usd"]) and extractor["usd"] > 0
    assert metrics["tokens/out_extractor"] == extractor["tokens_out"] > 0


def test_a_dollar_cap_ends_the_run_keeps_the_answers_and_names_the_questions_it_cut(
    small_corpus, monkeypatch, tmp_path, capsys
):
    monkeypatch.setenv("COLLATE_PRICE_IN", "1000")
    monkeypatch.setenv("COLLATE_PRICE_OUT", "1000")
    server = serve(monkeypatch)
    try:
        # one question at a time with a cap a fraction of the run's price: the first questions are
        # answered, the cap is crossed, and every later request is refused without reaching the server
        code = run(small_corpus, tmp_path / "run", "--limit", "4", "--max-usd", "0.5")
        sent = server.calls
    finally:
        server.stop()
    printed = capsys.readouterr()
    assert code == 1, printed.err
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["budget_ended_by"] == "--max-usd" and summary["refused_calls"] >= 1
    assert summary["budget_cut"], "no question was cut: raise the price so the cap bites"
    results = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert len(results) == 4 and {r["question_id"] for r in results if r["error"]} == set(
        summary["budget_cut"]
    )
    assert all("BudgetReached" in r["error"] for r in results if r["error"])
    # a refused request is neither a call nor an LM error: the calls counted are the ones the server saw
    assert sent == 1 + summary["lm_calls"] - summary["lm_cache_hits"] and summary["lm_errors"] == 0
    assert summary["lm_refused_calls"] == summary["refused_calls"]
    assert "budget: the --max-usd budget of $0.5 ended it" in printed.out
    assert "error: the --max-usd budget of $0.5 ended it" in printed.err and "Traceback" not in printed.err


def test_a_cap_of_zero_is_bad_input(small_corpus, monkeypatch, tmp_path, capsys):
    server = serve(monkeypatch)
    try:
        assert run(small_corpus, tmp_path / "run", "--max-tokens", "0") == 2
        assert server.calls == 0
    finally:
        server.stop()
    assert "--max-tokens must be above 0" in capsys.readouterr().err


def test_a_rerun_on_the_same_fact_store_reports_the_extraction_calls_it_saved(
    small_corpus, monkeypatch, tmp_path, capsys
):
    monkeypatch.setenv("COLLATE_FACT_STORE", str(tmp_path / "facts.sqlite"))  # shared by both runs
    server = serve(monkeypatch)
    try:
        assert run(small_corpus, tmp_path / "first", "--limit", "2") == 0
        extracted = server.calls_by_kind()["extract"]
        server.reset_counts()
        assert run(small_corpus, tmp_path / "again", "--limit", "2") == 0
        again = server.calls_by_kind().get("extract", 0)
    finally:
        server.stop()
    first = json.loads((tmp_path / "first" / "summary.json").read_text(encoding="utf-8"))["cost"]
    second = json.loads((tmp_path / "again" / "summary.json").read_text(encoding="utf-8"))["cost"]
    assert first["facts_saved_calls"] == 0 and extracted > 0 and again == 0
    assert second["facts_saved_calls"] == extracted
    printed = capsys.readouterr().out
    assert f"fact store: {extracted} document" in printed
    # no price set: the console names the model and the setting that prices it (before: "the model")
    model = second["unpriced_models"]["COLLATE_PRICE_IN/_OUT"]
    assert (
        model.startswith("openai/") and f"({model} is in no price table: set COLLATE_PRICE_IN/_OUT" in printed
    )


def test_an_unknown_price_is_no_number_in_mlflow_and_the_run_says_why(small_corpus, monkeypatch, tmp_path):
    """Issue 31: `cost/usd` was 0 for a model with no price, so the comparison ranked it as free."""
    server = serve(monkeypatch)
    try:
        assert run(small_corpus, tmp_path / "run", "--limit", "1") == 0
    finally:
        server.stop()
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert not summary["cost"]["price_known"]
    logged = MlflowClient(tracking.tracking_uri()).get_run(summary["run_id"]).data
    assert not [k for k in logged.metrics if k.startswith("cost/usd") or k == "cost/paid_usd"], logged.metrics
    assert logged.metrics["cost/unpriced_calls"] == summary["lm_calls"] > 0
    note = logged.tags["cost_note"]
    assert note.startswith("price unknown: openai/") and "set COLLATE_PRICE_IN/_OUT" in note


def test_calls_from_the_cache_make_the_price_unknown_not_zero():
    from evaluate.tracking.known_cost import known_cost

    stages = {
        "planner": {"calls": 4, "cache_hits": 4, "usd": 0.0},
        "answer": {"calls": 2, "cache_hits": 0, "usd": 0.25},
    }
    metrics = {"cost_usd": 0.25, "cost_usd_planner": 0.0, "cost_usd_answer": 0.25, "lm_calls": 6}
    kept, note = known_cost(metrics, stages, {"price_known": True})
    assert kept == {"cost_usd_answer": 0.25, "lm_calls": 6, "cost_paid_usd": 0.25}
    assert note == "price unknown: 4 of 6 LM calls came from the cache (what they would cost is not known)"
    stages["planner"]["cache_hits"] = 0
    assert known_cost(metrics, stages, {"price_known": True}) == (metrics, "")


def test_a_cap_that_bites_mid_question_fails_the_question_and_a_rerun_asks_it_again(
    small_corpus, monkeypatch, tmp_path, capsys
):
    """A cap crossed after the plans, during extraction: every question it cut fails with the refusal
    (listed in budget_cut), never "answered" with a code writer's or an answer's error in its place, which
    a rerun with a higher cap then took as answered ("nothing left to ask") and scored wrong."""
    server = serve(monkeypatch)
    try:
        code = run(small_corpus, tmp_path / "run", "--limit", "4", "--max-calls", "6")  # 4 plans, 2 documents
        capped = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
        results = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
        assert code == 1 and len(results) == 4
        assert all(r["error"] and "BudgetReached" in r["error"] for r in results), [
            r["answer"] for r in results
        ]
        assert sorted(capped["budget_cut"]) == sorted(r["question_id"] for r in results)
        capsys.readouterr()
        assert run(small_corpus, tmp_path / "run", "--limit", "4") == 0  # no cap: the same folder resumes
    finally:
        server.stop()
    printed = capsys.readouterr()
    assert "asking the other 4 (4 that failed are asked again)" in printed.err + printed.out
    results = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert not any(r["error"] for r in results) and not any("ERROR" in (r["answer"] or "") for r in results)
