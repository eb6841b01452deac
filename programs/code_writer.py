"""CodeWriter: pandas code over ALL normalized records, run in the sandbox, fixed on error.

The writer sees the schema, a few sample records and the question; the sandbox (programs.sandbox)
runs the code over every record, in a process started while the LM writes the code. On an error (or a hit limit) the code and the error go back to the
fixer, up to `settings.code_rounds` times.
"""

from __future__ import annotations

import logging
import re
import threading

import dspy

from programs.steps import arun_steps, run_steps
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


def start_sandbox(records: list[dict] | None):
    """A sandbox process warming up for `records` (imported lazily: only when code will run).

    None: records not known yet; they travel with the code (`run(..., records=...)`).
    """
    from programs.sandbox import prepare

    return prepare(records)


# At most one sandbox started by warm_up() ahead of a question, before its records exist. Kept
# here, not on the module: DSPy deep-copies modules, and a live process must not be copied.
_ahead: list = []
_ahead_lock = threading.Lock()


def take_sandbox(records: list[dict]):
    """The sandbox warm_up() started ahead, if any (fresh, never used), else a new one for records."""
    with _ahead_lock:
        spare = _ahead.pop() if _ahead else None
    if spare is not None and spare.alive:
        return spare
    if spare is not None:  # expired (it waited too long) or died: a fresh one instead
        spare.close()
    return start_sandbox(records)


class CodeWriter(dspy.Module):
    def __init__(self, resources):
        super().__init__()
        self.resources = resources
        self.write_code = dspy.Predict(WriteAnalysisCode)
        self.fix_code = dspy.Predict(FixAnalysisCode)

    def warm_up(self) -> None:
        """Start the first attempt's sandbox now (call at the start of a question): its start-up
        (~0.3 s, mostly importing pandas) then overlaps planning and extraction, not the code stage.
        Idempotent while unused; one is kept at most, and it dies with this process."""
        with _ahead_lock:
            if _ahead and _ahead[0].alive:
                return
            stale = _ahead.pop() if _ahead else None
            _ahead.append(start_sandbox(None))
        if stale is not None:
            stale.close()

    def forward(self, question: str, columns: str, records: list[dict]) -> dspy.Prediction:
        return run_steps(self.rounds(question, columns, records))

    async def aforward(self, question: str, columns: str, records: list[dict]) -> dspy.Prediction:
        return await arun_steps(self.rounds(question, columns, records))

    def rounds(self, question: str, columns: str, records: list[dict]):
        """The write-run-fix loop, its LM calls yielded (see programs.steps). Each attempt's sandbox
        is started BEFORE its LM call so the process start-up (bwrap, interpreter, pandas,
        DataFrame) overlaps the call; each attempt gets a fresh process, and one left unused (the
        call failed) is closed in `finally`."""
        attempts: list[dict] = []
        fix_rounds = int(self.resources.settings.code_rounds)
        sandbox = take_sandbox(records)
        try:
            try:
                reply = yield self.write_code, {"question": question, "columns": columns,
                                                "sample_records": self.sample(records)}  # fmt: skip
                code = strip_fences(reply.code)
            except Exception as e:
                return failed(attempts, f"code writer call failed: {type(e).__name__}: {e}")
            for round_ in range(fix_rounds + 1):
                outcome = self.execute(sandbox, code, records, attempts)
                if outcome.ok or round_ == fix_rounds:
                    break
                sandbox = start_sandbox(records)
                try:
                    reply = yield self.fix_code, {"question": question, "columns": columns, "code": code,
                                                  "error": problem(outcome)}  # fmt: skip
                    code = strip_fences(reply.fixed_code)
                except Exception as e:
                    return failed(attempts, f"code fixer call failed: {type(e).__name__}: {e}")
            return self.done(attempts)
        finally:
            sandbox.close()  # a no-op after it ran; kills one whose code never came

    def sample(self, records: list[dict]) -> list[dict]:
        return records[: int(self.resources.settings.sample_records)]

    def execute(self, sandbox, code: str, records: list[dict], attempts: list[dict]):
        late = records if sandbox.records is None else None  # one warm_up() started before the records
        outcome = sandbox.run(code, float(self.resources.settings.sandbox_timeout), records=late)
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
