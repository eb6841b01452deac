"""Issue 33 item 11: a dataset run leaves DSPy's trace as it found it, and the Analyst's waves keep to
DSPy's cap on it.

Before: DSPy's default trace is one list for the process, and the Analyst's waves (programs.batch) add
each question's predictor calls to it, inputs (plans, passages) and predictions included, past DSPy's
own cap: nothing a run reads, grown by every question (3 entries a demo question, bench/run_memory.py).
"""

from __future__ import annotations

import dspy

from evaluate.dataset import load_dataset, strip_gold
from evaluate.runs.answering import answer_all
from fakes.engine import brain_lm
from programs.analyst import build_program
from programs.batch import answer_batch
from programs.facts.store import FactStore
from programs.lm.settings import Settings
from retrievers.indexing.store import IndexStore


def _program(index, tmp_path):
    return build_program(
        Settings(lm="fake/brain", concurrency=2),
        IndexStore.open(index),
        facts=FactStore(tmp_path / "facts.sqlite"),
    )


def test_a_dataset_run_adds_nothing_to_dspy_s_trace(small_corpus, tmp_path):
    corpus, index = small_corpus
    items = [strip_gold(item) for item in load_dataset(corpus / "dataset.json")[:4]]
    program = _program(index, tmp_path)
    with dspy.context(lm=brain_lm(), adapter=dspy.ChatAdapter(use_json_adapter_fallback=False), trace=[]):
        answers = answer_all(program, items, concurrency=2, progress=False)
        assert dspy.settings.trace == []  # before: an entry for every predictor call of the run
    assert [a.error for a in answers.answered] == [None] * 4 and all(a.answer for a in answers.answered)


def test_the_waves_keep_dspy_s_trace_within_its_cap(small_corpus, tmp_path):
    """answer_batch called directly (bench/waves.py, a script) under a trace: its waves add their entries
    in question order, never past settings.max_trace_size, as DSPy's own Predict keeps it."""
    corpus, index = small_corpus
    items = load_dataset(corpus / "dataset.json")[:4]
    trace: list = []
    with dspy.context(
        lm=brain_lm(),
        adapter=dspy.ChatAdapter(use_json_adapter_fallback=False),
        trace=trace,
        max_trace_size=5,
    ):
        batch = answer_batch(
            _program(index, tmp_path), [(item.question, list(item.doc_ids)) for item in items], wave_size=2
        )
    assert all(not isinstance(r, Exception) and r.answer for r in batch.results)
    assert len(trace) == 5  # before: every predictor call of the 4 questions
