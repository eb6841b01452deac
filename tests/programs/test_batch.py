"""Many questions as one run (programs.batch): plan all, extract each document once, finish each."""

from __future__ import annotations

import copy

from programs.batch import answer_batch
from programs.facts.field_match import FieldMatcher
from programs.facts.store import FactStore

CAR = {"name": "capital_adequacy_ratio", "description": "资本充足率", "type": "percent", "unit": "percent"}
REVENUE = {"name": "revenue", "description": "营业收入", "type": "number", "unit": "CNY"}
ONLY_CAR, BOTH = "只问资本充足率？", "资本充足率和营业收入？"


def plan_of(*fields: dict) -> dict:
    return {
        "reasoning": "x",
        "plan": {
            "subqueries": [
                {
                    "query": "、".join(f["description"] for f in fields) + "是多少？",
                    "restriction": {"doctypes": ["A股年报"], "years": [2023]},
                    "fields": list(fields),
                }
            ]
        },
    }


def planner_key(question: str) -> str:
    """A DummyLM key only the planner's call for this question holds (its question, then its catalog)."""
    return f"{question}\n\n[[ ## catalog ## ]]"


def extraction_calls(lm) -> list[str]:
    """The document of each extraction call, in the order they were made."""
    calls = [h["messages"][-1]["content"] for h in lm.history]
    return [c.split("(id ")[1].split(")")[0] for c in calls if "[[ ## passages ## ]]" in c]


def test_a_document_two_questions_need_is_asked_once_for_both(make_program, use_lm):
    lm = use_lm(**{planner_key(ONLY_CAR): plan_of(CAR), planner_key(BOTH): plan_of(CAR, REVENUE)})
    program = make_program()
    batch = answer_batch(program, [(ONLY_CAR, None), (BOTH, None)], concurrency=2)
    assert sorted(extraction_calls(lm)) == ["doc-a", "doc-b", "doc-c"]  # not 6: one call per document
    only_car, both = batch.results
    assert {(f.doc_id, f.field) for f in only_car.facts} == {
        (d, "capital_adequacy_ratio") for d in "abc" and ("doc-a", "doc-b", "doc-c")
    }
    assert [r["id"] for r in both.records] == ["doc-a", "doc-b", "doc-c"]
    assert (
        both.records[0]["revenue"] == 32390060000.0 and only_car.records[0]["capital_adequacy_ratio"] == 15.44
    )
    assert only_car.error is None and both.error is None and batch.rounds == 1


def test_the_batch_gives_what_each_question_gets_alone(make_program, use_lm):
    replies = {planner_key(ONLY_CAR): plan_of(CAR), planner_key(BOTH): plan_of(CAR, REVENUE)}
    use_lm(**replies)
    batch = answer_batch(make_program(), [(BOTH, None), (ONLY_CAR, None)], concurrency=4)
    use_lm(**replies)
    alone = [make_program()(question=q) for q in (BOTH, ONLY_CAR)]  # fresh fact stores: nothing reused
    for together, single in zip(batch.results, alone, strict=True):
        assert together.answer == single.answer and together.records == single.records
        assert [f.model_dump() for f in together.facts] == [f.model_dump() for f in single.facts]


def test_a_field_asked_with_another_unit_is_a_second_call_never_a_merge(make_program, use_lm):
    in_usd = {**REVENUE, "unit": "USD"}
    lm = use_lm(**{planner_key(ONLY_CAR): plan_of(REVENUE), planner_key(BOTH): plan_of(in_usd)})
    batch = answer_batch(make_program(), [(ONLY_CAR, None), (BOTH, None)], concurrency=2)
    assert batch.rounds == 2 and sorted(extraction_calls(lm)) == [
        "doc-a",
        "doc-a",
        "doc-b",
        "doc-b",
        "doc-c",
        "doc-c",
    ]
    cny, usd = batch.results
    assert {f.field_unit for f in cny.facts} == {"CNY"} and {f.field_unit for f in usd.facts} == {"USD"}
    assert cny.trace["extract"]["merges"] == [] and usd.trace["extract"]["merges"] == []


