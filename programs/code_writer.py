"""CodeWriter: pandas code over ALL normalized records, run in the sandbox, fixed on error.

The writer sees the schema, a few sample records and the question; programs.sandbox.run_code runs
the code over every record. On an error (or a hit limit) the code and the error go back to the
fixer, up to `settings.code_rounds` times.
"""

from __future__ import annotations

import logging
import re

import dspy

from signatures.code_writer import FixAnalysisCode, WriteAnalysisCode

logger = logging.getLogger(__name__)

FENCE = re.compile(r"```[a-zA-Z0-9_+-]*\s*\n(.*?)```", re.S)


def strip_fences(text: str | None) -> str:
    """The code inside the first markdown fence, or the text itself when there is none."""
    text = text or ""
    match = FENCE.search(text)
    if match:
        return match.group(1).strip()
    return re.sub(r"^```[a-zA-Z0-9_+-]*|```$", "", text.strip()).strip()


def run_in_sandbox(code: str, records: list[dict], timeout: float):
    """Indirection so the sandbox module is imported only when code actually runs."""
    from programs.sandbox import run_code

    return run_code(code, records, timeout=timeout)


class CodeWriter(dspy.Module):
    def __init__(self, resources):
        super().__init__()
        self.resources = resources
        self.write_code = dspy.Predict(WriteAnalysisCode)
        self.fix_code = dspy.Predict(FixAnalysisCode)

    def forward(self, question: str, columns: str, records: list[dict]) -> dspy.Prediction:
        attempts: list[dict] = []
        try:
            code = strip_fences(self.write_code(question=question, columns=columns, sample_records=self.sample(records)).code)
        except Exception as e:
            return failed(attempts, f"code writer call failed: {type(e).__name__}: {e}")
        for round_ in range(int(self.resources.settings.code_rounds) + 1):
            outcome = self.execute(code, records, attempts)
            if outcome.ok or round_ == int(self.resources.settings.code_rounds):
                break
            try:
                code = strip_fences(self.fix_code(question=question, columns=columns, code=code,
                                                  error=problem(outcome)).fixed_code)  # fmt: skip
            except Exception as e:
                return failed(attempts, f"code fixer call failed: {type(e).__name__}: {e}")
        return self.done(attempts)

    async def aforward(self, question: str, columns: str, records: list[dict]) -> dspy.Prediction:
        attempts: list[dict] = []
        try:
            reply = await self.write_code.acall(question=question, columns=columns, sample_records=self.sample(records))
            code = strip_fences(reply.code)
        except Exception as e:
            return failed(attempts, f"code writer call failed: {type(e).__name__}: {e}")
        for round_ in range(int(self.resources.settings.code_rounds) + 1):
            outcome = self.execute(code, records, attempts)
            if outcome.ok or round_ == int(self.resources.settings.code_rounds):
                break
            try:
                reply = await self.fix_code.acall(question=question, columns=columns, code=code, error=problem(outcome))
                code = strip_fences(reply.fixed_code)
            except Exception as e:
                return failed(attempts, f"code fixer call failed: {type(e).__name__}: {e}")
        return self.done(attempts)

    def sample(self, records: list[dict]) -> list[dict]:
        return records[: int(self.resources.settings.sample_records)]

    def execute(self, code: str, records: list[dict], attempts: list[dict]):
        outcome = run_in_sandbox(code, records, float(self.resources.settings.sandbox_timeout))
        attempts.append({"code": code, "ok": outcome.ok, "stdout": outcome.stdout, "error": outcome.error,
                         "limit": outcome.limit})  # fmt: skip
        if not outcome.ok:
            logger.info("analysis code failed (round %d): %s", len(attempts), problem(outcome)[:200])
        return outcome

    @staticmethod
    def done(attempts: list[dict]) -> dspy.Prediction:
        last = attempts[-1]
        result = last["stdout"].strip() if last["ok"] else f"ERROR: {problem_of(last)}"
        return dspy.Prediction(code=last["code"], result=result, ok=last["ok"], attempts=attempts)


def problem(outcome) -> str:
    return problem_of({"error": outcome.error, "limit": outcome.limit, "stdout": outcome.stdout})


def problem_of(attempt: dict) -> str:
    if attempt.get("error"):
        return str(attempt["error"])
    if attempt.get("limit"):
        return f"the code hit the sandbox's {attempt['limit']} limit"
    return "the code failed without an error message"


def failed(attempts: list[dict], reason: str) -> dspy.Prediction:
    logger.warning(reason)
    code = attempts[-1]["code"] if attempts else ""
    return dspy.Prediction(code=code, result=f"ERROR: {reason}", ok=False, attempts=attempts)
