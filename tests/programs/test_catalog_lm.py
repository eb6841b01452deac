"""The catalog draft's LM fallback: asked only about unsettled rows; code keeps only what the text bears out."""

from __future__ import annotations

from pathlib import Path

import dspy
from dspy.utils.dummies import DummyLM

from programs.catalog_lm import LM_RULE, fill_unsettled
from retrievers.catalog_draft.draft import DraftRow
from retrievers.catalog_draft.finding import Finding
from retrievers.catalog_draft.rules_en import ANNUAL

REVIEW = (
    "Acme Widgets Annual Review\nA letter to our shareholders on the year 2022.\n"
    "Acme Widgets, Inc. (NYSE: ACMW) grew sales in every region.\n"
)


def _row(name: str = "review.pdf", **found) -> DraftRow:
    row = DraftRow(file=Path(name), id=Path(name).stem, text=REVIEW)
    row.found = {"language": Finding("en", "text:script", True), **found}
    return row


def test_lm_fills_only_what_the_rules_missed_and_the_row_is_marked_low():
    row = _row(symbol=Finding("ACMW", "text:exchange-tag", True))
    lm = DummyLM(
        [
            {
                "symbol": "XXXX",
                "year": "2022",
                "doctype": "us stock annual report",
                "company": "Acme Widgets, Inc.",
            }
        ]
    )
    with dspy.context(lm=lm):
        assert fill_unsettled([row]) == 1
    assert row.found["symbol"].value == "ACMW"  # a rule's finding is never replaced
    assert (row.found["year"].value, row.found["doctype"].value) == (2022, ANNUAL)
    assert row.found["year"].rule == LM_RULE and row.confidence == "low"
    assert len(lm.history) == 1
    prompt = lm.history[0]["messages"][-1]["content"]
    assert "symbol: ACMW" in prompt and "review.pdf" in prompt


def test_lm_answers_the_text_does_not_bear_out_are_dropped_with_a_note():
    row = _row()
    lm = DummyLM(
        [{"symbol": "ZZZQ", "year": "2019", "doctype": "Glossy Brochure", "company": "Made Up Corp"}]
    )
    with dspy.context(lm=lm):
        assert fill_unsettled([row]) == 0
    assert set(row.found) == {"language"} and not row.settled
    notes = " ".join(row.notes)
    assert "'ZZZQ', which the first pages do not print" in notes
    assert "'2019', which the first pages do not print" in notes
    assert "'Glossy Brochure', which is not one of" in notes


def test_settled_and_unreadable_rows_cost_no_lm_call():
    settled = _row(
        symbol=Finding("ACMW", "r", True), year=Finding(2022, "r", True), doctype=Finding(ANNUAL, "r", True)
    )
    unreadable = DraftRow(file=Path("locked.pdf"), id="locked", problem="encrypted: ...")
    lm = DummyLM([])
    with dspy.context(lm=lm):
        assert fill_unsettled([settled, unreadable]) == 0
    assert lm.history == []


def test_a_failing_lm_call_leaves_the_row_unsettled_with_the_reason():
    class Broken(dspy.Module):
        def forward(self, row):
            raise RuntimeError("server said 500")

    row = _row()
    assert fill_unsettled([row], Broken()) == 0
    assert not row.settled and "server said 500" in row.notes[0]
