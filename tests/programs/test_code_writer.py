"""Code runs in the sandbox over all records; an error goes back to the fixer (up to 3 rounds)."""

from __future__ import annotations

import time

import dspy

from programs.stages.code_writer import CodeWriter, strip_fences
from programs.stages.warm_sandbox import WarmSandboxes
from tests.sandbox.processes import descendants, runner_processes, wait_for, waiting_for_code

RECORDS = [
    {"id": f"d{i}", "symbol": f"60000{i}", "year": 2023, "doctype": "A股年报", "ratio": float(i)}
    for i in range(5)
]


def writer(settings, store) -> CodeWriter:
    return CodeWriter(
        WarmSandboxes(),
        rounds=settings.code_rounds,
        timeout=settings.sandbox_timeout,
        sample_records=settings.sample_records,
    )


def test_first_code_errors_and_the_fixed_code_runs_over_all_records(settings, store, use_lm):
    lm = use_lm(
        **{
            "[[ ## error ## ]]": {"fixed_code": "print(int(df['ratio'].sum()), len(df))"},
            "[[ ## columns ## ]]": {"code": "```python\nprint(df['no_such_column'].sum())\n```"},
        }
    )
    out = writer(settings, store)(question="sum?", columns="ratio", records=RECORDS)
    assert out.ok and out.result == "10 5"  # all five records, not just the sample
    assert len(out.attempts) == 2 and "KeyError" in out.attempts[0]["error"]
    assert "no_such_column" in lm.history[1]["messages"][-1]["content"]  # the fixer saw code and error


def test_gives_up_after_three_fix_rounds(settings, store, use_lm):
    lm = use_lm(
        **{
            "[[ ## error ## ]]": {"fixed_code": "raise ValueError('still broken')"},
            "[[ ## columns ## ]]": {"code": "1/0"},
        }
    )
    out = writer(settings, store)(question="q", columns="ratio", records=RECORDS)
    assert not out.ok and len(out.attempts) == 4 and len(lm.history) == 4
    assert out.result.startswith("ERROR:") and "still broken" in out.result


def test_strip_fences():
    assert strip_fences("```python\nprint(1)\n```") == "print(1)"
    assert strip_fences("Here:\n```\nx = 1\n```\nDone") == "x = 1"
    assert strip_fences("print(2)") == "print(2)"


class SlowPredictor:
    """Stands in for write_code: answers after `delay` seconds, like an LM call in flight."""

    def __init__(self, code: str, delay: float, error: Exception | None = None):
        self.code, self.delay, self.error = code, delay, error

    def __call__(self, **inputs):
        time.sleep(self.delay)
        if self.error:
            raise self.error
        return dspy.Prediction(code=self.code)


class AnswersOnceTheSandboxIsWarm:
    """Stands in for write_code: an LM call still in flight until the sandbox started for this attempt
    has finished starting up (observed from /proc, not by the clock), recording whether it did."""

    def __init__(self, code: str):
        self.code, self.runners_before, self.saw_warm_sandbox = code, runner_processes(), None

    def __call__(self, **inputs):
        # The deadline only guards against a hang; a sandbox started after this call never appears.
        self.saw_warm_sandbox = wait_for(
            lambda: any(waiting_for_code(pid) for pid in runner_processes() - self.runners_before), 120
        )
        return dspy.Prediction(code=self.code)


def test_sandbox_start_up_overlaps_the_write_code_call(settings, store, monkeypatch):
    cw = writer(settings, store)
    started = []
    real_start = cw.sandboxes.start
    monkeypatch.setattr(cw.sandboxes, "start", lambda records: started.append(records) or real_start(records))
    cw.write_code = AnswersOnceTheSandboxIsWarm("print(int(df['ratio'].sum()))")
    out = cw(question="sum?", columns="ratio", records=RECORDS)
    assert out.ok and out.result == "10"
    # Overlapped: the attempt's sandbox was started before the LM call and was warm while it was still
    # in flight, and that one process ran the code (no second start after the call).
    assert cw.write_code.saw_warm_sandbox, "no sandbox finished starting up while write_code was in flight"
    assert started == [RECORDS]


def test_a_failed_write_code_call_closes_the_sandbox_started_for_it(settings, store):
    cw = writer(settings, store)
    cw.write_code = SlowPredictor("", 0.5, error=RuntimeError("LM down"))
    before, runners = descendants(), runner_processes()  # spares other tests' programs keep are not ours
    out = cw(question="sum?", columns="ratio", records=RECORDS)
    assert not out.ok and "LM down" in out.result
    assert not (runner_processes() - runners), "the sandbox prepared for the failed call is still running"
    assert not (descendants() - before)


def test_warm_up_starts_the_first_sandbox_before_the_records_exist_and_it_is_used_once(
    settings, store, monkeypatch
):
    started = []
    cw = writer(settings, store)
    real_start = cw.sandboxes.start

    def spy(records):
        started.append(records)
        return real_start(records)

    monkeypatch.setattr(cw.sandboxes, "start", spy)
    cw.write_code = SlowPredictor("print(int(df['ratio'].sum()), len(records))", 0.0)
    cw.warm_up()
    cw.warm_up()  # idempotent while the first is unused
    assert started == [None]
    out = cw(question="sum?", columns="ratio", records=RECORDS)
    assert out.ok and out.result == "10 5"  # the records travelled with the code
    assert started == [None]  # no second process: the warm one ran the code
    out = cw(question="sum?", columns="ratio", records=RECORDS)
    assert out.ok and started == [None, RECORDS]  # the next question gets a fresh process


