"""Issue 33 item 1: a fact belongs to the content it was read from. A filing replaced under the same id
and rebuilt (another content hash in the index's catalog) is read again: its old facts, whose values
and quotes are on none of its current pages, are never reused."""

from __future__ import annotations

import sqlite3

from programs.facts.store import FactStore, Reuse
from signatures.types import Fact, FieldSpec

CAR = FieldSpec(name="capital_adequacy_ratio", description="资本充足率", type="percent", unit="percent")


def extraction_calls(lm) -> list[str]:
    return [
        d
        for e in lm.history
        for d in ("doc-a", "doc-b", "doc-c")
        if f"(id {d})" in e["messages"][-1]["content"]
    ]


def test_a_rebuilt_document_is_read_again_and_its_old_facts_are_not_used(
    make_program, use_lm, reply_for, store, tmp_path
):
    for doc in store.catalog.documents():
        store.catalog.update(doc.id, content_hash=f"old-{doc.id}")
    facts = FactStore(tmp_path / "facts.sqlite")
    use_lm()
    first = make_program(facts=facts)(question="q")
    assert {r["id"]: r["capital_adequacy_ratio"] for r in first.records}["doc-a"] == 15.44

    # doc-a's file is replaced and the index rebuilt: its catalog row gets the new file's hash
    store.catalog.update("doc-a", content_hash="new-doc-a")
    lm = use_lm(**{"(id doc-a)": reply_for.extraction("9.99%", "1,000 万元")})
    second = make_program(facts=facts)(question="q")
    assert extraction_calls(lm) == ["doc-a"]  # before the fix: [] (every value "from stored facts")
    assert {r["id"]: r["capital_adequacy_ratio"] for r in second.records}["doc-a"] == 9.99
    stored = facts.get("doc-a", "capital_adequacy_ratio", "资本充足率", "new-doc-a")
    assert stored is not None and stored.value == "9.99%" and stored.content_hash == "new-doc-a"
    assert facts.get("doc-a", "capital_adequacy_ratio", "资本充足率", "old-doc-a").value == "15.44%"


def test_a_fact_is_found_only_under_the_content_it_was_read_from(tmp_path):
    facts = FactStore(tmp_path / "facts.sqlite")
    facts.put_many(
        [
            Fact(
                doc_id="doc-a",
                field=CAR.name,
                description=CAR.description,
                value="15.44%",
                field_type="percent",
                field_unit="percent",
                content_hash="h1",
            )
        ]
    )
    assert facts.lookup("doc-a", [CAR], Reuse(any_model=True), "h1")[0][CAR.name].value == "15.44%"
    assert facts.lookup("doc-a", [CAR], Reuse(any_model=True), "h2") == ({}, [])
    assert facts.lookup("doc-a", [CAR], Reuse(any_model=True)) == ({}, [])  # no hash is not "any hash"
    reworded = CAR.model_copy(update={"description": "期末资本充足率（%）"})
    from programs.facts.field_match import FieldMatcher

    matched = Reuse(any_model=True, matcher=FieldMatcher())
    assert facts.lookup("doc-a", [reworded], matched, "h1")[0]  # reuse by meaning, same content
    assert facts.lookup("doc-a", [reworded], matched, "h2") == ({}, [])  # never across contents


def test_a_store_written_before_content_hashes_is_migrated_and_its_facts_serve_no_hashed_document(
    tmp_path,
):
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as conn:  # the table of the release before issue 33
        conn.execute(
            "CREATE TABLE facts (doc_id TEXT NOT NULL, field TEXT NOT NULL, description TEXT NOT NULL, "
            "disclosed INTEGER NOT NULL, value TEXT, unit TEXT, quote TEXT, page INTEGER, model TEXT NOT NULL "
            "DEFAULT '', prompt_version TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL DEFAULT "
            "(datetime('now')), field_type TEXT NOT NULL DEFAULT '', field_unit TEXT NOT NULL DEFAULT '', "
            "verdict TEXT NOT NULL DEFAULT '', verdict_reason TEXT NOT NULL DEFAULT '', "
            "PRIMARY KEY (doc_id, field, description))"
        )
        conn.execute(
            "INSERT INTO facts (doc_id, field, description, disclosed, value, field_type, field_unit) VALUES "
            "('doc-a', 'capital_adequacy_ratio', '资本充足率', 1, '15.44%', 'percent', 'percent')"
        )
    store = FactStore(path)
    assert len(store) == 1  # nothing lost
    assert store.lookup("doc-a", [CAR], Reuse(any_model=True), "h1") == ({}, [])
    assert store.lookup("doc-a", [CAR], Reuse(any_model=True))[0][CAR.name].value == "15.44%"
    # the same (document, field, description) read from two contents: both kept, each under its own
    store.put_many(
        [Fact(doc_id="doc-a", field=CAR.name, description=CAR.description, value="9%", content_hash="h1")]
    )
    assert store.get("doc-a", CAR.name, CAR.description, "h1").value == "9%"
    assert store.get("doc-a", CAR.name, CAR.description).value == "15.44%"
    store.close()
    assert FactStore(path).get("doc-a", CAR.name, CAR.description, "h1").value == "9%"  # reopens as is
