"""The real packaged MiniLM: loads offline, unit vectors, and ranks an English passage by meaning."""

from __future__ import annotations

import numpy as np

from retrievers.chunking import Chunk
from retrievers.embedding import MiniLMEmbedder
from retrievers.index import DocumentIndex


def test_minilm_embeds_and_drives_dense_search():
    embedder = MiniLMEmbedder()
    vectors = embedder.encode(["total assets", "balance sheet total"])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    chunks = [
        Chunk("The company was founded in 1998 in Texas.", 1, 1),
        Chunk("Our employees enjoy health benefits and pension plans.", 2, 2),
        Chunk("Consolidated balance sheet: the sum of all assets held at year end.", 3, 3),
    ]
    index = DocumentIndex.build("d", chunks, embedder)
    assert index.search("total assets", k=1, mode="dense")[0].page == 3
    assert index.search("staff welfare", k=1, mode="dense")[0].page == 2
