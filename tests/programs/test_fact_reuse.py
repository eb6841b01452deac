"""Issue 14: facts are reused across questions that word a field differently, never across models or
extractor prompts unless asked, and never for a field of another unit or meaning."""

from __future__ import annotations

import sqlite3

from programs.facts.field_match import FieldMatcher
from programs.facts.store import FactStore, Reuse
from signatures.types import Fact, FieldSpec

CAR = FieldSpec(name="capital_adequacy_ratio", description="资本充足率", type="percent", unit="percent")


def plan_reply(reply_for, description: str, unit: str = "percent") -> dict:
    plan = {
        "subqueries": [
            {
                **reply_for.plan["subqueries"][0],
                "fields": [
                    {
                        "name": "capital_adequacy_ratio",
                        "description": description,
                        "type": "percent",
                        "unit": unit,
                    }
                ],
            }
        ]
    }
    return {"[[ ## catalog ## ]]": {"reasoning": "reworded", "plan": plan}}


def extraction_calls(lm) -> list[str]:
    return [
        d
        for e in lm.history
        for d in ("doc-a", "doc-b", "doc-c")
        if f"(id {d})" in e["messages"][-1]["content"]
    ]


def test_a_reworded_description_reuses_the_fact_and_the_merge_is_in_the_trace(
    make_program, use_lm, reply_for, tmp_path
):
    facts = FactStore(tmp_path / "facts.sqlite")
    use_lm(**plan_reply(reply_for, "资本充足率"))
    first = make_program(facts=facts)(question="q")
    lm = use_lm(**plan_reply(reply_for, "期末资本充足率（%）"))
    second = make_program(facts=facts)(question="q")
    assert extraction_calls(lm) == []  # every document's value came from the store
    assert [r["capital_adequacy_ratio"] for r in second.records] == [
        r["capital_adequacy_ratio"] for r in first.records
    ]
    merges = second.trace["extract"]["merges"]
    assert {m["doc_id"] for m in merges} == {"doc-a", "doc-b", "doc-c"}
    assert (
        merges[0]["asked"] == "期末资本充足率（%）"
        and merges[0]["stored"] == "资本充足率"
        and "core" in merges[0]["how"]
    )


def test_a_different_unit_or_meaning_under_the_same_name_is_asked_again(
    make_program, use_lm, reply_for, tmp_path
):
    facts = FactStore(tmp_path / "facts.sqlite")
    use_lm(**plan_reply(reply_for, "资本充足率"))
    make_program(facts=facts)(question="q")
    lm = use_lm(**plan_reply(reply_for, "资本充足率", unit="ratio"))
    make_program(facts=facts)(question="q")
    assert sorted(extraction_calls(lm)) == ["doc-a", "doc-b", "doc-c"]  # same words, another unit
    lm = use_lm(**plan_reply(reply_for, "核心一级资本充足率"))
    pred = make_program(facts=facts)(question="q")
    assert sorted(extraction_calls(lm)) == ["doc-a", "doc-b", "doc-c"]  # a sibling metric, not a rewording
    assert pred.trace["extract"]["merges"] == []


def test_fuzzy_reuse_can_be_turned_off(make_program, use_lm, reply_for, tmp_path):
    facts = FactStore(tmp_path / "facts.sqlite")
    use_lm(**plan_reply(reply_for, "资本充足率"))
    make_program(facts=facts)(question="q")
    lm = use_lm(**plan_reply(reply_for, "期末资本充足率（%）"))
    make_program(facts=facts, fuzzy_reuse=False)(question="q")
    assert len(extraction_calls(lm)) == 3


def test_facts_of_another_extractor_prompt_are_not_reused_unless_asked(make_program, use_lm, tmp_path):
    facts = FactStore(tmp_path / "facts.sqlite")
    use_lm()
    make_program(facts=facts)(question="q")
    tuned = make_program(facts=facts)
    tuned.extractor.extract.signature = tuned.extractor.extract.signature.with_instructions("Quote exactly.")
    lm = use_lm()
    tuned(question="q")
    assert len(extraction_calls(lm)) == 3  # an optimized extractor is not scored on the old one's facts
    stored = facts.get("doc-a", "capital_adequacy_ratio", "资本充足率")
    assert stored.prompt_version and stored.model  # provenance is kept with every fact
    anyone = make_program(facts=facts, reuse_facts_from_any_model=True)
    lm = use_lm()
    anyone(question="q")
    assert extraction_calls(lm) == []


def test_the_planner_is_shown_the_fields_the_store_already_holds(make_program, use_lm, tmp_path):
    facts = FactStore(tmp_path / "facts.sqlite")
    use_lm()
    make_program(facts=facts)(question="q")
    lm = use_lm()
    make_program(facts=facts)(question="q")
    plan_prompt = lm.history[0]["messages"][-1]["content"]
    assert (
        "known_fields" in plan_prompt
        and "capital_adequacy_ratio" in plan_prompt
        and "营业收入" in plan_prompt
    )
    assert [f.name for f in facts.known_fields(["doc-a"])] == ["capital_adequacy_ratio", "revenue"]
    assert facts.known_fields(["doc-esg"]) == []


def test_a_fact_store_written_before_reuse_by_meaning_opens_and_is_used(tmp_path):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:  # the first release's table, without field_type / field_unit
        conn.execute(
            "CREATE TABLE facts (doc_id TEXT NOT NULL, field TEXT NOT NULL, description TEXT NOT NULL, "
            "disclosed INTEGER NOT NULL, value TEXT, unit TEXT, quote TEXT, page INTEGER, model TEXT NOT NULL "
            "DEFAULT '', prompt_version TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL DEFAULT "
            "(datetime('now')), PRIMARY KEY (doc_id, field, description))"
        )
        conn.execute(
            "INSERT INTO facts (doc_id, field, description, disclosed, value) VALUES "
            "('doc-a', 'capital_adequacy_ratio', '资本充足率', 1, '15.44%')"
        )
    store = FactStore(path)
    known, merges = store.lookup("doc-a", [CAR], Reuse(any_model=True))
    assert known["capital_adequacy_ratio"].value == "15.44%" and merges == []
    store.put_many([Fact(doc_id="doc-b", field="x", description="x", field_type="number", field_unit="CNY")])
    assert store.get("doc-b", "x", "x").field_unit == "CNY"


def test_the_matcher_decides_by_core_then_minilm_for_english(monkeypatch):
    class Fixed:  # stands in for MiniLM: a known cosine
        def encode(self, texts):
            import numpy as np

            return np.array([[1.0, 0.0], [0.95, (1 - 0.95**2) ** 0.5]])

    matcher = FieldMatcher(embedder=Fixed())
    assert matcher.same_meaning("资本充足率。", "资本充足率（%），年末")[0]
    assert matcher.same_meaning("total assets.", "Total assets at year end")[0]
    assert not matcher.same_meaning("股权登记日", "除权除息日")[0]  # MiniLM alone scores these 1.000
    same, how = matcher.same_meaning("revenue", "total revenue")
    assert same and "0.950" in how
    assert not FieldMatcher(embedder=Fixed(), threshold=0.99).same_meaning("revenue", "total revenue")[0]
