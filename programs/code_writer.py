"""CodeWriter: pandas code over ALL normalized records, run in the sandbox, fixed on error.

The writer sees the schema, a few sample records and the question; the sandbox (programs.sandbox)
runs the code over every record, in a process started while the LM writes the code. On an error (or a hit limit) the code and the error go back to the
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


def start_sandbox(records: list[dict]):
    """A sandbox process warming up for `records` (imported lazily: only when code will run)."""
    from programs.sandbox import prepare

    return prepare(records)


class CodeWriter(dspy.Module):
    def __init__(self, resources):
        super().__init__()
        self.resources = resources
        self.write_code = dspy.Predict(WriteAnalysisCode)
        self.fix_code = dspy.Predict(FixAnalysisCode)

    # Each attempt's sandbox is started BEFORE its LM call (write_code / fix_code) so the process
    # start-up (bwrap, interpreter, pandas, DataFrame) overlaps the call; each attempt gets a fresh
    # process, and one left unused (the call failed) is closed in `finally`.

    def forward(self, question: str, columns: str, records: list[dict]) -> dspy.Prediction:
        attempts: list[dict] = []
        sandbox = start_sandbox(records)
        try:
            try:
                reply = self.write_code(question=question, columns=columns, sample_records=self.sample(records))
                code = strip_fences(reply.code)
            except Exception as e:
                return failed(attempts, f"code writer call failed: {type(e).__name__}: {e}")
            for round_ in range(int(self.resources.settings.code_rounds) + 1):
                outcome = self.execute(sandbox, code, attempts)
                if outcome.ok or round_ == int(self.resources.settings.code_rounds):
                    break
                sandbox = start_sandbox(records)
                try:
                    code = strip_fences(self.fix_code(question=question, columns=columns, code=code,
                                                      error=problem(outcome)).fixed_code)  # fmt: skip
                except Exception as e:
                    return failed(attempts, f"code fixer call failed: {type(e).__name__}: {e}")
            return self.done(attempts)
        finally:
            sandbox.close()  # a no-op after it ran; kills one whose code never came

    async def aforward(self, question: str, columns: str, records: list[dict]) -> dspy.Prediction:
        attempts: list[dict] = []
        sandbox = start_sandbox(records)
        try:
            try:
                reply = await self.write_code.acall(question=question, columns=columns, sample_records=self.sample(records))
                code = strip_fences(reply.code)
            except Exception as e:
                return failed(attempts, f"code writer call failed: {type(e).__name__}: {e}")
            for round_ in range(int(self.resources.settings.code_rounds) + 1):
                outcome = self.execute(sandbox, code, attempts)
                if outcome.ok or round_ == int(self.resources.settings.code_rounds):
                    break
                sandbox = start_sandbox(records)
                try:
                    reply = await self.fix_code.acall(question=question, columns=columns, code=code, error=problem(outcome))
                    code = strip_fences(reply.fixed_code)
                except Exception as e:
                    return failed(attempts, f"code fixer call failed: {type(e).__name__}: {e}")
            return self.done(attempts)
        finally:
            sandbox.close()

    def sample(self, records: list[dict]) -> list[dict]:
        return records[: int(self.resources.settings.sample_records)]

    def execute(self, sandbox, code: str, attempts: list[dict]):
        outcome = sandbox.run(code, float(self.resources.settings.sandbox_timeout))
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
