"""Deterministic randomness: every stream is derived from the corpus seed plus names, never from time.

Deriving a fresh `random.Random` per (seed, company, year, purpose) keeps documents independent of the
order they are generated in, so adding a doctype or a year never changes the bytes of the others.
"""

from __future__ import annotations

import hashlib
import random
import uuid


def _digest(seed: int, *keys: object) -> bytes:
    text = "|".join([str(seed), *(str(k) for k in keys)])
    return hashlib.sha256(text.encode("utf-8")).digest()


def rng_for(seed: int, *keys: object) -> random.Random:
    """A random stream private to (seed, *keys)."""
    return random.Random(int.from_bytes(_digest(seed, *keys)[:8], "big"))


def doc_uuid(seed: int, symbol: str, year: int, doctype: str) -> str:
    """A stable UUID (version 4 layout) for one document of one corpus."""
    return str(uuid.UUID(bytes=_digest(seed, "doc", symbol, year, doctype)[:16], version=4))
