"""Issue 25 end to end: `collate run` with a cheap reader that errs on chosen documents and the demo reader
as the strong model, both behind one fake OpenAI-compatible server. The strong model is asked for
exactly the documents the cheap one got wrong, its calls are counted and priced as the stage
"escalate", and the summary says what the cascade spent against strong-only."""

from __future__ import annotations

import json

from collate import run as collate_run
from fakes.brain import Brain
from fakes.corpus import dataset_items
from fakes.erring import WRONG_VALUE, ErringBrain, by_model
from fakes.server import FakeLMServer
from tests.e2e.test_ask_e2e import doc_ids, run_ask

PRICES = {
    "COLLATE_PRICE_IN": "2",
    "COLLATE_PRICE_OUT": "8",
    "COLLATE_PRICE_IN_EXTRACTOR": "0.4",
    "COLLATE_PRICE_OUT_EXTRACTOR": "1.6",
    "COLLATE_PRICE_IN_ESCALATE": "2",
    "COLLATE_PRICE_OUT_ESCALATE": "8",
}


def test_collate_run_escalates_the_documents_the_cheap_reader_got_wrong(
    small_corpus, monkeypatch, capsys, tmp_path
):
    corpus, index = small_corpus
    first = dataset_items(corpus)[0]
    wrong_on = {first["metadata"][0]["id"]}  # the first document of the first question
    cheap = ErringBrain(only=wrong_on, kinds=(WRONG_VALUE,))
    with FakeLMServer(by_model({"cheap": cheap}, Brain())) as server:
        env = {
            **server.env(),
            **PRICES,
            "COLLATE_CACHE": "false",
            "COLLATE_LM_EXTRACTOR": "openai/cheap-reader",
            "COLLATE_LM_EXTRACTOR_ESCALATE": server.env()["COLLATE_LM"],
        }
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        out = tmp_path / "run"
        argv = ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out),
                "--limit", "1", "--no-judge", "--no-autolog", "--no-progress"]  # fmt: skip
        assert collate_run.main(argv) == 0
        strong_calls = [r for r in server.records if r.kind == "extract" and "cheap" not in r.model]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    erred = {doc for doc, _ in cheap.erred}
    assert erred == wrong_on  # the chosen document had a fact to get wrong
    assert len(strong_calls) == 1 and summary["lm_stages"]["escalate"]["calls"] == 1
    assert summary["cascade_escalated"] == 1 and summary["cascade_documents"] == len(cheap.documents)
    assert 0 < summary["cascade_usd"] < summary["cascade_usd_strong_only"]
    assert summary["cascade_saved_usd"] > 0
    run_log = json.loads(next(out.glob("questions/*/run_log.json")).read_text(encoding="utf-8"))
    assert run_log["cascade"]["escalated"] == {d: "check" for d in wrong_on}
    assert "cascade: 1 of" in capsys.readouterr().out


def test_collate_ask_says_what_the_cascade_escalated_and_saved(tiny, item, monkeypatch, capsys, tmp_path):
    wrong_on = {sorted(doc_ids(item))[0]}
    cheap = ErringBrain(only=wrong_on, kinds=(WRONG_VALUE,))
    err: list[str] = []
    with FakeLMServer(by_model({"cheap": cheap}, Brain())) as server:
        for name, value in {
            **PRICES,
            "COLLATE_LM_EXTRACTOR": "openai/cheap-reader",
            "COLLATE_LM_EXTRACTOR_ESCALATE": server.env()["COLLATE_LM"],
        }.items():
            monkeypatch.setenv(name, value)
        code, out, _ = run_ask(tiny, item, server, monkeypatch, capsys, tmp_path, stderr=err)
    assert code == 0 and {doc for doc, _ in cheap.erred} == wrong_on
    cost = out["cost"]
    assert cost["cascade_escalated"] == 1 and cost["cascade_documents"] == len(doc_ids(item))
    assert cost["stages"]["escalate"]["calls"] == 1
    assert 0 < cost["cascade_usd"] < cost["cascade_usd_strong_only"]
    assert f"cascade: 1 of {len(doc_ids(item))} documents escalated" in err[0]
