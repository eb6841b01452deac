"""Issue 31 item 2: a reply a stage cannot parse is asked again as a fresh request, for every stage.

Before: one malformed reply from the planner failed the question (`collate ask` exit 1, "planning
failed: AdapterParseError"), a malformed extraction failed its document, a malformed code or answer
reply lost the computed answer; and asking the same request again was answered from DSPy's cache with
the same bad reply. The fake server sends each stage's first reply malformed and every later one good,
with the cache on: the stage's re-ask must reach the server (not the cache), be counted per stage
(`parse_retries`) and priced, and the question must be answered as without the fault.
"""

from __future__ import annotations

import json

import dspy
import pytest

from collate import ask as collate_ask
from evaluate.dataset import load_dataset
from fakes.brain import Brain
from fakes.chat_format import call_kind
from fakes.server import FakeLMServer, Fault
from programs.lm.progress import current_watch
from programs.lm.settings import Settings, configure
from programs.stages.normalizer import Normalizer
from tests.programs.test_normalizer import DOCS, FIELDS, facts

STAGE_KINDS = {"planner": "plan", "extractor": "extract", "coder": "write_code", "answer": "answer"}
PRICE = "1"  # dollars per million tokens, in and out: every call priced


def malformed_once(kind: str) -> Fault:
    return Fault("malformed", when=lambda messages: call_kind(messages) == kind, times=1)


def _ask(small_corpus, monkeypatch, capsys, *faults: Fault, facts_at=None) -> tuple[int, dict, FakeLMServer]:
    corpus, index = small_corpus
    dataset = corpus / "dataset.json"
    item = load_dataset(dataset)[0]
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=True)  # the cache on, as a user's
    with FakeLMServer(Brain(), faults=faults) as server:
        for name, value in {**server.env(), "COLLATE_PRICE_IN": PRICE, "COLLATE_PRICE_OUT": PRICE}.items():
            monkeypatch.setenv(name, value)
        code = collate_ask.main(
            ["--index", str(index), "--dataset", str(dataset), "--question-id", item.question_id, "--json",
             "--no-progress", "--fact-store", str(facts_at)]
        )  # fmt: skip
    out = capsys.readouterr().out
    return code, (json.loads(out) if out.strip().startswith("{") else {}), server


@pytest.mark.parametrize("stage", list(STAGE_KINDS))
def test_one_malformed_reply_is_asked_again_fresh_counted_priced_and_the_question_answered(
    small_corpus, monkeypatch, capsys, tmp_path, stage
):
    code, clean, _ = _ask(small_corpus, monkeypatch, capsys, facts_at=tmp_path / "clean.sqlite")
    assert code == 0 and not clean.get("error")
    code, faulty, server = _ask(
        small_corpus,
        monkeypatch,
        capsys,
        malformed_once(STAGE_KINDS[stage]),
        facts_at=tmp_path / "faulty.sqlite",
    )  # a fresh cache and fact store: every call asked again
    assert code == 0 and not faulty.get("error"), faulty
    assert server.faults_served() == {"malformed": 1}
    assert faulty["answer"] == clean["answer"]
    figures, before = faulty["cost"]["stages"][stage], clean["cost"]["stages"][stage]
    assert figures["parse_failures"] == 1 and figures["parse_retries"] == 1
    assert figures["calls"] == before["calls"] + 1 == server.calls_by_kind()[STAGE_KINDS[stage]]
    assert figures["usd"] > before["usd"] and figures["tokens_in"] > before["tokens_in"]  # the re-ask is paid


def test_the_normalizer_s_malformed_reply_is_asked_again_fresh(monkeypatch):
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=True)
    with FakeLMServer(Brain(), faults=[malformed_once("normalize")]) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        configure(Settings.from_env())
        out = Normalizer(batch_size=1)(
            fields=FIELDS, facts=facts("thirteen and a half percent"), documents=DOCS
        )
        sent = server.calls_by_kind()["normalize"]
    assert server.faults_served() == {"malformed": 1}
    assert "failed" not in out.notes.get("d2:ratio", ""), out.notes
    (counts,) = current_watch().summary().values()  # the one stage that called: the normalizer's
    assert counts["parse_failures"] == 1 and counts["parse_retries"] == 1 and sent == counts["calls"] >= 2


def test_a_stage_that_still_cannot_parse_fails_after_the_bounded_re_asks(
    small_corpus, monkeypatch, capsys, tmp_path
):
    monkeypatch.setenv("COLLATE_PARSE_RETRIES", "2")
    always = Fault("malformed", when=lambda messages: call_kind(messages) == "plan")
    code, result, server = _ask(small_corpus, monkeypatch, capsys, always, facts_at=tmp_path / "facts.sqlite")
    assert code == 1 and "AdapterParseError" in str(result.get("error"))
    assert server.calls_by_kind()["plan"] == 3  # the first ask and 2 re-asks, no more
    assert result["cost"]["stages"]["planner"]["parse_retries"] == 2
