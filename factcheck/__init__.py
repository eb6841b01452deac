"""The fact check: is a fact's quote on its page, and does the quote print its value.

A package of its own (not in retrievers/) because it is neither retrieval nor an LM stage: the
extractor, the scorer and the audit report all ask it the same questions. It reads text with the
shared vocabulary (signatures.vocabulary), so "not disclosed" means the same thing everywhere.
"""
