"""A program compiled before the programs/ restructure (issue 9) still loads and answers the same.

tests/programs/data/compiled_before_restructure.json was saved by the flat-layout code (commit before
programs/ moved into rooms), with a tuned extractor instruction and planner/answerer demos.
"""

from __future__ import annotations

import json
from pathlib import Path

from programs.analyst import build_program

SAVED = Path(__file__).with_name("data") / "compiled_before_restructure.json"
# What the flat-layout program answered with the same DummyLM replies (recorded when the file was saved).
EXPECTED = {
    "answer": "资本充足率最高的是600001。",
    "result": '{"top": "600001"}',
    "records": [
        {
            "id": "doc-a",
            "symbol": "600001",
            "year": 2023,
            "doctype": "A股年报",
            "capital_adequacy_ratio": 15.44,
            "revenue": 32390060000.0,
        },
        {
            "id": "doc-b",
            "symbol": "600002",
            "year": 2023,
            "doctype": "A股年报",
            "capital_adequacy_ratio": 12.1,
            "revenue": 150000000.0,
        },
        {
            "id": "doc-c",
            "symbol": "600003",
            "year": 2023,
            "doctype": "A股年报",
            "capital_adequacy_ratio": 13.0,
            "revenue": -1234.0,
        },
    ],
}


def test_a_program_saved_before_the_restructure_loads_every_predictor(settings, store):
    program = build_program(settings, store)
    program.load(str(SAVED))
    saved = json.loads(SAVED.read_text(encoding="utf-8"))
    assert program.extractor.extract.signature.instructions.startswith(
        "Read the passages and answer every field"
    )
    assert program.planner.plan.demos[0]["question"] == "哪家银行资本充足率最高？"
    assert program.answerer.answer.demos[0]["answer"] == "600001"
    state = program.dump_state()
    assert {k: v["signature"]["instructions"] for k, v in state.items() if "signature" in v} == {
        k: v["signature"]["instructions"] for k, v in saved.items() if "signature" in v
    }


def test_a_program_saved_before_the_restructure_answers_the_same(settings, store, use_lm):
    use_lm()
    program = build_program(settings, store)
    program.load(str(SAVED))
    pred = program(question="哪家公司资本充足率最高？")
    assert {"answer": pred.answer, "result": pred.result, "records": pred.records} == EXPECTED
