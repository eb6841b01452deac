"""The metrics of the MuDABench protocol in one import (docs/interfaces.md).

    from evaluate.matching.metrics import final_match, process_scores   # deterministic; undecided = correct None

final_match     the deterministic final-answer matcher (evaluate/matching/final_match.py)
process_scores  cell / row / column accuracy, macro and micro (evaluate/matching/process.py)
full_correct    final right AND every row right
"""

from __future__ import annotations

from evaluate.matching.final_match import MatchResult, final_match
from evaluate.matching.process import (
    ProcessScores,
    QuestionProcess,
    process_scores,
    records_to_facts,
    score_question,
)

__all__ = [
    "MatchResult",
    "ProcessScores",
    "QuestionProcess",
    "final_match",
    "full_correct",
    "process_scores",
    "records_to_facts",
    "score_question",
]


def full_correct(final_correct: bool | None, process: QuestionProcess) -> bool:
    """Full (solid) accuracy of one question: the final answer is right and every gold row is right."""
    return final_correct is True and process.all_rows_right
