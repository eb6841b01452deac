"""Parsing, chunking, embeddings, per-document indexes and the catalog. No LM here."""

import signatures  # noqa: F401  (sets the offline defaults before transformers can be imported)
