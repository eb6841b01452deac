"""CodeWriter: pandas code over ALL normalized records, run in the sandbox, fixed on error.

The writer sees the schema, a few sample records and the question; the sandbox (programs.sandbox)
runs the code over every record, in a process started while the LM writes the code
(programs.stages.warm_sandbox). On an error (or a hit limit) the code and the error go back to the
fixer, up to `rounds` times.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field

import dspy

from programs.lm.spend import refusal
from programs.stages.spans import SandboxRun
from programs.stages.warm_sandbox import WarmSandboxes
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


@dataclass
class Analysis:
    """The last code run, its printed result (or "ERROR: ..."), and every attempt."""

    code: str
    result: str
    ok: bool
    attempts: list[dict] = field(default_factory=list)  # {code, ok, stdout, error, limit} per run
    # The sandbox refused to run any code here (no isolation, no COLLATE_SANDBOX=off): the question has
    # no computed result and fails with this reason; its answer is not asked for (issue 33).
    refusal: str = ""


class CodeWriter(dspy.Module):
    def __init__(
        self,
        sandboxes: WarmSandboxes | None = None,
        rounds: int = 3,
        timeout: float = 20.0,
        sample_records: int = 8,
    ):
        """sandboxes: where processes come from (shared, started ahead); rounds: fix rounds after the
        first failing code; timeout: seconds per run; sample_records: rows the writer is shown."""
        super().__init__()
        self.sandboxes = sandboxes or WarmSandboxes()
        self.rounds, self.timeout, self.sample_records = rounds, timeout, sample_records
        self.write_code = dspy.Predict(WriteAnalysisCode)
        self.fix_code = dspy.Predict(FixAnalysisCode)

    def warm_up(self) -> None:
        """Start the first attempt's sandbox now (call at the start of a question)."""
        self.sandboxes.warm_up()

    def forward(self, question: str, columns: str, records: list[dict]) -> Analysis:
        """Write, run, and fix up to `rounds` times. Each attempt's sandbox is started BEFORE its LM call
        so the process start-up overlaps the call; each attempt gets a fresh process, and one left unused
        (the call failed or was interrupted) is closed in `finally`."""
        attempts: list[dict] = []
        sandbox = self.sandboxes.take(records)
        try:
            if sandbox.refused is not None:  # no isolation here: no code is asked for that could never run
                return refused(sandbox.refused)
            try:
                reply = self.write_code(
                    question=question, columns=columns, sample_records=records[: self.sample_records]
                )
                code = strip_fences(reply.code)
            except Exception as e:
                if refusal(e):  # the run's budget is spent: the question fails whole (a resume asks it)
                    raise
                return failed(attempts, f"code writer call failed: {type(e).__name__}: {e}")
            for round_ in range(self.rounds + 1):
                outcome = self.execute(sandbox, code, records, attempts)
                # a sandbox that refused to run any code (no isolation here) is not the code's fault:
                # asking for a fix would spend LM calls on code that will never run
                if outcome.ok or round_ == self.rounds:
                    break
                if outcome.limit == "isolation":  # refused only now (the fix round's sandbox): no answer
                    return refused(outcome)
                sandbox = self.sandboxes.start(records)
                try:
                    reply = self.fix_code(
                        question=question, columns=columns, code=code, error=problem(outcome)
                    )
                    code = strip_fences(reply.fixed_code)
                except Exception as e:
                    if refusal(e):
                        raise
                    return failed(attempts, f"code fixer call failed: {type(e).__name__}: {e}")
            return done(attempts)
        finally:
            sandbox.close()  # a no-op after it ran; kills one whose code never came

    def execute(self, sandbox, code: str, records: list[dict], attempts: list[dict]):
        late = records if sandbox.records is None else None  # one warm_up() started before the records
        outcome = SandboxRun(sandbox, late)(
            code=code, timeout=self.timeout, late_records=len(late or [])
        )  # a span
        attempts.append(
            {
                "code": code,
                "ok": outcome.ok,
                "stdout": outcome.stdout,
                "error": outcome.error,
                "limit": outcome.limit,
            }
        )
        if not outcome.ok:
            logger.info("analysis code failed (round %d): %s", len(attempts), problem(outcome)[:200])
        return outcome


def done(attempts: list[dict]) -> Analysis:
    last = attempts[-1]
    result = last["stdout"].strip() if last["ok"] else f"ERROR: {problem_of(last)}"
    return Analysis(code=last["code"], result=result, ok=last["ok"], attempts=attempts)


def no_records() -> Analysis:
    """What the analysis is when no document yielded a value: nothing to run."""
    return Analysis(code="", result="ERROR: no document in scope yielded any value", ok=False)


def problem(outcome) -> str:
    return problem_of({"error": outcome.error, "limit": outcome.limit, "stdout": outcome.stdout})


def problem_of(attempt: dict) -> str:
    if attempt.get("error"):
        return str(attempt["error"])
    if attempt.get("limit"):
        return f"the code hit the sandbox's {attempt['limit']} limit"
    return "the code failed without an error message"


def refused(outcome) -> Analysis:
    """The analysis of a question whose sandbox refuses every run: nothing was written or run."""
    reason = f"the sandbox refused to run the analysis code: {problem(outcome)}"
    attempt = {"code": "", "ok": False, "stdout": "", "error": outcome.error, "limit": outcome.limit}
    return Analysis(code="", result=f"ERROR: {reason}", ok=False, attempts=[attempt], refusal=reason)


def failed(attempts: list[dict], reason: str) -> Analysis:
    logger.warning(reason)
    code = attempts[-1]["code"] if attempts else ""
    return Analysis(code=code, result=f"ERROR: {reason}", ok=False, attempts=attempts)
