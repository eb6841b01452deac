"""ProgramResult: what the Analyst and the flat-RAG baseline both return, one shape for every caller.

`answer` is the LM's answer alone (what a scorer reads); `coverage_line` is what a person is shown
after it; `error` is set when the question failed (no plan, or not one document could be read): the
answer then only says why, and a run counts the question failed, not answered. A dspy.Prediction (so
dspy.Evaluate, usage tracking and MLflow traces take it as they take any module's output) built only
through this constructor, so every field is named and defaulted once.
"""

from __future__ import annotations

import dspy

from signatures.types import Citation, DocumentFailure, Fact, Plan


class ProgramResult(dspy.Prediction):
    def __init__(
        self,
        *,
        answer: str,
        records: list[dict] | None = None,
        code: str = "",
        result: str = "",
        citations: list[Citation] | None = None,
        missing: list[DocumentFailure] | None = None,  # documents that could not be read or asked, with why
        facts: list[Fact] | None = None,
        plan: Plan | None = None,
        warnings: list[str] | None = None,
        run_log: dict | None = None,  # MuDABench's run_log.json shape (programs.run_folder)
        trace: dict | None = None,  # stage name -> what went in and came out (the run folder's trace/)
        retrieved_chunks: list[str] | None = None,  # the flat-RAG baseline's passages, as the LM saw them
        coverage: dict | None = None,  # what the answer rests on (programs.stages.coverage.Coverage)
        coverage_line: str = "",  # the same, one line in the question's language, shown after the answer
        error: str | None = None,  # why there is no answer (planning failed, no document could be read)
    ):
        super().__init__(
            answer=answer,
            records=records or [],
            code=code,
            result=result,
            citations=citations or [],
            missing=missing or [],
            facts=facts or [],
            plan=plan,
            warnings=warnings or [],
            run_log=run_log or {"doc_interactions": {}},
            trace=trace or {},
            retrieved_chunks=retrieved_chunks or [],
            coverage=coverage or {},
            coverage_line=coverage_line,
            error=error,
        )
