"""Rules first, the LM only for the rest, in batches; invalid -> re-asked once -> null with a reason."""

from __future__ import annotations

from programs.stages.normalizer import Normalizer, RecordSchema
from signatures.types import Document, Fact, FieldSpec

FIELDS = [
    FieldSpec(name="ratio", description="资本充足率", type="percent", unit="percent"),
    FieldSpec(name="auditor", description="会计师事务所", type="string", unit="none"),
    FieldSpec(name="big4", description="是否四大", type="boolean", unit="none"),
]
DOCS = {
    d: Document(id=d, symbol=s, year=2022, doctype="A股年报") for d, s in (("d1", "600001"), ("d2", "600002"))
}


def facts(ratio_d2: str) -> list[Fact]:
    return [
        Fact(doc_id="d1", field="ratio", description="资本充足率", value="15.44%"),
        Fact(doc_id="d1", field="auditor", description="会计师事务所", value="普华永道"),
        Fact(doc_id="d1", field="big4", description="是否四大", value="是"),
        Fact(doc_id="d2", field="ratio", description="资本充足率", value=ratio_d2),
        Fact(doc_id="d2", field="big4", description="是否四大", disclosed=False),
    ]


def normalizer(settings, store) -> Normalizer:
    return Normalizer(batch_size=1)


def test_rules_handle_parseable_values_without_an_lm_call(settings, store, use_lm):
    lm = use_lm()
    out = normalizer(settings, store)(fields=FIELDS, facts=facts("12.1%"), documents=DOCS)
    assert lm.history == []
    assert out.records == [
        {
            "id": "d1",
            "symbol": "600001",
            "year": 2022,
            "doctype": "A股年报",
            "ratio": 15.44,
            "auditor": "普华永道",
            "big4": True,
        },
        {
            "id": "d2",
            "symbol": "600002",
            "year": 2022,
            "doctype": "A股年报",
            "ratio": 12.1,
            "auditor": None,
            "big4": None,
        },
    ]


def test_lm_normalizes_what_rules_cannot(settings, store, use_lm):
    lm = use_lm(**{"[[ ## items ## ]]": {"values": [{"key": "d2:ratio", "value": 13.5}]}})
    out = normalizer(settings, store)(
        fields=FIELDS, facts=facts("thirteen and a half percent"), documents=DOCS
    )
    assert len(lm.history) == 1 and "thirteen and a half percent" in lm.history[0]["messages"][-1]["content"]
    assert out.records[1]["ratio"] == 13.5 and out.notes["d2:ratio"] == "normalized by LM"


def test_invalid_lm_value_is_reasked_once_then_null_with_reason(settings, store, use_lm):
    lm = use_lm(**{"[[ ## items ## ]]": {"values": [{"key": "d2:ratio", "value": "n/a-ish"}]}})
    out = normalizer(settings, store)(fields=FIELDS, facts=facts("thirteen-ish"), documents=DOCS)
    assert len(lm.history) == 2  # asked, re-asked, given up
    assert out.records[1]["ratio"] is None and out.nulled == ["d2:ratio"]
    assert "invalid percent" in out.notes["d2:ratio"]


def test_values_are_batched(settings, store, use_lm):
    lm = use_lm(
        **{
            "[[ ## items ## ]]": {
                "values": [{"key": "d1:ratio", "value": 1.0}, {"key": "d2:ratio", "value": 2.0}]
            }
        }
    )
    fs = facts("about two")
    fs[0] = fs[0].model_copy(update={"value": "about one"})
    out = Normalizer(batch_size=10)(fields=FIELDS, facts=fs, documents=DOCS)
    assert len(lm.history) == 1 and [r["ratio"] for r in out.records] == [1.0, 2.0]


def test_identity_comes_from_the_catalog_not_the_facts():
    schema = RecordSchema(FIELDS)
    row = schema.record(DOCS["d1"], {"ratio": 1.0, "symbol": "HACKED"})
    assert row["symbol"] == "600001" and row["id"] == "d1"
    assert "ratio (percent, percent): 资本充足率" in schema.columns()


def test_lm_replies_written_as_text_go_through_the_rules(settings, store, use_lm):
    use_lm(**{"[[ ## items ## ]]": {"values": [{"key": "d1:big4", "value": "是"}]}})
    fs = facts("12%")
    fs[2] = fs[2].model_copy(update={"value": "由普华永道审计"})  # the rules cannot read this as yes/no
    out = normalizer(settings, store)(fields=FIELDS, facts=fs, documents=DOCS)
    assert out.records[0]["big4"] is True and out.notes["d1:big4"] == "normalized by LM"


class DownNormalizer:
    """Stands in for the normalize predictor: every call raises, sync or async; counts the calls."""

    def __init__(self):
        self.calls = 0

    def __call__(self, **inputs):
        self.calls += 1
        raise RuntimeError("normalizer LM down")


def test_a_failed_normalizer_call_is_retried_once_then_null_with_the_reason(settings, store):
    program = normalizer(settings, store)
    program.normalize = down = DownNormalizer()
    out = program(fields=FIELDS, facts=facts("thirteen-ish"), documents=DOCS)
    assert down.calls == 2  # asked, re-asked, given up
    assert out.records[1]["ratio"] is None and out.nulled == ["d2:ratio"]
    assert out.notes["d2:ratio"] == "normalizer call failed: RuntimeError: normalizer LM down"
    assert out.records[0]["ratio"] == 15.44  # the rest of the run is untouched
