"""The C allocator's share of a long run's memory: fewer arenas, and what they hold free handed back after
each wave of questions (issue 33 item 11).

Why: glibc's malloc gives threads arenas of their own (up to 8 per core) and keeps what is freed in them,
handing back only what lies at the top of one. Measured on the demo (bench/run_memory.py --curve, 400
questions, every Python object a question makes let go): malloc's memory in use stayed flat (116 MB) while
the free memory its arenas held was ~100 MB after the first wave and kept growing (96 -> 110 MB from 25 to
400 questions), and the run's resident memory with it (469 -> 477 MB from 50 to 400). Two arenas
(`limit_arenas`, as MALLOC_ARENA_MAX=2 would) held 40-45 MB free instead: resident 411 -> 416 MB, peak 425
instead of 477 MB, in the same time. malloc_trim(0) after each wave returns the free pages of every arena.
Elsewhere than glibc (macOS, musl) there is neither call and both do nothing.
"""

from __future__ import annotations

import ctypes
import functools
import sys

M_ARENA_MAX = -8  # mallopt's parameter for the most arenas (glibc's malloc.h)
ARENAS = 2


@functools.cache
def _glibc():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None  # musl has neither


def limit_arenas(count: int = ARENAS) -> bool:
    """At most `count` malloc arenas from now on (threads started before keep theirs); whether it could
    be asked (glibc). Call it before a run starts its threads."""
    libc = _glibc()
    return libc is not None and bool(libc.mallopt(M_ARENA_MAX, count))


def release_free_memory() -> bool:
    """Return the allocator's free pages to the system; whether it could be asked (glibc)."""
    libc = _glibc()
    if libc is None:
        return False
    libc.malloc_trim(0)
    return True
