"""The metrics optimizers tune against: right answers score high, wrong ones low, feedback names the cells."""

from __future__ import annotations

import dspy

from evaluate.dataset import load_dataset
from evaluate.matching.metrics import final_match
from optimize.objective import CellMetric, ProgramMetric, extractor_examples, infer_spec, program_examples
from signatures.types import Fact


def _decided_item(small_corpus):
    items = load_dataset(small_corpus[0] / "dataset.json")
    for item in items:
        if final_match(item.question, item.final_answer, item.final_answer, item.symbols).correct:
            if any(v is not None for row in item.metadata for v in row.values.values()):
                return items, item
    raise AssertionError("no synthetic item whose gold answer the matcher decides against itself")


def _gold_records(item) -> list[dict]:
    return [
        {"id": row.id, **{k.removeprefix("value_"): v for k, v in row.values.items()}}
        for row in item.metadata
    ]


def test_program_metric_rewards_gold_and_explains_misses(small_corpus):
    items, item = _decided_item(small_corpus)
    metric = ProgramMetric(items, final_weight=0.5)
    example = program_examples([item])[0]
    assert set(example.inputs().keys()) == {"question", "doc_ids"}, "only what a system may see is an input"
    perfect = dspy.Prediction(answer=item.final_answer, records=_gold_records(item))
    assert metric(example, perfect) == 1.0
    nothing = dspy.Prediction(answer="", records=[])
    assert metric(example, nothing) == 0.0
    half = dspy.Prediction(answer=item.final_answer, records=[])
    assert metric(example, half) == 0.5
    fed = metric(example, nothing, None, "extractor.extract", None)
    assert fed.score == 0.0 and "not extracted" in fed.feedback and item.final_answer in fed.feedback


def test_cell_metric_scores_one_document_against_its_gold_row(small_corpus):
    items = load_dataset(small_corpus[0] / "dataset.json")
    examples = extractor_examples(items)
    assert examples and set(examples[0].inputs().keys()) == {"doc_id", "field_specs"}
    assert len({(e.doc_id, tuple(s.name for s in e.field_specs)) for e in examples}) == len(examples)
    example = next(e for e in examples if any(isinstance(v, float) for v in e.gold_row.values.values()))
    row = example.gold_row

    def facts(change: str | None = None) -> list[Fact]:
        out = []
        for key, value in row.values.items():
            text = None if value is None else str(value)
            if key == change:
                text = "123456789"
            out.append(
                Fact(doc_id=row.id, field=key.removeprefix("value_"), disclosed=text is not None, value=text)
            )
        return out

    metric = CellMetric()
    assert metric(example, dspy.Prediction(facts=facts(), failures=[])) == 1.0
    changed = next(k for k, v in row.values.items() if isinstance(v, float))
    fed = metric(example, dspy.Prediction(facts=facts(changed), failures=[]), None, "extractor.extract", None)
    assert fed.score < 1.0 and changed in fed.feedback and "123456789" in fed.feedback.replace(",", "")


def test_field_specs_are_typed_from_the_key_and_the_gold_value():
    assert infer_spec("value_capital_adequacy_ratio_pct", "资本充足率。", 15.4).type == "percent"
    assert infer_spec("value_total_assets_usd", "total assets.", 1e9).unit == "USD"
    assert infer_spec("value_social_donation_10k_cny", "社会捐赠", 12.0).unit == "CNY"
    assert infer_spec("value_uses_gri", "GRI", True).type == "boolean"
    assert infer_spec("value_record_date", "股权登记日", "2022-06-15").type == "date"
    # no date suffix: the gold value alone (either date shape the cell scorer accepts) makes it a date
    assert infer_spec("value_dividend_paid_on", "", "2022-06-15").type == "date"
    assert infer_spec("value_meeting_day", "", "06-15").type == "date"
    assert infer_spec("value_meeting_day", "", "2022/06/15").type == "string"
    assert infer_spec("value_female_executive_count", "女性高管", 3).type == "integer"
    spec = infer_spec("value_auditor", "", "某会计师事务所")
    assert spec.type == "string" and spec.name == "auditor" and spec.description == "auditor"