def test_a_reworded_field_is_served_by_the_same_call_and_the_merge_is_reported(make_program, use_lm):
    reworded = {**CAR, "description": "期末资本充足率（%）"}
    lm = use_lm(**{planner_key(ONLY_CAR): plan_of(CAR), planner_key(BOTH): plan_of(reworded)})
    program = make_program(fact_reuse=False)  # no fact store: the one call alone must serve both wordings
    program.extractor.matcher = FieldMatcher()
    batch = answer_batch(program, [(ONLY_CAR, None), (BOTH, None)], concurrency=2)
    assert sorted(extraction_calls(lm)) == ["doc-a", "doc-b", "doc-c"] and batch.rounds == 1
    merges = batch.results[1].trace["extract"]["merges"]
    assert [(m["doc_id"], m["asked"], m["stored"]) for m in merges] == [
        (d, "期末资本充足率（%）", "资本充足率") for d in ("doc-a", "doc-b", "doc-c")
    ]
    assert {f.description for f in batch.results[1].facts} == {"期末资本充足率（%）"}


def test_facts_an_earlier_run_stored_are_reused_and_the_plan_sees_the_store_as_the_run_began(
    make_program, use_lm
):
    facts = FactStore(None)
    replies = {planner_key(ONLY_CAR): plan_of(CAR), planner_key(BOTH): plan_of(CAR, REVENUE)}
    use_lm(**replies)
    answer_batch(make_program(facts), [(ONLY_CAR, None)], concurrency=2)
    lm = use_lm(**replies)
    answer_batch(make_program(facts), [(BOTH, None), (ONLY_CAR, None)], concurrency=2)
    plans = [
        h["messages"][-1]["content"]
        for h in lm.history
        if "[[ ## catalog ## ]]" in h["messages"][-1]["content"]
    ]
    assert len(plans) == 2 and all(
        "capital_adequacy_ratio" in p.split("[[ ## known_fields ## ]]")[1] for p in plans
    )
    assert all(
        "revenue" not in p.split("[[ ## known_fields ## ]]")[1] for p in plans
    )  # stored by this run: unseen
    extraction = [
        h["messages"][-1]["content"]
        for h in lm.history
        if "[[ ## passages ## ]]" in h["messages"][-1]["content"]
    ]
    assert len(extraction) == 3 and all(
        "capital_adequacy_ratio" not in c.split("[[ ## field_specs ## ]]")[1].split("[[ ## passages")[0]
        for c in extraction
    )


def test_a_question_whose_planning_failed_is_failed_with_its_reason_and_the_others_answered(
    make_program, use_lm
):
    use_lm(
        **{
            planner_key(ONLY_CAR): {"reasoning": "x", "plan": "not a plan"},
            planner_key(BOTH): plan_of(CAR, REVENUE),
        }
    )
    batch = answer_batch(make_program(), [(ONLY_CAR, None), (BOTH, None), ("q", ["nope"])], concurrency=3)
    failed, answered, unknown = batch.results
    assert failed.error.startswith("planning failed") and answered.error is None and answered.records
    assert isinstance(unknown, ValueError) and "nope" in str(
        unknown
    )  # in question order, whatever finished first


def test_a_question_none_of_whose_documents_could_be_read_is_failed(make_program, use_lm):
    broken = {"values": "not a list of values"}
    use_lm(**{"(id doc-a)": broken, "(id doc-b)": broken, "(id doc-c)": broken})
    pred = make_program()(question="哪家公司资本充足率最高？")
    assert pred.error.startswith("no document could be read (3 failed")
    use_lm(**{"(id doc-a)": broken})
    assert make_program()(question="哪家公司资本充足率最高？").error is None  # two of three read: an answer


def test_the_batch_leaves_the_program_unchanged(make_program, use_lm):
    use_lm()
    program = make_program()
    before = copy.deepcopy(program.dump_state())
    answer_batch(program, [("哪家公司资本充足率最高？", None)], concurrency=1)
    assert program.dump_state() == before
