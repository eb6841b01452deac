"""Issue 33 item 11: a dataset run plans and answers in fixed waves of questions, with the same results.

Before: every question was planned before the first answer (7 min on 10,000 questions) and every plan
and passage was held at once. Now answers start after one wave; the fact store is shared across waves
and every wave's planner sees the fields the store held when the run began, so the answers are those
of one wave over the whole run (bench/waves.py measures first-answer time and memory)."""

from __future__ import annotations

import dspy

from evaluate.dataset import load_dataset
from fakes.engine import brain_lm
from programs.analyst import build_program
from programs.batch import answer_batch
from programs.facts.store import FactStore
from programs.lm.settings import Settings
from retrievers.indexing.store import IndexStore
from signatures.types import Fact


def _run(small_corpus, tmp_path, wave_size: int | None, events: list | None = None, twice: bool = False):
    corpus, index = small_corpus
    items = load_dataset(corpus / "dataset.json")[:8]
    if twice:  # the same four questions asked again: a later wave needs what the first extracted
        items = items[:4] * 2
    store = IndexStore.open(index)
    facts = FactStore(tmp_path / f"facts-{wave_size}.sqlite")
    program = build_program(Settings(lm="fake/brain", concurrency=4), store, facts=facts)
    planner = program.planner.forward

    def planning(*args, **kwargs):
        if events is not None:
            events.append("plan")
        return planner(*args, **kwargs)

    program.planner.forward = planning
    with dspy.context(lm=brain_lm(), adapter=dspy.ChatAdapter(use_json_adapter_fallback=False)):
        batch = answer_batch(
            program,
            [(item.question, list(item.doc_ids) or None) for item in items],
            concurrency=2,
            on_answered=(lambda i, result, usage: events.append(f"answer {i}"))
            if events is not None
            else None,
            wave_size=wave_size,
        )
    return batch


def _outcome(batch) -> list:
    def fact(f: Fact) -> tuple:
        return (f.doc_id, f.field, f.value, f.unit, f.quote, f.page, f.verdict)

    return [
        (r.answer, r.records, sorted(fact(f) for f in r.facts), r.error)
        if not isinstance(r, Exception)
        else repr(r)
        for r in batch.results
    ]


def test_waves_give_the_answers_of_one_wave(small_corpus, tmp_path):
    """A later wave that needs what an earlier one read gets it from the shared fact store, planned as the
    first wave was: the same answers, records and facts as one wave over the whole run."""
    whole = _outcome(_run(small_corpus, tmp_path, None, twice=True))
    assert any(answer for answer, *_ in whole) and whole[:4] == whole[4:]
    assert _outcome(_run(small_corpus, tmp_path, 4, twice=True)) == whole


def test_waves_are_deterministic_at_any_concurrency(small_corpus, tmp_path):
    """(A document two waves need for different fields is asked once per wave: its reply may quote
    another line than one call for both fields would, so the wave size is a fixed setting, not timing.)"""
    first = _outcome(_run(small_corpus, tmp_path / "a", 3))
    assert _outcome(_run(small_corpus, tmp_path / "b", 3)) == first


def test_the_first_answers_come_before_the_later_waves_are_planned(small_corpus, tmp_path):
    events: list[str] = []
    _run(small_corpus, tmp_path, 3, events)
    first_answer = events.index("answer 0")
    assert events[:first_answer].count("plan") == 3  # before: all 8 plans came first
    assert events.count("plan") == 8 and sum(e.startswith("answer") for e in events) == 8


def test_a_later_wave_s_planner_is_shown_the_fields_known_when_the_run_began(tmp_path):
    facts = FactStore(tmp_path / "facts.sqlite")
    old = Fact(doc_id="d1", field="revenue", description="营业收入", field_type="number", field_unit="CNY")
    facts.put_many([old])
    with facts.frozen_fields():
        new = old.model_copy(update={"field": "net_profit", "description": "净利润"})
        facts.put_many([new])  # what a first wave extracts
        assert [f.name for f in facts.known_fields(["d1"])] == ["revenue"]
    assert sorted(f.name for f in facts.known_fields(["d1"])) == ["net_profit", "revenue"]


def test_the_wave_size_is_a_checked_setting():
    import pytest

    assert Settings.from_env({"lm": "x/y"}, environ={"COLLATE_WAVE_SIZE": "50"}).wave_size == 50
    with pytest.raises(ValueError, match="wave_size"):
        Settings.from_env({"lm": "x/y"}, environ={"COLLATE_WAVE_SIZE": "0"})


def _live_after_two_waves(small_corpus, tmp_path, keep_results: bool | None) -> tuple[int, int]:
    """(results of the first two waves of 2 still alive when the 7th question is answered, results made).
    keep_results None: the dataset run's own path (evaluate.runs.answering.answer_together)."""
    import gc
    import weakref

    from evaluate.dataset import strip_gold
    from evaluate.runs.answering import answer_together
    from evaluate.runs.outcome import Outcome

    corpus, index = small_corpus
    items = load_dataset(corpus / "dataset.json")[:8]
    program = build_program(
        Settings(lm="fake/brain", concurrency=2, wave_size=2),
        IndexStore.open(index),
        facts=FactStore(tmp_path / "facts.sqlite"),
    )
    made: list[weakref.ref] = []
    live: list[int] = []
    conclude = program.conclude

    def concluding(*args, **kwargs):
        result = conclude(*args, **kwargs)
        made.append(weakref.ref(result))
        return result

    def answered(*_):
        if len(made) == 7 and not live:  # in the 4th wave: the 1st and 2nd are long finished
            gc.collect()
            live.append(sum(ref() is not None for ref in made[:4]))

    program.conclude = concluding
    with dspy.context(lm=brain_lm(), adapter=dspy.ChatAdapter(use_json_adapter_fallback=False)):
        if keep_results is None:

            def keep(out):  # the run's own keeping: its Outcome (evaluate.runs.outcome)
                answered()
                return Outcome.of(out)

            answers = answer_together(program, [strip_gold(i) for i in items], 1, False, keep=keep)
            assert len(answers.answered) == 8 and any(a.answer for a in answers.answered)
        else:
            questions = [(item.question, list(item.doc_ids) or None) for item in items]
            answer_batch(program, questions, 1, on_answered=answered, keep_results=keep_results)
    return live[0], len(made)


def test_a_finished_wave_s_results_leave_memory(small_corpus, tmp_path):
    """Issue 33 item 11: a dataset run kept every question's ProgramResult (trace, passages, facts) until
    the run ended; it keeps each one's JSON as it comes, so a finished wave's results are let go."""
    assert _live_after_two_waves(small_corpus, tmp_path / "kept", True) == (4, 8)  # asked to keep them
    assert _live_after_two_waves(small_corpus, tmp_path / "batch", False) == (0, 8)
    assert _live_after_two_waves(small_corpus, tmp_path / "run", None) == (0, 8)  # before: (4, 8)
