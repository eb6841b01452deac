"""The prompt reader against what DSPy's adapters really produce for the project's signatures."""

import dspy
import pytest

from fakes.chat_format import call_kind, format_reply, parse_prompt
from fakes.outputs import fake_outputs
from signatures.answer import WriteAnswer
from signatures.code_writer import FixAnalysisCode, WriteAnalysisCode
from signatures.extractor import ExtractFacts
from signatures.judge import JudgeAnswer
from signatures.normalizer import NormalizeRecords, RawValue
from signatures.planner import PlanQuestion
from signatures.types import FieldSpec

SPEC = FieldSpec(name="capital_adequacy_ratio", description="资本充足率。", type="percent", unit="percent")
CASES = [
    (
        PlanQuestion,
        "plan",
        {
            "question": "2022年资本充足率最高的三家公司？",
            "catalog": "3 documents\ndoctype: A股年报 (3)",
            "feedback": "",
        },
    ),
    (
        ExtractFacts,
        "extract",
        {
            "document": "600000 2022 A股年报",
            "questions": ["资本充足率？"],
            "field_specs": [SPEC],
            "passages": ["[page 3] 资本充足率 15.44%", "[page 9] 其他"],
        },
    ),
    (
        NormalizeRecords,
        "normalize",
        {
            "field_specs": [SPEC],
            "items": [
                RawValue(key="d1:car", field="car", value="15.44%", unit="%", quote="资本充足率 15.44%")
            ],
        },
    ),
    (
        WriteAnalysisCode,
        "write_code",
        {"question": "q", "columns": "car: percent", "sample_records": [{"symbol": "600000", "car": 15.4}]},
    ),
    (
        FixAnalysisCode,
        "fix_code",
        {"question": "q", "columns": "c", "code": "print(1/0)", "error": "ZeroDivisionError"},
    ),
    (WriteAnswer, "answer", {"question": "q", "result": "{}", "sample_records": [], "missing": ["d9"]}),
    (JudgeAnswer, "judge", {"question": "q", "gold_answer": "600000", "model_answer": "600000"}),
]


def plain(value):
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


@pytest.mark.parametrize("signature,kind,inputs", CASES, ids=[c[1] for c in CASES])
def test_chat_adapter_prompts_parse_back_to_their_inputs(signature, kind, inputs):
    messages = dspy.ChatAdapter().format(signature, demos=[], inputs=inputs)
    parsed = parse_prompt(messages)
    assert parsed.inputs == {k: plain(v) for k, v in inputs.items()}
    assert parsed.output_fields == list(signature.output_fields)
    assert parsed.instructions == " ".join(signature.instructions.split())
    assert not parsed.wants_json
    assert call_kind(messages) == kind


@pytest.mark.parametrize("signature,kind,inputs", CASES, ids=[c[1] for c in CASES])
def test_replies_parse_with_the_real_adapters(signature, kind, inputs):
    outputs = fake_outputs(signature)
    chat = dspy.ChatAdapter().parse(signature, format_reply(outputs))
    assert {k: plain(v) for k, v in chat.items()} == outputs
    as_json = dspy.JSONAdapter().parse(signature, format_reply(outputs, as_json=True))
    assert {k: plain(v) for k, v in as_json.items()} == outputs


def test_the_last_user_message_wins_over_demos():
    demo = dspy.Example(question="old", gold_answer="a", model_answer="b", correct=True, reason="r")
    messages = dspy.ChatAdapter().format(
        JudgeAnswer, demos=[demo], inputs={"question": "new", "gold_answer": "g", "model_answer": "m"}
    )
    assert parse_prompt(messages).inputs["question"] == "new"


def test_json_adapter_prompts_are_recognised():
    messages = dspy.JSONAdapter().format(
        JudgeAnswer, demos=[], inputs={"question": "q", "gold_answer": "g", "model_answer": "m"}
    )
    parsed = parse_prompt(messages)
    assert parsed.wants_json
    assert parsed.inputs == {"question": "q", "gold_answer": "g", "model_answer": "m"}
    assert parsed.output_fields == ["correct", "reason"]


def test_a_prepended_reasoning_field_keeps_the_kind():
    with_reasoning = PlanQuestion.prepend("reasoning", dspy.OutputField(), str)
    messages = dspy.ChatAdapter().format(with_reasoning, demos=[], inputs=CASES[0][2])
    assert parse_prompt(messages).output_fields == ["reasoning", "plan"]
    assert call_kind(messages) == "plan"
