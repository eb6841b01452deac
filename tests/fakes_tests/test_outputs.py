"""fake_outputs: valid outputs for every project signature, usable with DummyLM."""

import dspy
import pytest
from dspy.utils.dummies import DummyLM

from fakes.outputs import fake_outputs
from signatures.answer import WriteAnswer
from signatures.code_writer import FixAnalysisCode, WriteAnalysisCode
from signatures.extractor import ExtractFacts
from signatures.judge import JudgeAnswer
from signatures.normalizer import NormalizeRecords
from signatures.planner import PlanQuestion
from signatures.types import ExtractedValue, Plan

SIGNATURES = [
    PlanQuestion,
    ExtractFacts,
    NormalizeRecords,
    WriteAnalysisCode,
    FixAnalysisCode,
    WriteAnswer,
    JudgeAnswer,
]
INPUT_DEFAULTS = {
    "questions": [],
    "passages": [],
    "field_specs": [],
    "items": [],
    "sample_records": [],
    "missing": [],
}


def call(signature, outputs):
    dspy.configure(lm=DummyLM({"": outputs}))
    inputs = {name: INPUT_DEFAULTS.get(name, "x") for name in signature.input_fields}
    return dspy.Predict(signature)(**inputs)


@pytest.mark.parametrize("signature", SIGNATURES, ids=lambda s: s.__name__)
def test_fake_outputs_parse_into_typed_predictions(signature):
    outputs = fake_outputs(signature)
    assert set(outputs) == set(signature.output_fields)
    pred = call(signature, outputs)
    for name in signature.output_fields:
        assert getattr(pred, name) is not None or outputs[name] is None


def test_typed_outputs_become_models():
    pred = call(PlanQuestion, fake_outputs(PlanQuestion))
    assert isinstance(pred.plan, Plan) and pred.plan.subqueries[0].fields
    pred = call(ExtractFacts, fake_outputs(ExtractFacts))
    assert isinstance(pred["values"][0], ExtractedValue)


def test_overrides_replace_values_and_unknown_names_are_refused():
    values = [{"field": "car", "disclosed": False}]
    assert fake_outputs(ExtractFacts, values=values)["values"] == values
    assert call(ExtractFacts, fake_outputs(ExtractFacts, values=values))["values"][0].disclosed is False
    with pytest.raises(ValueError, match="no output fields"):
        fake_outputs(ExtractFacts, answer="x")
