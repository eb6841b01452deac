"""Issue 32 item 2: the demo reader declines what is outside its rules instead of guessing."""

from __future__ import annotations

import pytest

from fakes.brain import CANNOT_ANSWER, CannotAnswer, plan

DEMO_CATALOG = (
    "56 documents\ndoctype: A股年报 (12), US Stock Annual Report (8)\nyear: 2021 (28), 2022 (28)\n"
    "symbols: 000803, GLEN"
)
REAL_10K_CATALOG = (
    "22 documents\ndoctype: 10k (15), 10q (3), 8k (2), Earnings (2)\nyear: 2022 (5), 2023 (5)\n"
    "symbols: AMD, Verizon"
)


def test_a_question_no_rule_knows_is_declined_with_the_message():
    with pytest.raises(CannotAnswer) as declined:
        plan(
            {
                "question": "In which month did most companies hold their meetings in 2021?",
                "catalog": DEMO_CATALOG,
            }
        )
    assert str(declined.value).startswith(CANNOT_ANSWER)


def test_a_collection_of_other_filings_is_declined_even_for_a_question_it_knows():
    """On eight real 10-Ks it answered "the latest operating revenue is 1970-01-01 (VZ)", exit 0."""
    question = "Which three companies had the highest gross margin in 2022?"
    assert plan({"question": question, "catalog": DEMO_CATALOG})["plan"]["subqueries"]
    with pytest.raises(CannotAnswer):
        plan({"question": question, "catalog": REAL_10K_CATALOG})


def test_latest_of_a_figure_is_declined_not_read_as_a_date():
    """On real 10-Ks: "the latest operating revenue is 1970-01-01 (ADBE)", exit 0."""
    with pytest.raises(CannotAnswer):
        plan(
            {
                "question": "Which company had the highest total revenue in its latest fiscal year?",
                "catalog": DEMO_CATALOG,
            }
        )


def test_ask_through_the_reader_fails_a_question_outside_its_rules_with_exit_1(
    small_corpus, brain_server, tmp_path, capsys
):
    """A failed answer naming the fix, never a confident wrong one: exit 1, nothing on stdout."""
    from collate import ask

    _, index = small_corpus
    argv = ["--index", str(index), "--fact-store", str(tmp_path / "facts.sqlite"), "--no-progress"]
    code = ask.main([*argv, "In which month did most companies hold their meetings in 2021?"])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert CANNOT_ANSWER in err.splitlines()[-1]
    assert sum(line.startswith("missing:") for line in err.splitlines()) == 1  # not one line per document
