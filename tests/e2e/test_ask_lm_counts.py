"""`collate ask` says when a stage's LM call failed or its reply could not be parsed: one line per run
on stderr beside the answer ("LM: planner 1 parse failure of 1 call"), nothing when every call went
well; the run folder's answer.json keeps every stage's counts. Faults are injected on the wire by the
fake OpenAI-compatible server, so the counts are the ones DSPy's own callbacks saw.
"""

from __future__ import annotations

import json

import pytest

from collate import ask
from fakes.brain import Brain
from fakes.chat_format import call_kind
from fakes.corpus import dataset_items
from fakes.server import FakeLMServer, Fault

KIND_OF_STAGE = {"planner": "plan", "extractor": "extract", "answer": "answer"}


@pytest.fixture
def item(small_corpus):
    """The smallest dataset item over two or more documents."""
    items = [i for i in dataset_items(small_corpus[0]) if len(i["metadata"]) >= 2]
    return min(items, key=lambda i: len(i["metadata"]))


def ask_text(small_corpus, item, server, monkeypatch, capsys, tmp_path, *env: tuple[str, str]):
    """`collate ask` in text mode against the fake server: (exit code, stdout, stderr, answer.json)."""
    for name, value in [*server.env().items(), ("COLLATE_CACHE", "false"), *env]:
        monkeypatch.setenv(name, value)
    run_dir = tmp_path / "run"
    code = ask.main(
        [
            "--index",
            str(small_corpus[1]),
            "--dataset",
            str(small_corpus[0] / "dataset.json"),
            "--question-id",
            item["question_id"],
            "--run-dir",
            str(run_dir),
            "--no-progress",
            "--fact-store",
            str(tmp_path / "facts.sqlite"),
        ]
    )
    captured = capsys.readouterr()
    saved = json.loads((run_dir / "answer.json").read_text(encoding="utf-8")) if code in (0, 1) else {}
    return code, captured.out, captured.err, saved


def lm_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("LM:")]


def test_a_clean_run_prints_no_lm_line_and_its_run_folder_counts_every_call(
    small_corpus, item, monkeypatch, capsys, tmp_path
):
    with FakeLMServer(Brain()) as server:
        code, out, err, saved = ask_text(small_corpus, item, server, monkeypatch, capsys, tmp_path)
        sent, total = server.calls_by_kind(), server.calls
    assert code == 0, err
    assert sent.pop("preflight") == 1  # the LM check: one call, no stage's
    total -= 1
    assert out.strip() and lm_lines(out) == [] and lm_lines(err) == []
    assert (saved["lm_calls"], saved["lm_errors"], saved["lm_parse_failures"]) == (total, 0, 0)
    stages = saved["lm_stages"]
    for stage, kind in KIND_OF_STAGE.items():
        assert stages[stage]["calls"] == sent[kind] >= 1, (stage, stages, sent)
        assert stages[stage]["parse_failures"] == stages[stage]["lm_errors"] == 0


@pytest.mark.parametrize(
    ("stage", "fault", "trouble"),
    [
        ("answer", "malformed", "parse failure"),
        ("planner", "malformed", "parse failure"),
        ("planner", "500", "LM error"),
    ],
)
def test_a_stage_s_unparseable_reply_or_failed_call_is_one_line_after_the_answer(
    small_corpus, item, monkeypatch, capsys, tmp_path, stage, fault, trouble
):
    kind = KIND_OF_STAGE[stage]
    once = Fault(fault, when=lambda messages: call_kind(messages) == kind, times=1)
    with FakeLMServer(Brain(), faults=[once]) as server:
        code, out, err, saved = ask_text(
            small_corpus, item, server, monkeypatch, capsys, tmp_path, ("COLLATE_NUM_RETRIES", "0")
        )
        sent, served = server.calls_by_kind(), server.faults_served()
    # no plan: the question failed, exit 1, nothing on stdout (a malformed plan is asked again: answered)
    planless = stage == "planner" and fault != "malformed"
    assert code == (1 if planless else 0), err
    assert served == {fault: 1}, served
    assert sent.pop("preflight") == 1
    calls = sent[kind]
    reasked = " and 1 re-ask" if fault == "malformed" else ""  # programs/lm/reask.py
    expected = f"LM: {stage} 1 {trouble}{reasked} of {calls} call{'' if calls == 1 else 's'}"
    # the one faulty stage, named; no other stage. A plan whose one call failed spent nothing: its error
    # line ("planning failed: LMServerError ...") is the whole story, not a count and a 0-token cost block too
    assert lm_lines(err) == ([] if planless else [expected]), err
    assert bool(out.strip()) != planless and lm_lines(out) == []  # stdout stays the answer, if there is one
    assert ("error: no answer: planning failed" in err) == planless
    stages = saved["lm_stages"]
    counted, total = ("parse_failures", "lm_parse_failures") if fault == "malformed" else ("lm_errors",) * 2
    assert stages[stage][counted] == 1 and saved[total] == 1, saved
    assert all(c["parse_failures"] == c["lm_errors"] == 0 for s, c in stages.items() if s != stage), stages
    assert saved["lm_calls"] == sum(sent.values())
