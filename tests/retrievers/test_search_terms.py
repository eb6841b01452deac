"""Search terms beside a description: words a filing would print, ranked as a second query and fused."""

from __future__ import annotations

import numpy as np
import pytest

from retrievers.documents.chunking import Chunk
from retrievers.embedding.embedders import HashingEmbedder
from retrievers.indexing.document_index import DocumentIndex, fuse_terms

CHUNKS = [
    Chunk("Capital expenditure strategy\nWe expect capital expenditure to grow with our plans.", 10, 10),
    Chunk("Risk factors\nOur capital plans depend on markets.", 12, 12),
    Chunk(
        "Consolidated Statements of Cash Flows\n(In millions)\n2022 2021\n"
        "Purchases of property and equipment (5,207) (4,625)",
        64,
        64,
    ),
    Chunk("Legal proceedings\nNone of significance.", 30, 30),
]


@pytest.fixture
def index():
    return DocumentIndex.build("d1", CHUNKS, HashingEmbedder(), content_hash="h", dense_chunks="all")


@pytest.mark.parametrize("mode", ["hybrid", "bm25", "dense"])
def test_terms_a_filing_prints_lift_the_statement_row(index, mode):
    query = "capital expenditure"
    terms = ["Purchases of property and equipment", "statement of cash flows"]

    def rank_of_row(**kw):
        return [p.page for p in index.search(query, k=4, mode=mode, **kw)].index(64)

    before, after = rank_of_row(), rank_of_row(terms=terms)
    assert before >= 2  # the description alone prefers the prose that repeats its words
    assert after < before and after <= 1, (before, after)
    if mode != "hybrid":  # one side ranked by itself: the row that prints the terms leads
        assert after == 0


def test_no_terms_or_blank_terms_change_nothing(index):
    plain = index.ranked("capital expenditure")
    for terms in (None, [], ["", "  "]):
        assert np.array_equal(index.ranked("capital expenditure", terms=terms), plain)


def test_fuse_terms_keeps_both_rankings_and_leaves_unmatched_chunks_out():
    description = np.array([3.0, 0.0, 1.0, 0.0])
    terms = np.array([0.0, 0.0, 2.0, 0.0])
    fused = fuse_terms(description, terms)
    assert fused[2] > fused[0] > fused[1] == fused[3] == 0.0
