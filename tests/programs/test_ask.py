"""`python -m collate.ask`: --json shape, dataset scope without gold, run folder, clear exit-2 errors."""

from __future__ import annotations

import json

import pytest
from dspy.utils.dummies import DummyLM

from collate import ask


@pytest.fixture
def cli(monkeypatch, store, reply_for, tmp_path):
    """ask.main with the tiny store and a DummyLM behind the real Settings -> configure path."""
    lm = DummyLM(reply_for.replies())
    store.index_dir = tmp_path  # facts go next to the index, as with a real one
    monkeypatch.setattr(ask, "open_store", lambda index_dir: store)
    monkeypatch.setattr("programs.lm.settings.build_lm", lambda settings, stage=None: lm)
    monkeypatch.setenv("COLLATE_LM", "dummy/test")
    lm.preflights = []  # the LM check, made once every input is checked (tests/programs/test_preflight.py)
    monkeypatch.setattr(ask, "preflight", lambda settings, stages: lm.preflights.append(stages))
    return lm


def test_json_output_shape(cli, tmp_path, capsys):
    code = ask.main(["--index", str(tmp_path), "--json", "--no-progress", "哪家公司资本充足率最高？"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert set(out) == {
        "answer",
        "coverage_line",
        "coverage",
        "records",
        "code",
        "result",
        "citations",
        "missing",
        "usage",
        "cost",
        "error",
    }
    assert out["answer"] == "资本充足率最高的是600001。" and len(out["records"]) == 3 and out["error"] is None
    assert cli.preflights == [["planner", "extractor", "normalizer", "coder", "answer"]]
    assert out["citations"][0]["symbol"] == "600001" and out["missing"] == []
    assert (tmp_path / "facts.sqlite").exists()  # facts kept next to the index by default


def test_dataset_scope_strips_gold_and_writes_the_run_folder(cli, tmp_path, capsys):
    dataset = tmp_path / "ds.json"
    dataset.write_text(
        json.dumps(
            [
                {
                    "question_id": "q_1",
                    "question": "哪家公司资本充足率最高？",
                    "final_answer": "GOLD-ANSWER",
                    "source_answer": ["GOLD-SOURCE"],
                    "metadata": [
                        {
                            "id": "doc-a",
                            "symbol": "600001",
                            "year": 2023,
                            "doctype": "A股年报",
                            "schema": {"value_car": "资本充足率"},
                            "value_car": 99.99,
                        },
                        {
                            "id": "doc-b",
                            "symbol": "600002",
                            "year": 2023,
                            "doctype": "A股年报",
                            "value_car": 88.88,
                        },
                    ],
                }
            ],
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    run_dir = tmp_path / "run"
    code = ask.main(
        [
            "--index",
            str(tmp_path),
            "--dataset",
            str(dataset),
            "--question-id",
            "q_1",
            "--run-dir",
            str(run_dir),
            "--no-progress",
        ]
    )
    assert code == 0 and "600001" in capsys.readouterr().out
    prompts = "\n".join(m["content"] for e in cli.history for m in e["messages"])
    assert not any(gold in prompts for gold in ("GOLD", "99.99", "88.88", "value_car"))
    run_log = json.loads((run_dir / "run_log.json").read_text())
    assert run_log["question_id"] == "q_1" and set(run_log["doc_interactions"]) == {"doc-a", "doc-b"}
    item = run_log["doc_interactions"]["doc-a"][0]
    assert set(item) == {"ts", "attempt", "prompt", "answer"} and "15.44%" in item["answer"]
    assert {p.name for p in (run_dir / "trace").iterdir()} == {
        "plan.json",
        "extract.json",
        "normalize.json",
        "code.json",
        "answer.json",
    }


def test_no_lm_configured_exits_2_with_the_how_to(monkeypatch, tmp_path, capsys):
    monkeypatch.delenv("COLLATE_LM", raising=False)
    assert ask.main(["--index", str(tmp_path), "q"]) == 2
    err = capsys.readouterr().err
    assert "COLLATE_LM" in err and "openai/gpt-4.1-mini" in err and "localhost:8000/v1" in err


@pytest.mark.parametrize(
    ("argv", "fix"),
    [
        (["--question-id", "q_1", "q"], "--dataset"),
        (["--dataset", "missing.json"], "--question-id"),
        (
            ["--dataset", "missing.json", "--question-id", "q_1"],
            "no such dataset; pass a MuDABench JSON file",
        ),
        (["--program", "nope.json", "q"], "--program nope.json: no such file"),
    ],
)
def test_bad_input_is_one_line_naming_the_fix(cli, tmp_path, capsys, argv, fix):
    assert ask.main(["--index", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert fix in err and err.count("\n") == 0


def test_flat_rag_baseline_from_the_cli(cli, tmp_path, capsys):
    cli.answers = {"[[ ## passages ## ]]": {"answer": "基线答案"}}
    code = ask.main(["--index", str(tmp_path), "--baseline", "flat-meta", "--json", "--no-progress", "q"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["answer"] == "基线答案" and out["records"] == [] and out["citations"]


def test_per_stage_model_flags_reach_the_settings(cli, tmp_path, monkeypatch):
    seen = {}
    monkeypatch.setattr(ask, "configure", lambda settings, program: seen.update(settings.as_params()))
    monkeypatch.setattr(
        ask, "build", lambda args, settings, store: lambda **kw: (_ for _ in ()).throw(ValueError("stop"))
    )
    ask.main(["--index", str(tmp_path), "--lm-extractor", "openai/small", "--no-progress", "q"])
    assert seen["lm_extractor"] == "openai/small" and seen["lm"] == "dummy/test"


def test_a_run_whose_planning_failed_says_why_and_lists_every_document(cli, tmp_path, capsys):
    cli.answers = {"[[ ## catalog ## ]]": {"reasoning": "x", "plan": "not a plan"}}
    code = ask.main(["--index", str(tmp_path), "--json", "--no-progress", "q"])
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert code == 1 and out["error"].startswith("planning failed")  # no answer: failed, not answered
    assert out["answer"].startswith("No answer: planning failed")
    assert {m["doc_id"] for m in out["missing"]} == {"doc-a", "doc-b", "doc-c", "doc-esg"}
    assert captured.err.strip().splitlines()[-1].startswith("error: no answer: planning failed")
    assert ask.main(["--index", str(tmp_path), "--no-progress", "q"]) == 1
    assert capsys.readouterr().out == ""  # stdout is the answer, and there is none


def test_an_lm_that_fails_its_check_is_exit_2_before_any_other_call(cli, tmp_path, capsys, monkeypatch):
    from programs.lm.preflight import LMUnavailable

    def dead(settings, stages):
        raise LMUnavailable("LM check failed: cannot reach http://127.0.0.1:9/v1 for dummy/test (refused)")

    monkeypatch.setattr(ask, "preflight", dead)
    code = ask.main(["--index", str(tmp_path), "--json", "--no-progress", "哪家公司资本充足率最高？"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == "" and cli.history == []
    assert (
        captured.err.strip()
        == "error: LM check failed: cannot reach http://127.0.0.1:9/v1 for dummy/test (refused)"
    )


def test_progress_shows_documents_done_over_total_on_stderr(cli, tmp_path, capsys):
    assert ask.main(["--index", str(tmp_path), "q"]) == 0
    captured = capsys.readouterr()
    assert "documents" in captured.err and "3/3" in captured.err and "3/3" not in captured.out


def test_help_states_the_real_defaults(capsys):
    from programs.lm.settings import Settings

    with pytest.raises(SystemExit):
        ask.parse_args(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert f"COLLATE_CONCURRENCY, default {Settings.concurrency})" in text
    assert f"COLLATE_K, default {Settings.k})" in text


# ---- issue 11: outputs checked before any LM call is paid for; the answer never lost ----------------
@pytest.mark.parametrize(
    ("make_argv", "fix"),
    [
        (lambda d: ["--run-dir", str(d / "a-file")], "--run-dir"),
        (lambda d: ["--fact-store", str(d / "garbage.sqlite")], "--fact-store"),
        (lambda d: ["--fact-store", str(d)], "is a folder"),
        (lambda d: ["--k", "-1"], "k=-1 is out of range"),
        (lambda d: ["--k", "0"], "k=0 is out of range"),
        (lambda d: ["--concurrency", "0"], "concurrency=0 is out of range"),
    ],
)
def test_unusable_outputs_and_values_fail_before_the_first_lm_call(cli, tmp_path, capsys, make_argv, fix):
    (tmp_path / "a-file").write_text("not a folder")
    (tmp_path / "garbage.sqlite").write_bytes(b"this is not a database, it is text" * 100)
    code = ask.main(
        ["--index", str(tmp_path), "--no-progress", *make_argv(tmp_path), "哪家公司资本充足率最高？"]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and fix in err and err.count("\n") == 0, err
    assert cli.history == [] and cli.preflights == []  # nothing was paid for, not even the LM check
    assert (tmp_path / "garbage.sqlite").read_bytes().startswith(b"this is not a database")  # not replaced


def test_a_zero_concurrency_from_the_environment_is_refused(cli, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLLATE_CONCURRENCY", "0")
    assert ask.main(["--index", str(tmp_path), "--no-progress", "q"]) == 2
    assert "COLLATE_CONCURRENCY" in capsys.readouterr().err and cli.history == []


def test_a_question_of_only_whitespace_is_refused(cli, tmp_path, capsys):
    assert ask.main(["--index", str(tmp_path), "--no-progress", "  \n\t "]) == 2
    assert "no question" in capsys.readouterr().err and cli.history == []


def test_the_answer_is_printed_even_when_the_run_folder_cannot_be_written(cli, tmp_path, capsys, monkeypatch):
    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ask, "write_run", disk_full)
    code = ask.main(
        [
            "--index",
            str(tmp_path),
            "--run-dir",
            str(tmp_path / "run"),
            "--no-progress",
            "哪家公司资本充足率最高？",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0 and "资本充足率最高的是600001。" in captured.out
    assert "could not write the run folder" in captured.err and "No space left" in captured.err


def test_ctrl_c_stops_with_one_line_and_keeps_the_facts(cli, tmp_path, capsys, monkeypatch):
    from programs.facts.store import FactStore

    def ctrl_c(self, done, total, outcome):  # the user presses Ctrl-C as the first document is done
        raise KeyboardInterrupt

    monkeypatch.setattr(ask.Progress, "__call__", ctrl_c)
    monkeypatch.setenv("COLLATE_CONCURRENCY", "1")
    code = ask.main(["--index", str(tmp_path), "哪家公司资本充足率最高？"])
    err = capsys.readouterr().err.strip()
    assert code == 130 and err.startswith("interrupted") and err.count("\n") == 0
    assert len(FactStore(tmp_path / "facts.sqlite")) >= 2  # what was extracted before the interrupt is kept
