"""Judge: does an answer hold the gold answer's key facts (for what the deterministic matcher cannot decide)."""

import dspy


class JudgeAnswer(dspy.Signature):
    """Decide whether the model answer contains every key fact of the gold answer (the companies named, their order when ranked, numbers within rounding in any unit, where 14.3% equals 0.143 and a gold A-share growth rate printed as -0.14% may mean -14%), ignoring extra explanation."""

    question: str = dspy.InputField()
    gold_answer: str = dspy.InputField()
    model_answer: str = dspy.InputField()
    correct: bool = dspy.OutputField()
    reason: str = dspy.OutputField(desc="one sentence")
