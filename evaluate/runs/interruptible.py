"""Run the answering off the main thread, so Ctrl-C stops a run at once instead of after every question.

Why: Ctrl-C raises KeyboardInterrupt in the main thread only. When the main thread is the one waiting
on a ThreadPoolExecutor, the exception first runs the pool's shutdown, which waits for the question in
flight (an HTTP call to the LM may take minutes) and then runs every queued question, paying for each;
only then does the traceback appear. Here the main thread only waits on a helper thread, in short
joins it can leave at any moment: the KeyboardInterrupt is raised there and then, and the caller says
what was kept. The helper is a daemon whose work is abandoned; a command ends the process without
joining it (collate.errors.leave).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def interruptible(
    work: Callable[[], T],
    name: str = "answering",
    on_interrupt: Callable[[], None] | None = None,
    grace: float = 0.0,
) -> T:
    """work() on a daemon thread in a copy of the caller's context (DSPy keeps its LM and usage tracker
    in context variables); its result, or its exception re-raised here.

    On Ctrl-C: on_interrupt() (e.g. refuse new LM requests, silence the progress bars), then up to
    `grace` seconds for the work to end on its own (what it finishes meanwhile is the caller's to keep),
    then KeyboardInterrupt; a second Ctrl-C cuts the grace short."""
    results: list[T] = []
    errors: list[BaseException] = []
    done = threading.Event()  # not thread.join: a join cut short by Ctrl-C can report a live thread dead

    def run() -> None:
        try:
            results.append(work())
        except BaseException as exc:  # re-raised in the caller's thread, never printed by this one
            errors.append(exc)
        finally:
            done.set()

    thread = threading.Thread(target=contextvars.copy_context().run, args=(run,), name=name, daemon=True)
    thread.start()
    try:
        while not done.wait(
            0.2
        ):  # a bounded wait: a signal's KeyboardInterrupt is raised between two of them
            pass
    except KeyboardInterrupt:
        if on_interrupt is not None:
            on_interrupt()
        done.wait(grace)
        raise
    if errors:
        raise errors[0]
    return results[0]
