"""What optimizers rely on: pinned predictor names, shared big objects, save/load round trip."""

from __future__ import annotations

import json

import dspy

from programs.analyst import build_program
from programs.facts.store import FactStore

PINNED = [
    "planner.plan",
    "extractor.extract",
    "normalizer.normalize",
    "code_writer.write_code",
    "code_writer.fix_code",
    "answerer.answer",
]


def test_predictor_names_are_pinned(settings, store):
    assert [name for name, _ in build_program(settings, store).named_predictors()] == PINNED


def test_deepcopy_shares_the_store_catalog_facts_and_sandboxes(settings, store):
    program = build_program(settings, store, facts=FactStore(None))
    copy = program.deepcopy()
    assert copy is not program
    assert copy.extractor.store is store and copy.extractor.facts is program.extractor.facts
    assert copy.planner.catalog is store.catalog
    assert copy.code_writer.sandboxes is program.code_writer.sandboxes
    assert copy.extractor.extract is not program.extractor.extract  # predictors are copied


def test_save_load_round_trip(settings, store, tmp_path):
    program = build_program(settings, store)
    program.extractor.extract.signature = program.extractor.extract.signature.with_instructions(
        "Read carefully."
    )
    program.planner.plan.demos = [
        dspy.Example(question="q", catalog="c", feedback="", reasoning="r", plan={"subqueries": []})
    ]
    path = tmp_path / "compiled.json"
    program.save(str(path))
    assert set(json.loads(path.read_text())) >= set(PINNED)
    fresh = build_program(settings, store)
    fresh.load(str(path))
    assert fresh.extractor.extract.signature.instructions == "Read carefully."
    assert len(fresh.planner.plan.demos) == 1 and fresh.planner.plan.demos[0]["question"] == "q"
    assert fresh.dump_state() == program.dump_state()
