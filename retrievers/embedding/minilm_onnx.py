"""all-MiniLM-L6-v2 run by onnxruntime: our torch forward pass (minilm.py) exported once to ONNX.

Why: on CPUs without bfloat16 instructions the float32 torch pass was the floor of a real-filings
build (~72 CPU ms per 840-character chunk); onnxruntime runs the same graph for less (figures in
retrievers/embedding.py). The graph is exported from the packaged weights at first use into a cache
folder (nothing is downloaded) and reused by every later process; the tokenizer, batching and pooling
are minilm.py's.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from pathlib import Path

import numpy as np

from retrievers.embedding.minilm import MAX_TOKENS, encode_batched, load_tokenizer
from signatures import environment

OPSET = 17


def cache_dir() -> Path:
    """COLLATE_CACHE_DIR if set, else $XDG_CACHE_HOME/collate, else ~/.cache/collate. (Not COLLATE_CACHE:
    that is the LM cache's yes/no setting.)"""
    root = environment.read("COLLATE_CACHE_DIR") or os.path.join(
        environment.read("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "collate"
    )
    return Path(root) / "minilm-onnx"


def _graph_path(model_dir: Path, variant: str) -> Path:
    import onnxruntime

    weights = model_dir / "model.safetensors"
    stat = weights.stat()
    # a new package version, weights file or exporter code gets a new graph, never a stale one
    key = f"{weights.resolve()}|{stat.st_size}|{stat.st_mtime_ns}|{OPSET}|{onnxruntime.__version__}"
    return cache_dir() / f"all-MiniLM-L6-v2-{variant}-{hashlib.sha256(key.encode()).hexdigest()[:16]}.onnx"


def export(model_dir: Path, path: Path) -> None:
    """Trace minilm.MiniLM (float32) to ONNX with dynamic batch and sequence axes; atomic write."""
    import torch

    from retrievers.embedding.minilm import MiniLM

    model = MiniLM(model_dir, dtype=torch.float32)

    class Pooled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            # registered, the weights export as initializers (not Constant nodes), which is what
            # quantize_dynamic looks for; the same tensor objects, so tracing model.w finds them
            for i, (name, tensor) in enumerate(model.w.items()):
                self.register_buffer(f"w{i}_{name.replace('.', '_')}", tensor)

        def forward(self, ids, mask):
            return model._encode_batch(ids, mask)

    ids = torch.tensor([[101, 2000, 2001, 102], [101, 2000, 102, 0]], dtype=torch.long)
    mask = (ids != 0).long()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".onnx.part", dir=path.parent)
    os.close(fd)
    try:
        with torch.inference_mode():
            torch.onnx.export(
                Pooled(),
                (ids, mask),
                tmp,
                input_names=["input_ids", "attention_mask"],
                output_names=["pooled"],
                dynamic_axes={
                    "input_ids": {0: "batch", 1: "length"},
                    "attention_mask": {0: "batch", 1: "length"},
                },
                opset_version=OPSET,
                dynamo=False,
            )
        os.replace(tmp, path)  # concurrent build workers: each writes its own file, the last rename wins
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


class _QuantizerAdvice(logging.Filter):
    """onnxruntime's quantizer logs "Please consider to run pre-processing before quantization" on the
    root logger (logging.warning), where the quiet level the commands give the "onnxruntime" logger cannot
    reach it: a fresh clone's first `collate demo` printed it in the middle of the build. It is dropped
    while that logger is quiet (the default); -v lets it through."""

    def filter(self, record: logging.LogRecord) -> bool:
        from_quantizer = record.name == "root" and f"onnxruntime{os.sep}quantization" in record.pathname
        return not from_quantizer or logging.getLogger("onnxruntime").getEffectiveLevel() <= record.levelno


@contextlib.contextmanager
def quantizer_advice_quiet():
    advice = _QuantizerAdvice()
    logging.getLogger().addFilter(advice)
    try:
        yield
    finally:
        logging.getLogger().removeFilter(advice)


def quantize(fp32: Path, path: Path) -> None:
    """Dynamic int8 weights, per output channel, 7-bit range; atomic write.

    Why these options (measured, retrievers/embedding.py): plain per-tensor int8 drifted to cosine 0.95
    (min 0.91) of float32 on real 10-K chunks; per channel with reduce_range (AVX2 without VNNI
    saturates u8*s8 products in full range) holds >= 0.99.
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    fd, tmp = tempfile.mkstemp(suffix=".onnx.part", dir=path.parent)
    os.close(fd)
    # quantize_dynamic writes "<input>-inferred.onnx" beside its input and deletes it after: two build
    # workers quantizing at once shared that file (one read it half written or after the other deleted
    # it: DecodeError / FileNotFoundError, and a fall back to torch). Each reads a private link instead.
    with tempfile.TemporaryDirectory(dir=path.parent) as private:
        source = Path(private) / "fp32.onnx"
        os.link(fp32, source)
        try:
            with quantizer_advice_quiet():
                quantize_dynamic(
                    str(source), tmp, per_channel=True, reduce_range=True, weight_type=QuantType.QInt8
                )
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)


def graph_for(model_dir: Path, int8: bool) -> Path:
    """The cached graph (float32 or int8), exported/quantized now if missing."""
    fp32 = _graph_path(model_dir, "fp32")
    if not fp32.exists():
        export(model_dir, fp32)
    if not int8:
        return fp32
    path = _graph_path(model_dir, "int8")
    if not path.exists():
        quantize(fp32, path)
    return path


class MiniLMOnnx:
    def __init__(
        self,
        model_dir: str | Path,
        int8: bool = True,
        max_tokens: int = MAX_TOKENS,
        threads: int = 1,
        graph: Path | None = None,
    ):
        import onnxruntime

        model_dir = Path(model_dir)
        path = graph or graph_for(model_dir, int8)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self.tokenizer = load_tokenizer(model_dir, max_tokens)
        self.dim = self.session.get_outputs()[0].shape[-1]
        self.graph = path

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self.session.run(None, {"input_ids": ids, "attention_mask": mask})[0]

    def encode(self, texts: list[str], batch_size: int = 16) -> np.ndarray:
        """Unit-length float32 rows, in input order."""
        return encode_batched(self.tokenizer, texts, batch_size, self.dim, self._forward)