def test_warm_up_replaces_a_spare_that_is_no_longer_alive(settings, store):
    cw = writer(settings, store)
    cw.warm_up()
    stale = cw.sandboxes._ahead
    stale.close()
    cw.warm_up()
    assert cw.sandboxes._ahead is not stale and cw.sandboxes._ahead.alive
    cw.sandboxes.take(RECORDS).close()


def test_copies_of_the_program_share_the_warm_sandboxes(settings, store):
    import copy

    cw = writer(settings, store)
    twin = copy.deepcopy(cw)
    assert (
        twin.sandboxes is cw.sandboxes and twin.write_code is not cw.write_code
    )  # processes are never copied


class FailingFixer:
    """Stands in for fix_code: the LM call raises."""

    def __call__(self, **inputs):
        raise RuntimeError("fixer LM down")


class InterruptedWriter:
    """Stands in for write_code: the user presses Ctrl-C while the LM is writing."""

    def __call__(self, **inputs):
        raise KeyboardInterrupt


def test_an_interrupted_write_call_closes_the_sandbox_started_for_it(settings, store):
    cw = writer(settings, store)
    cw.write_code = InterruptedWriter()
    before, runners = descendants(), runner_processes()  # spares other tests' programs keep are not ours
    try:
        cw(question="q", columns="ratio", records=RECORDS)
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the interrupt was swallowed")
    assert not (runner_processes() - runners), (
        "the sandbox prepared for the interrupted call is still running"
    )
    assert not (descendants() - before)


def test_a_failed_fix_code_call_keeps_the_attempt_and_closes_the_sandbox_started_for_it(
    settings, store, use_lm
):
    use_lm(**{"[[ ## columns ## ]]": {"code": "1/0"}})
    cw = writer(settings, store)
    cw.fix_code = FailingFixer()
    before, runners = descendants(), runner_processes()  # spares other tests' programs keep are not ours
    out = cw(question="q", columns="ratio", records=RECORDS)
    assert not out.ok and out.result.startswith("ERROR: code fixer call failed: RuntimeError: fixer LM down")
    assert out.code == "1/0" and len(out.attempts) == 1 and "ZeroDivisionError" in out.attempts[0]["error"]
    assert not (runner_processes() - runners), "the sandbox prepared for the failed fix is still running"
    assert not (descendants() - before)


def test_a_question_that_runs_no_code_leaves_no_sandbox_waiting(make_program, use_lm):
    before = descendants()
    use_lm(**{"[[ ## catalog ## ]]": {"reasoning": "x", "plan": "not a plan"}})
    program = make_program()
    program(question="q")  # planning fails: the sandbox started ahead is stopped, not left to expire
    assert program.code_writer.sandboxes._ahead is None
    assert not (descendants() - before)


def test_a_sandbox_that_refuses_to_run_code_asks_for_no_code(settings, store, use_lm, monkeypatch):
    """No isolation here and no opt-out: the code is refused, which no code can change, so neither the
    writer nor the fixer is asked (4 LM calls spent on code that would never run, before issue 22; 1
    before issue 33)."""
    from programs.sandbox import isolation, policy

    monkeypatch.setattr(isolation, "bwrap_problem", lambda: "bubblewrap (bwrap) is not installed (test)")
    monkeypatch.delenv(policy.SANDBOX_ENV, raising=False)
    lm = use_lm(
        **{
            "[[ ## error ## ]]": {"fixed_code": "print(1)"},
            "[[ ## columns ## ]]": {"code": "print(len(df))"},
        }
    )
    out = writer(settings, store)(question="q", columns="ratio", records=RECORDS)
    assert not out.ok and len(out.attempts) == 1 and len(lm.history) == 0
    assert out.attempts[0]["limit"] == "isolation" and "bubblewrap" in out.result
    assert out.refusal.startswith("the sandbox refused to run the analysis code: Refusing")


def test_a_question_whose_code_is_refused_fails_and_pays_no_answer(make_program, use_lm, monkeypatch):
    """Its "answer" was the refusal text, counted answered (issue 33): now it fails, naming the sandbox."""
    from programs.sandbox import isolation, policy

    monkeypatch.setattr(isolation, "bwrap_problem", lambda: "bubblewrap (bwrap) is not installed (test)")
    monkeypatch.delenv(policy.SANDBOX_ENV, raising=False)
    lm = use_lm()
    pred = make_program()(question="q")
    assert pred.error and pred.error.startswith("the sandbox refused") and "bubblewrap" in pred.error
    assert pred.answer.startswith("No answer: the sandbox refused")
    prompts = [e["messages"][-1]["content"] for e in lm.history]
    assert not any(
        "[[ ## columns ## ]]" in p or "[[ ## result ## ]]" in p for p in prompts
    )  # no code, no answer
