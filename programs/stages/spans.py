"""Modules with no predictor, there so a trace shows retrieval and the sandbox run as steps of their own.

Why modules: programs/ does not import mlflow; MLflow's DSPy autolog opens a span for every
dspy.Module call, with the forward's inputs and outputs. A slow or wrong retrieval, or code that hit
a sandbox limit, was invisible in the traces before. No predictor here, so the program's
`named_predictors` (and compiled.json) are unchanged.
"""

from __future__ import annotations

import time

import dspy

from programs.protocols import DocumentStore


class PassageRetriever(dspy.Module):
    """One search of one document's index; the span shows document, query, terms, k and the pages returned."""

    def __init__(self, store: DocumentStore):
        super().__init__()
        self.store = store  # IndexStore: deepcopy returns the same object, so optimizers share it

    def forward(self, document: str, query: str, k: int, terms: list[str] | None = None) -> dspy.Prediction:
        passages = self.store.search(document, query, k=k, terms=terms or None)
        return dspy.Prediction(pages=[p.page for p in passages], passages=passages)


class SandboxRun(dspy.Module):
    """One run of generated code in a started sandbox; the span shows the code, ok, the limit hit and seconds.

    Built per run around its sandbox and records, so the span's inputs are the code and a record
    count, not every record.
    """

    def __init__(self, sandbox, records: list[dict] | None):
        super().__init__()
        self.sandbox, self.records = sandbox, records

    def forward(self, code: str, timeout: float, late_records: int) -> dspy.Prediction:
        started = time.perf_counter()
        outcome = self.sandbox.run(code, timeout, records=self.records)
        return dspy.Prediction(
            ok=outcome.ok,
            limit=outcome.limit,
            seconds=round(time.perf_counter() - started, 3),
            error=outcome.error,
            stdout=outcome.stdout,
        )
