"""Issue 30: the run that scores its questions and the same folder logged later (`collate run --log-only`,
or a rerun after a store fault) log one and the same ScoredRun, built in one place
(evaluate.runs.evaluation.scored_run).

Before: each built its own ScoredRun from the same pieces, spelled twice (name, tags, dataset input,
params, gold, program state, failure reason).
"""

from __future__ import annotations

import dataclasses
import json

from collate import run as collate_run
from evaluate import tracking
from evaluate.runs import store_log
from fakes.brain import Brain
from fakes.server import FakeLMServer


def _run(small_corpus, out, *extra: str) -> int:
    corpus, index = small_corpus
    return collate_run.main(
        ["--dataset", str(corpus / "dataset.json"), "--index", str(index), "--out", str(out),
         "--limit", "2", "--no-progress", "--no-autolog", "--no-judge", *extra]
    )  # fmt: skip


def _same(value):
    """As the folder keeps it (JSON): tuples are lists, paths strings."""
    return json.loads(json.dumps(value, default=str, sort_keys=True))


def test_a_run_and_its_folder_logged_later_log_the_same_scored_run(
    small_corpus, tmp_path, monkeypatch, capsys
):
    server = FakeLMServer(Brain()).start()
    for name, value in {**server.env(), "COLLATE_CACHE": "false"}.items():
        monkeypatch.setenv(name, value)
    logged: list[store_log.ScoredRun] = []
    real = store_log.log_scored

    def log_scored(run, scored, on_retry=None):  # the first attempt meets a store fault: the folder waits
        logged.append(scored)
        if len(logged) == 1:
            raise tracking.StoreFault("database is locked")
        return real(run, scored, on_retry=on_retry)

    monkeypatch.setattr(store_log, "log_scored", log_scored)
    out = tmp_path / "run"
    try:
        assert _run(small_corpus, out) == 1
        assert _run(small_corpus, out, "--log-only") == 0, capsys.readouterr().err
    finally:
        server.stop()
    first, later = logged
    for field in dataclasses.fields(store_log.ScoredRun):
        if field.name == "answered":  # Answered objects: the run's own, then read back from the folder
            continue
        assert _same(getattr(later, field.name)) == _same(getattr(first, field.name)), field.name
    assert [(a.question_id, a.answer, a.error) for a in later.answered] == [
        (a.question_id, a.answer, a.error) for a in first.answered
    ]
    assert first.name and first.tags["out"] == str(out) and first.params["questions"] == 2
    assert first.program_state and first.gold and first.summary["n"] == 2 and len(first.scores) == 2
