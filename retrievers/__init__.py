"""Parsing, chunking, embeddings, per-document indexes and the catalog. No LM here."""

import os

# The embedder ships inside a pip package; never let transformers reach for a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
