"""Issue 32 item 3: `collate dataset` starts a dataset of your own questions and says what is missing."""

from __future__ import annotations

import json

from collate.cli import main as collate
from evaluate.dataset import load_dataset

ROWS = [
    {
        "id": "ACME_2022_10K",
        "symbol": "ACME",
        "year": 2022,
        "doctype": "10k",
        "language": "en",
        "path": "a.pdf",
    },
    {
        "id": "ACME_2023_10K",
        "symbol": "ACME",
        "year": 2023,
        "doctype": "10k",
        "language": "en",
        "path": "b.pdf",
    },
    {
        "id": "BOLT_2023_10K",
        "symbol": "BOLT",
        "year": 2023,
        "doctype": "10k",
        "language": "en",
        "path": "c.pdf",
    },
]


def _catalog(tmp_path):
    path = tmp_path / "catalog.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    return path


def test_new_writes_the_questions_with_the_documents_in_scope_and_a_place_for_the_gold(tmp_path, capsys):
    out = tmp_path / "my.json"
    argv = ["dataset", "new", "--years", "2023", "--catalog", str(_catalog(tmp_path)), "--out", str(out)]
    assert (
        collate([*argv, "Which company had the higher revenue in 2023?", "What was BOLT's net income?"]) == 0
    )
    items = load_dataset(out)  # the loader run, score and compile use
    assert [i.question for i in items] == [
        "Which company had the higher revenue in 2023?",
        "What was BOLT's net income?",
    ]
    assert all(i.doc_ids == ["ACME_2023_10K", "BOLT_2023_10K"] and i.final_answer == "" for i in items)
    assert "collate dataset check" in capsys.readouterr().out
    assert collate([*argv, "again?"]) == 2  # never over the gold answers written in it
    assert "--force" in capsys.readouterr().err


def test_check_names_each_question_without_a_gold_answer_then_passes(tmp_path, capsys):
    out = tmp_path / "my.json"
    assert (
        collate(
            ["dataset", "new", "--catalog", str(_catalog(tmp_path)), "--out", str(out), "Q one?", "Q two?"]
        )
        == 0
    )
    capsys.readouterr()
    assert collate(["dataset", "check", str(out)]) == 1
    report = capsys.readouterr().out
    assert report.count("no gold answer") == 2 and "2 question(s), 0 with a gold answer" in report
    items = json.loads(out.read_text())
    for item in items:
        item["final_answer"] = "ACME"
    out.write_text(json.dumps(items))
    assert collate(["dataset", "check", str(out)]) == 0
    assert "ready" in capsys.readouterr().out


def test_a_missing_file_is_named_as_given(tmp_path, capsys):
    assert collate(["dataset", "check", str(tmp_path / "nope.json")]) == 2
    assert "nope.json" in capsys.readouterr().err
    out = tmp_path / "my.json"
    argv = [
        "dataset",
        "new",
        "--catalog",
        str(_catalog(tmp_path)),
        "--out",
        str(out),
        "--questions",
        "qs.txt",
    ]
    assert collate(argv) == 2 and "qs.txt" in capsys.readouterr().err


def test_the_questions_are_never_taken_for_a_flags_values_in_either_order(tmp_path, capsys):
    """`--years 2023 "Q"` took the question for a year (nargs="+"): the scope flags take one comma list."""
    catalog, questions = str(_catalog(tmp_path)), ["Which company grew fastest?", "What was BOLT's revenue?"]
    orders = {
        "flags first": ["--years", "2022,2023", "--symbols", "BOLT", *questions],
        "questions first": [*questions, "--years", "2022,2023", "--symbols", "BOLT"],
        "flags between": [
            questions[0],
            "--years",
            "2022",
            "--years",
            "2023",
            questions[1],
            "--symbols",
            "BOLT",
        ],
    }
    for name, scope in orders.items():
        out = tmp_path / f"{name}.json"
        assert collate(["dataset", "new", "--catalog", catalog, "--out", str(out), *scope]) == 0, name
        items = load_dataset(out)
        assert [i.question for i in items] == questions, name
        assert all(i.doc_ids == ["BOLT_2023_10K"] for i in items), name
    capsys.readouterr()


def test_the_old_space_separated_years_are_refused_naming_the_comma_list(tmp_path, capsys):
    out = tmp_path / "my.json"
    argv = ["dataset", "new", "--catalog", str(_catalog(tmp_path)), "--out", str(out)]
    assert collate([*argv, "--years", "2022", "2023", "Which company grew fastest?"]) == 2
    assert "--years 2022,2023" in capsys.readouterr().err and not out.exists()
    assert collate([*argv, "--years", "2022,twenty", "Q?"]) == 2
    assert "comma list" in capsys.readouterr().err
