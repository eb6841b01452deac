"""programs.steps: one generator body driven the same way by run_steps and arun_steps."""

from __future__ import annotations

import asyncio

import pytest

from programs.steps import arun_steps, run_steps


class Double:
    """A sub-module stand-in: doubles x, sync or async; raises on a negative x."""

    def __call__(self, x):
        if x < 0:
            raise ValueError(f"negative: {x}")
        return 2 * x

    async def acall(self, x):
        return self(x)


def body(log: list, start: int):
    try:
        doubled = yield Double(), {"x": start}
        try:
            again = yield Double(), {"x": -doubled}
        except ValueError as e:
            log.append(str(e))
            again = 0
        return doubled, again
    finally:
        log.append("closed")


def unhandled(log: list):
    try:
        yield Double(), {"x": -1}
    finally:
        log.append("closed")


@pytest.mark.parametrize("drive", [run_steps, lambda steps: asyncio.run(arun_steps(steps))])
def test_results_are_sent_back_failures_thrown_in_and_the_return_value_returned(drive):
    log = []
    assert drive(body(log, 3)) == (6, 0)
    assert log == ["negative: -6", "closed"]


@pytest.mark.parametrize("drive", [run_steps, lambda steps: asyncio.run(arun_steps(steps))])
def test_a_failure_the_body_does_not_handle_propagates_after_its_finally(drive):
    log = []
    with pytest.raises(ValueError, match="negative: -1"):
        drive(unhandled(log))
    assert log == ["closed"]


def test_an_interrupted_call_closes_the_body_at_once():
    class Interrupted:
        def __call__(self):
            raise KeyboardInterrupt

    log = []

    def interrupted_body():
        try:
            yield Interrupted(), {}
        finally:
            log.append("closed")

    with pytest.raises(KeyboardInterrupt):
        run_steps(interrupted_body())
    assert log == ["closed"]
