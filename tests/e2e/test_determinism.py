"""Issue 21 part 1: the same program, dataset, LM and settings send the same requests and give the same
answers at any concurrency.

The fake LM answers from a hash of the whole prompt (tests/fakes/prompt_hash.py), so a prompt that
differs between runs can change an answer, as with a real model; each call waits a random time, so
threads finish in a different order each run. The first 8 questions of the small corpus share their
two documents and several fields (capital adequacy ratio twice, total operating cost three times),
which is where a fact reused from another question used to depend on which thread finished first.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from collate import compile as collate_compile
from collate import run as collate_run
from fakes.prompt_hash import PromptHashed
from fakes.server import FakeLMServer

QUESTIONS = 8
JITTER = 0.05  # seconds: enough to reorder threads from call to call


@pytest.fixture
def hashed_server(monkeypatch):
    responder = PromptHashed()
    with FakeLMServer(responder, latency=0.001, jitter=JITTER) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("COLLATE_CACHE", "false")
        yield server, responder


def _taken(responder: PromptHashed) -> Counter:
    """The requests seen so far (kind, prompt hash), and forget them."""
    seen = Counter(responder.prompts)
    responder.prompts.clear()
    return seen


def _answers(out: Path) -> dict[str, str]:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    return {r["question_id"]: r["answer"] for r in rows}


def test_two_runs_at_concurrency_4_send_the_same_requests_and_give_the_same_answers(
    small_corpus, hashed_server, tmp_path, capsys
):
    corpus, index = small_corpus
    _, responder = hashed_server
    sent, answers = [], []
    for run in ("first", "second"):
        code = collate_run.main(
            ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(tmp_path / run),
             "--limit", str(QUESTIONS), "--concurrency", "4", "--no-judge", "--no-autolog", "--no-progress"]
        )  # fmt: skip
        assert code == 0, capsys.readouterr().err
        sent.append(_taken(responder))
        answers.append(_answers(tmp_path / run))
    assert len(answers[0]) == QUESTIONS and all(answers[0].values())
    only_first, only_second = sent[0] - sent[1], sent[1] - sent[0]
    assert not only_first and not only_second, (
        f"requests differ: {sum(only_first.values())} only in the first run "
        f"({Counter(k for k, _ in only_first.elements())}), {sum(only_second.values())} only in the second"
    )
    assert answers[0] == answers[1]


def test_a_compile_run_twice_from_one_seed_sends_the_same_requests_and_saves_the_same_program(
    small_corpus, hashed_server, tmp_path, capsys
):
    corpus, index = small_corpus
    _, responder = hashed_server
    sent, saved = [], []
    for run in ("first", "second"):
        out = tmp_path / f"{run}.json"
        code = collate_compile.main(
            ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out),
             "--optimizer", "bootstrap", "--limit", "4", "--max-demos", "2", "--threshold", "0",
             "--threads", "4", "--seed", "3", "--no-autolog"]
        )  # fmt: skip
        assert code == 0, capsys.readouterr().err
        sent.append(_taken(responder))
        saved.append(json.loads(out.read_text(encoding="utf-8")))
    only_first, only_second = sent[0] - sent[1], sent[1] - sent[0]
    assert not only_first and not only_second, (
        f"requests differ: {Counter(k for k, _ in only_first.elements())} only in the first compile, "
        f"{Counter(k for k, _ in only_second.elements())} only in the second"
    )
    assert saved[0] == saved[1]
