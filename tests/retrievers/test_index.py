"""DocumentIndex: hybrid search, the three modes, save/load round trip, format version check."""

from __future__ import annotations

import json

import numpy as np
import pytest

from retrievers.documents.chunking import Chunk
from retrievers.embedding.embedders import HashingEmbedder
from retrievers.indexing.document_index import DocumentIndex, IndexVersionError, rrf

CHUNKS = [
    Chunk("公司简介\n本公司成立于1998年。", 1, 1),
    Chunk("主要会计数据\n2022年 | 资本充足率 | 15.44%", 3, 3, kind="table"),
    Chunk("Item 8\nTotal assets $ 1,234,567", 5, 6),
    Chunk("风险管理\n信用风险总体可控。", 7, 7),
]


@pytest.fixture
def index():
    return DocumentIndex.build("d1", CHUNKS, HashingEmbedder(), content_hash="h", dense_chunks="all")


def test_rrf_rewards_agreement():
    fused = rrf([np.array([0, 1, 2]), np.array([1, 0])], 3)
    assert fused[0] == fused[1] > fused[2]
    assert rrf([np.array([2])], 3, weights=[2.0])[2] == pytest.approx(2 / 61)


def test_each_mode_finds_the_table_value(index):
    for mode in ("hybrid", "dense", "bm25"):
        top = index.search("资本充足率", k=2, mode=mode)
        assert top[0].page == 3 and "15.44%" in top[0].text, mode
        assert top[0].score >= top[1].score
    passage = index.search("total assets", k=1)[0]
    assert (passage.doc_id, passage.page, passage.page_end) == ("d1", 5, 6)
    with pytest.raises(ValueError, match="unknown search mode"):
        index.search("x", mode="magic")


def test_save_load_round_trip_and_version_check(index, tmp_path):
    index.save(tmp_path / "d1")
    loaded = DocumentIndex.load(tmp_path / "d1")
    assert loaded.chunks == CHUNKS and loaded.meta["content_hash"] == "h"
    for query in ("资本充足率", "total assets", "信用风险"):
        assert loaded.search(query, k=4) == index.search(query, k=4)
    meta = json.loads((tmp_path / "d1" / "meta.json").read_text())
    meta["format_version"] = 0
    (tmp_path / "d1" / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(IndexVersionError, match="format version 0.*rebuild"):
        DocumentIndex.load(tmp_path / "d1")


def test_a_document_without_text_cannot_be_indexed():
    with pytest.raises(ValueError, match="no text chunks"):
        DocumentIndex.build("empty", [], HashingEmbedder())


def test_dense_side_counts_less_on_chinese_queries():
    from retrievers.indexing.document_index import DENSE_WEIGHT_EN, DENSE_WEIGHT_ZH, dense_weight

    assert dense_weight("资本充足率。") == DENSE_WEIGHT_ZH < DENSE_WEIGHT_EN == dense_weight("total assets.")
    assert dense_weight("是否使用或参照 GRI 标准。") == DENSE_WEIGHT_ZH


def test_a_questions_instructions_do_not_rank_chunks():
    # "analyst" and "internet" are the preamble's words; only the forward-looking chunk and the network
    # chunk print them, while the answer is in the cash flow statement
    chunks = [
        Chunk(
            "Forward-looking statements\nAnalysts and investors should not rely on internet forecasts.", 1, 1
        ),
        Chunk("Network\nOur internet connection business grew; analyst days were held.", 2, 2),
        Chunk("Consolidated Statements of Cash Flows\nCapital expenditures (5,207) (4,625)", 3, 3),
    ]
    index = DocumentIndex.build("d2", chunks, None)
    question = "What were capital expenditures in 2022?"
    wrapped = (
        "Answer as if you are an equity research analyst who lost internet connection. "
        + question
        + " Round your answer to two decimal places."
    )
    for mode in ("bm25", "hybrid"):
        assert np.array_equal(index.ranked(wrapped, mode), index.ranked(question, mode))
        assert index.search(wrapped, k=1, mode=mode)[0].page == 3


def test_a_chunks_heading_path_is_searched_as_its_own_field(tmp_path):
    # the answer sits under "Item 3. Legal Proceedings" without printing it; its text and the decoy's each
    # share one word with the question ("claims", "legal"): only the heading tells them apart
    chunks = [
        Chunk(
            "Risk Factors\nChanges in laws could raise our costs of compliance and of legal advice.",
            4,
            4,
            section="Risk Factors",
            path="PART I > Item 1A. Risk Factors",
        ),
        Chunk(
            "Environmental Matters\nWe are named in claims about former waste sites; none is material.",
            9,
            9,
            section="Environmental Matters",
            path="PART I > Item 3. Legal Proceedings > Environmental Matters",
        ),
    ]
    chunks += [  # other sections: the words of the question are rare, as in a filing
        Chunk(
            f"{title}\nWe describe {title.lower()} here.",
            10 + n,
            10 + n,
            section=title,
            path=f"PART I > {title}",
        )
        for n, title in enumerate(["Item 1. Business", "Item 2. Properties", "Seasonality", "Competition"])
    ]
    index = DocumentIndex.build("d3", chunks, None)
    query = "Is the company party to any legal proceedings or claims?"
    assert index.search(query, k=1, mode="bm25")[0].page == 9
    index.save(tmp_path / "d3")
    assert DocumentIndex.load(tmp_path / "d3").search(query, k=1)[0].page == 9
    index.headings = None  # an index built before heading paths: the text alone cannot tell them apart
    scores = index.ranked(query, "bm25")
    assert scores[0] == scores[1] > 0
