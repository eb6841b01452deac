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


def interruptible(work: Callable[[], T], name: str = "answering") -> T:
    """work() on a daemon thread in a copy of the caller's context (DSPy keeps its LM and usage tracker
    in context variables); its result, or its exception re-raised here."""
    results: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(work())
        except BaseException as exc:  # re-raised in the caller's thread, never printed by this one
            errors.append(exc)

    thread = threading.Thread(target=contextvars.copy_context().run, args=(run,), name=name, daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(0.2)  # a bounded wait: a signal's KeyboardInterrupt is raised between two of them
    if errors:
        raise errors[0]
    return results[0]
