"""Issue 32 item 2: the demo reader declines what is outside its rules instead of guessing."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from fakes.brain import CANNOT_ANSWER, CannotAnswer, plan
from fakes.corpus import ROOT

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


def test_ask_through_the_reader_prints_the_refusal_once_and_exits_1(small_corpus, tmp_path):
    """What a user's terminal shows with the settings `collate reader` prints, so a subprocess (logging set
    up as the CLI does): before, the refusal came three times (an ERROR log line, a "missing:" line, the
    error line), each wrapped in "[collate-reader] litellm.BadRequestError: OpenAIException - ", around a
    0-token cost block."""
    from collate import reader

    _, index = small_corpus
    server = reader.start_reader()
    question = "In which month did most companies hold their meetings in 2021?"
    argv = ["--index", str(index), "--fact-store", str(tmp_path / "facts.sqlite"), "--no-progress", question]
    try:
        done = subprocess.run(
            [sys.executable, "-m", "collate", "ask", *argv],
            cwd=ROOT,
            env={**os.environ, **reader.reader_settings(server), "COLLATE_CACHE": "false"},
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.stop()
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"error: no answer: planning failed: {CANNOT_ANSWER} (no rule of its knows the field this question asks for)"
    ]
