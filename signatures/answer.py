"""Answer: the computed result -> the final answer in the question's language."""

import dspy


class WriteAnswer(dspy.Signature):
    """Answer the question from the computed result, in the question's language, naming every entity and number the question asks for, with units; say which documents were missing if any."""

    question: str = dspy.InputField()
    result: str = dspy.InputField(desc="what the analysis code printed")
    sample_records: list[dict] = dspy.InputField(desc="records behind the result")
    missing: list[str] = dspy.InputField(desc="documents that could not be read, empty if none")
    answer: str = dspy.OutputField()


class AnswerFromPassages(dspy.Signature):
    """Answer the question from the retrieved passages only, in the question's language, naming every entity and number the question asks for, with units; say so when the passages do not hold what is needed."""

    question: str = dspy.InputField()
    passages: list[str] = dspy.InputField(desc="retrieved passages, each prefixed with its source")
    answer: str = dspy.OutputField()
