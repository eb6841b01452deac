"""ProgramResult: what the Analyst and the flat-RAG baseline both return, one shape for every caller.

A dspy.Prediction (so dspy.Evaluate, usage tracking and MLflow traces take it as they take any
module's output) built only through this constructor, so every field is named and defaulted once.
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
        run_log: dict | None = None,  # MuDABench's run_log.json shape (programs.runtime.run_folder)
        trace: dict | None = None,  # stage name -> what went in and came out (the run folder's trace/)
        retrieved_chunks: list[str] | None = None,  # the flat-RAG baseline's passages, as the LM saw them
    ):
        super().__init__(
            answer=answer, records=records or [], code=code, result=result, citations=citations or [],
            missing=missing or [], facts=facts or [], plan=plan, warnings=warnings or [],
            run_log=run_log or {"doc_interactions": {}}, trace=trace or {}, retrieved_chunks=retrieved_chunks or [],
        )  # fmt: skip
