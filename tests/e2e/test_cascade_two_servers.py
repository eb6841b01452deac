"""Issue 31 item 8: the cascade's cheap and strong extractors on two servers, each with its own key.

Before, every stage shared one COLLATE_API_BASE and key, so a cheap local model could not run beside a
hosted strong one. Here the cheap reader (and the other stages) answer on one fake server, the strong
extractor on another; each server sees only its own stage's calls and its own key, the LM check before
the run asks both, and run.json records the strong stage's own endpoint (never a key)."""

from __future__ import annotations

import json

from collate import run as collate_run
from fakes.brain import Brain
from fakes.corpus import dataset_items
from fakes.erring import WRONG_VALUE, ErringBrain, by_model
from fakes.server import FakeLMServer


def test_a_cascade_runs_across_two_servers_with_their_own_keys(small_corpus, monkeypatch, capsys, tmp_path):
    corpus, index = small_corpus
    first = dataset_items(corpus)[0]
    wrong_on = {first["metadata"][0]["id"]}
    cheap = ErringBrain(only=wrong_on, kinds=(WRONG_VALUE,))
    with (
        FakeLMServer(by_model({"cheap": cheap}, Brain())) as local,
        FakeLMServer(Brain(), model_name="strong-reader") as hosted,
    ):
        env = {
            **local.env(),
            "COLLATE_API_KEY": "local-key",
            "COLLATE_CACHE": "false",
            "COLLATE_LM_EXTRACTOR": "openai/cheap-reader",
            "COLLATE_LM_EXTRACTOR_ESCALATE": "openai/strong-reader",
            "COLLATE_API_BASE_ESCALATE": hosted.url,
            "COLLATE_API_KEY_ESCALATE": "hosted-key",
        }
        for name, value in env.items():
            monkeypatch.setenv(name, value)
        out = tmp_path / "run"
        argv = ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out),
                "--limit", "1", "--no-judge", "--no-autolog", "--no-progress"]  # fmt: skip
        assert collate_run.main(argv) == 0
        on_hosted, on_local, hosted_url = list(hosted.records), list(local.records), hosted.url
    assert {doc for doc, _ in cheap.erred} == wrong_on
    hosted_extractions = [r for r in on_hosted if r.kind == "extract"]
    assert len(hosted_extractions) == 1  # the one document the cheap reader got wrong, asked again
    assert {r.model for r in on_hosted} == {"strong-reader"} and {r.key for r in on_hosted} == {"hosted-key"}
    assert len(on_hosted) == len(hosted_extractions) + 1  # and the LM check before the run
    assert not any("strong" in r.model for r in on_local)
    assert {r.key for r in on_local} == {"local-key"}
    assert any(r.kind == "extract" and "cheap" in r.model for r in on_local)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["lm_stages"]["escalate"]["calls"] == 1 and summary["cascade_escalated"] == 1
    recorded = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert recorded["endpoints"] == {"escalate": hosted_url}
    assert "hosted-key" not in (out / "run.json").read_text(encoding="utf-8")


def test_a_dead_strong_server_is_named_by_its_own_setting(small_corpus, monkeypatch, capsys, tmp_path):
    corpus, index = small_corpus
    with FakeLMServer(Brain()) as local:
        for name, value in {
            **local.env(),
            "COLLATE_LM_EXTRACTOR": "openai/cheap-reader",
            "COLLATE_LM_EXTRACTOR_ESCALATE": "openai/strong-reader",
            "COLLATE_API_BASE_ESCALATE": "http://127.0.0.1:9/v1",  # nothing listens on the discard port
        }.items():
            monkeypatch.setenv(name, value)
        argv = ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(tmp_path / "r"),
                "--limit", "1", "--no-judge", "--no-autolog", "--no-progress"]  # fmt: skip
        assert collate_run.main(argv) == 2
    err = capsys.readouterr().err
    assert "http://127.0.0.1:9/v1" in err and "COLLATE_API_BASE_ESCALATE (--api-base-escalate)" in err
