"""Issue 25 item 1: `collate ask` says what the question cost, per stage, from the responses' usage.

The fake server reports a usage for each reply; the figures ask prints and writes must be exactly
the sum of what the server reported (the preflight call is not the question's), priced with the
user's COLLATE_PRICE_IN/_OUT, "price unknown" without one, and a second ask of the same question says
what the fact store saved.
"""

from __future__ import annotations

import json

from fakes.brain import Brain
from fakes.server import FakeLMServer
from tests.e2e.test_ask_e2e import doc_ids, run_ask

STAGES = {"planner", "extractor", "normalizer", "coder", "answer"}


def reported(server) -> tuple[int, int]:
    answered = [r for r in server.records if r.status == 200 and r.kind != "preflight"]
    return sum(r.prompt_tokens for r in answered), sum(r.completion_tokens for r in answered)


def test_ask_reports_each_stage_s_tokens_and_dollars_as_the_server_counted_them(
    tiny,
    item,
    monkeypatch,
    capsys,
    tmp_path,
):
    monkeypatch.setenv("COLLATE_PRICE_IN", "2")  # $ per million prompt tokens
    monkeypatch.setenv("COLLATE_PRICE_OUT", "8")
    err: list[str] = []
    with FakeLMServer(Brain()) as server:
        code, out, run_dir = run_ask(tiny, item, server, monkeypatch, capsys, tmp_path, stderr=err)
        tokens_in, tokens_out = reported(server)
    assert code == 0
    cost = out["cost"]
    assert (cost["tokens_in"], cost["tokens_out"]) == (tokens_in, tokens_out) and tokens_in > 0
    assert cost["usd"] == round((tokens_in * 2 + tokens_out * 8) / 1e6, 8) and cost["price_known"]
    assert set(cost["stages"]) <= STAGES and {"planner", "extractor", "answer"} <= set(cost["stages"])
    extractor = cost["stages"]["extractor"]
    assert extractor["calls"] == len(doc_ids(item)) and extractor["tokens_in"] > 0
    assert sum(s["tokens_in"] for s in cost["stages"].values()) == tokens_in
    assert json.loads((run_dir / "answer.json").read_text(encoding="utf-8"))["cost"]["usd"] == cost["usd"]
    lines = err[0].splitlines()
    assert any(line.startswith(f"cost: {tokens_in:,} tokens in / {tokens_out:,} out, $") for line in lines)
    assert any(line.strip().startswith("extractor") and "$" in line for line in lines)


def test_an_unpriced_model_says_price_unknown_and_the_fact_store_s_savings_are_counted(
    tiny,
    item,
    monkeypatch,
    capsys,
    tmp_path,
):
    err: list[str] = []
    with FakeLMServer(Brain()) as server:  # "openai/fake-brain": in no price table
        first, out, _ = run_ask(tiny, item, server, monkeypatch, capsys, tmp_path, stderr=err)
        again, out_again, _ = run_ask(tiny, item, server, monkeypatch, capsys, tmp_path, stderr=err)
    assert (first, again) == (0, 0)
    assert not out["cost"]["price_known"] and out["cost"]["usd"] == 0
    assert "price unknown" in err[0] and "COLLATE_PRICE_IN/_OUT" in err[0]
    saved = out_again["cost"]
    assert saved["facts_saved_calls"] == len(doc_ids(item)) and "extractor" not in saved["stages"]
    assert f"fact store: {len(doc_ids(item))} documents answered from stored facts" in err[1]
