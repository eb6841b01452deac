"""The quote expects the fact repairs the extractor's model needed before, in the fact store the command uses
(programs/facts/repair_history.py): a first quote counts none and says so; the history is read, never written."""

from __future__ import annotations

import sqlite3

import pytest

from collate import ask as collate_ask
from collate import estimate
from collate import run as collate_run
from programs.facts import repair_history
from programs.facts.store import FactStore
from programs.quote.questions import MINIMUM_HISTORY
from tests.estimate.test_estimate import RUN_CHECKS, run_argv, stamp

BRAIN = "openai/fake-brain"  # the model brain_server sets as COLLATE_LM


def seeded(path, model: str, documents: int, repaired: int) -> None:
    store = FactStore(path)
    ids = [f"doc-{i}" for i in range(documents)]
    store.record_extractions(model, ids, ids[:repaired])
    store.close()


def quote_run(small_corpus, tmp_path):
    corpus, index = small_corpus
    args = collate_run.build_parser().parse_args(run_argv(corpus, index, tmp_path / "run", "--estimate"))
    return estimate.quote_run(args, *RUN_CHECKS)


def test_the_total_counts_the_share_of_documents_the_model_needed_repaired(
    small_corpus, brain_server, tmp_path, monkeypatch
):
    facts = tmp_path / "facts.sqlite"
    monkeypatch.setenv("COLLATE_FACT_STORE", str(facts))
    seeded(facts, "openai/another-model", 30, 30)  # another model's repairs say nothing of this one
    first = quote_run(small_corpus, tmp_path)
    assert first.stages["extractor"].calls == first.documents and first.expected_repairs == 0
    assert any("fact repairs expected: none counted" in n for n in first.notes)

    seeded(facts, BRAIN, 20, 5)
    before = stamp(facts)
    quote = quote_run(small_corpus, tmp_path)
    assert stamp(facts) == before  # read-only
    extraction = quote.stages["extractor"]
    assert extraction.calls == pytest.approx(quote.documents * 1.25)
    grown = sum(quote.totals()[k] for k in ("tokens_in", "tokens_out")) - sum(
        first.totals()[k] for k in ("tokens_in", "tokens_out")
    )
    assert quote.expected_repairs > 0 and grown == pytest.approx(quote.expected_repairs, abs=2)
    (note,) = [n for n in quote.notes if n.startswith("fact repairs expected")]
    assert "25% of the documents" in note and f"{BRAIN} needed for 5 of the 20 documents" in note
    assert not any("fact repairs (a second extraction call" in n for n in quote.notes)  # counted now
    printed = "\n".join(quote.lines())
    assert f"the total expects {quote.expected_repairs:,.0f}" in printed
    low, high = quote.span  # without repairs, as the range line says
    assert low < sum(first.totals()[k] for k in ("tokens_in", "tokens_out")) < high


def test_too_short_a_history_counts_nothing_and_says_how_much_is_needed(
    small_corpus, brain_server, tmp_path, monkeypatch
):
    facts = tmp_path / "facts.sqlite"
    monkeypatch.setenv("COLLATE_FACT_STORE", str(facts))
    seeded(facts, BRAIN, MINIMUM_HISTORY - 1, 4)
    quote = quote_run(small_corpus, tmp_path)
    assert quote.stages["extractor"].calls == quote.documents
    (note,) = [n for n in quote.notes if n.startswith("fact repairs expected")]
    assert (
        f"{MINIMUM_HISTORY - 1} document(s) of {BRAIN}" in note and f"once it holds {MINIMUM_HISTORY}" in note
    )


def test_an_ask_reads_the_history_of_the_fact_store_it_uses(
    small_corpus, brain_server, tmp_path, monkeypatch
):
    corpus, index = small_corpus
    facts = tmp_path / "facts.sqlite"
    monkeypatch.setenv("COLLATE_FACT_STORE", str(facts))
    seeded(facts, BRAIN, 10, 10)
    args = collate_ask.parse_args(
        ["--index", str(index), "--estimate", "Which company had the highest revenue?"]
    )
    quote = estimate.quote_ask(args, collate_ask.read_question, collate_ask.build)
    assert quote.stages["extractor"].calls == pytest.approx(2 * quote.documents)
    assert any("100% of the documents" in n for n in quote.notes)


@pytest.mark.parametrize("content", [b"", b"not a database at all" * 50])
def test_a_store_without_a_history_or_not_a_store_reads_as_none(tmp_path, content):
    path = tmp_path / "facts.sqlite"
    path.write_bytes(content)
    if not content:  # a store from before the history: a facts table only
        sqlite3.connect(path).execute("CREATE TABLE facts (doc_id TEXT)").connection.close()
    assert repair_history.read(path, BRAIN) is None
    assert repair_history.read(tmp_path / "missing.sqlite", BRAIN) is None
    assert repair_history.read(path, None) is None


def test_the_latest_documents_are_the_ones_counted(tmp_path):
    path = tmp_path / "facts.sqlite"
    seeded(path, BRAIN, repair_history.RECENT, repair_history.RECENT)  # long ago: every document repaired
    seeded(path, BRAIN, repair_history.RECENT, 0)  # lately: none
    history = repair_history.read(path, BRAIN)
    assert (history.documents, history.repaired, history.share) == (repair_history.RECENT, 0, 0.0)


def test_with_repairs_turned_off_none_are_expected(small_corpus, brain_server, tmp_path, monkeypatch):
    facts = tmp_path / "facts.sqlite"
    monkeypatch.setenv("COLLATE_FACT_STORE", str(facts))
    monkeypatch.setenv("COLLATE_REPAIR_FACTS", "false")
    seeded(facts, BRAIN, 20, 20)
    quote = quote_run(small_corpus, tmp_path)
    assert quote.stages["extractor"].calls == quote.documents and quote.expected_repairs == 0
