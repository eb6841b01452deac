"""Analyze: write (and fix) pandas code over the normalized records."""

import dspy


class WriteAnalysisCode(dspy.Signature):
    """Write Python code that answers the question from the DataFrame `df` (one row per document, columns as described) and prints the result as one JSON object; handle missing values and ties explicitly."""

    question: str = dspy.InputField()
    columns: str = dspy.InputField(
        desc="columns of df with type and unit; id, symbol, year, doctype are always present"
    )
    sample_records: list[dict] = dspy.InputField(desc="a few rows of df")
    code: str = dspy.OutputField(
        desc="plain Python, no markdown fences; pandas is imported as pd, numpy as np"
    )


class FixAnalysisCode(dspy.Signature):
    """Fix the code so that it runs and answers the question; keep what was right."""

    question: str = dspy.InputField()
    columns: str = dspy.InputField()
    code: str = dspy.InputField()
    error: str = dspy.InputField(desc="the error the code raised, as Python reported it")
    fixed_code: str = dspy.OutputField(desc="plain Python, no markdown fences")
