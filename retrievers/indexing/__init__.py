"""The per-document index (FAISS + BM25, fused) and the store that opens an index folder and searches it."""
