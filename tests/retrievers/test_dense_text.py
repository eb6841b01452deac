"""What the embedder reads: chunks that state figures, without the figures; everything else is BM25's."""

from __future__ import annotations

import json

import faiss
import numpy as np
import pytest

from retrievers.documents.chunking import Chunk
from retrievers.embedding.dense_text import chosen, dense_text
from retrievers.embedding.embedders import HashingEmbedder
from retrievers.indexing.document_index import DocumentIndex

STATEMENT = Chunk(
    "Consolidated Statements of Cash Flows\n(In millions)\nDecember 31, 2022, 2021\n"
    "Purchases of property and equipment (5,207) (4,625)\nProceeds from sales of investments 1,204 $ 1,077",
    64,
    64,
)
PROSE = Chunk("Risk factors\nOur capital plans depend on markets and on the cost of capital.", 12, 12)
QUOTING = Chunk(
    "Revenue\nRevenue was $296,170 thousand in fiscal 2022,\nand other revenue was $15,235 thousand.", 20, 20
)
NUMBERS_ONLY = Chunk("1,234 5,678\n(12.5%) 3.4", 30, 30)
CHUNKS = [PROSE, STATEMENT, QUOTING, NUMBERS_ONLY]


def test_figures_go_years_and_words_stay():
    assert dense_text(STATEMENT.text) == (
        "Consolidated Statements of Cash Flows\n(In millions)\nDecember 2022, 2021\n"  # a day is a number too
        "Purchases of property and equipment\nProceeds from sales of investments"
    )
    assert dense_text("FY2023 资本充足率 ≥10.75 13.11 2024年") == "FY2023 资本充足率 ≥10.75 2024年"
    assert dense_text("Net loss (10.9%) — (1)") == "Net loss"
    assert dense_text(NUMBERS_ONLY.text) == ""


def test_figures_policy_picks_chunks_stating_amounts_all_picks_any_with_words():
    texts = [c.text for c in CHUNKS]
    assert chosen(texts, "figures") == [1, 2]  # the statement and the prose quoting two amounts
    assert chosen(texts, "all") == [0, 1, 2]  # a chunk of bare numbers leaves nothing to read
    with pytest.raises(ValueError, match="use one of figures, all"):
        chosen(texts, "tables")


class RecordingEmbedder(HashingEmbedder):
    def __init__(self):
        self.read: list[str] = []

    def encode(self, texts):
        self.read += texts
        return super().encode(texts)


def test_index_embeds_the_chosen_chunks_and_ranks_the_rest_by_bm25(tmp_path):
    embedder = RecordingEmbedder()
    index = DocumentIndex.build("d", CHUNKS, embedder)
    assert embedder.read == [dense_text(STATEMENT.text), dense_text(QUOTING.text)]
    assert index.embedded.tolist() == [1, 2] and index.meta["embedded"] == 2
    assert index.meta["dense_chunks"] == "figures" and index.meta["dense_text"] == 1

    dense = index.ranked("capital plans", mode="dense")
    assert dense[0] == dense[3] == -1.0 and min(dense[1], dense[2]) > -1.0  # no vector, no dense score
    # hybrid: the prose chunk is found by BM25 alone, ahead of chunks that share no word with the query
    assert index.search("capital plans markets", k=1)[0].page == 12

    index.save(tmp_path / "d")
    loaded = DocumentIndex.load(tmp_path / "d")
    assert loaded.embedded.tolist() == [1, 2]
    for query in ("purchases of property", "capital plans", "revenue"):
        assert loaded.search(query, k=4) == index.search(query, k=4)


def test_a_document_with_nothing_to_embed_searches_by_bm25(tmp_path):
    index = DocumentIndex.build("d", [PROSE], HashingEmbedder())
    assert index.has_dense and index.embedded.size == 0
    assert index.search("capital plans", k=1)[0].page == 12
    assert index.ranked("capital plans", mode="dense").tolist() == [-1.0]
    index.save(tmp_path / "d")
    assert DocumentIndex.load(tmp_path / "d").search("capital plans", k=1)[0].page == 12


def test_an_index_built_before_reads_every_chunk_and_the_query_whole(tmp_path):
    """Indexes from before dense_text.py: a plain IndexFlatIP over every chunk's printed text."""
    embedder = HashingEmbedder()
    index = DocumentIndex.build("d", CHUNKS, embedder)
    index.save(tmp_path / "d")
    flat = faiss.IndexFlatIP(embedder.dim)
    flat.add(embedder.encode([c.text for c in CHUNKS]))
    faiss.write_index(flat, str(tmp_path / "d" / "dense.faiss"))
    meta = json.loads((tmp_path / "d" / "meta.json").read_text())
    for key in ("dense_chunks", "dense_text", "embedded"):
        del meta[key]
    (tmp_path / "d" / "meta.json").write_text(json.dumps(meta))

    old = DocumentIndex.load(tmp_path / "d")
    assert old.embedded.tolist() == [0, 1, 2, 3]
    query = "Total 1,204 investments"
    assert np.allclose(old.query_vector(query), embedder.encode([query])[0])  # read whole, as it was built
    assert old.ranked(query, mode="dense").min() > -1.0  # every chunk has a dense score
    assert old.search("purchases of property", k=1)[0].page == 64


def test_a_table_of_amounts_under_a_thousand_is_a_figure_chunk():
    """A filer reporting in millions prints "758" and "19": its revenue table is one the embedder reads (it
    was not: only 1,234-like amounts counted, so on the synthetic corpus such tables had no dense vote and
    prose quoting percentages outranked them in the fusion)."""
    ruled = (
        "Note 3 - Revenue Recognition\nFiscal 2021 | Product revenue | 758\nFiscal 2021 | Other revenue | 19"
    )
    unruled = "Revenue by source\nProduct revenue 758 683\nOther revenue 19 50"
    notes = "Note 3 - Revenue Recognition\nItem 7 discusses the results of 2021 and 2020."
    assert chosen([ruled, unruled, notes], "figures") == [0, 1]
