"""Embedding: the table of embedders (MiniLM, its int8 ONNX form, a hashing one for tests) and what they read."""
