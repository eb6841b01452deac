"""One body for a module's forward and aforward: its steps written once, as a generator.

forward and aforward differ only in how a sub-module is called (`m(**inputs)` or
`await m.acall(**inputs)`), so the body is a generator that yields each call as
(module, inputs) and is sent the result back; a call that raises has its exception thrown in at
the yield, so `try: x = yield m, inputs` handles a failed call exactly as a direct call would.
The generator's return value is the module's result. `run_steps` drives it synchronously,
`arun_steps` asynchronously.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

Steps = Generator[tuple[Any, dict], Any, Any]


def run_steps(steps: Steps):
    try:
        module, inputs = next(steps)
        while True:
            try:
                result = module(**inputs)
            except Exception as e:
                module, inputs = steps.throw(e)
            else:
                module, inputs = steps.send(result)
    except StopIteration as stop:
        return stop.value
    finally:
        steps.close()  # interrupted mid-call (KeyboardInterrupt): the body's `finally` runs now


async def arun_steps(steps: Steps):
    try:
        module, inputs = next(steps)
        while True:
            try:
                result = await module.acall(**inputs)
            except Exception as e:
                module, inputs = steps.throw(e)
            else:
                module, inputs = steps.send(result)
    except StopIteration as stop:
        return stop.value
    finally:
        steps.close()  # cancelled mid-call: the body's `finally` runs now
