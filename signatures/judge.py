"""Judge: does an answer hold the gold answer's key facts (for what the deterministic matcher cannot decide)."""

import dspy


class JudgeAnswer(dspy.Signature):
    """Decide whether the model answer contains every key fact of the gold answer (entities, their order when ranked, numbers within rounding, in any unit)."""

    question: str = dspy.InputField()
    gold_answer: str = dspy.InputField()
    model_answer: str = dspy.InputField()
    correct: bool = dspy.OutputField()
    reason: str = dspy.OutputField(desc="one sentence")
