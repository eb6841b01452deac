"""The BM25 side: Chinese without spaces, English plurals, unknown query terms."""

from __future__ import annotations

from retrievers.indexing.lexical import JIEBA, NGRAM, LexicalIndex, tokenize


def test_tokenizer_handles_chinese_english_and_numbers():
    assert tokenize("资本充足率") == ["资", "本", "充", "足", "率", "资本", "本充", "充足", "足率"]
    assert tokenize("Total assets of $1,234,567.") == ["total", "asset", "1234567"]
    assert tokenize("率") == ["率"]
    assert "资本充足率" in tokenize("资本充足率为15.44%", JIEBA) or "充足率" in tokenize(
        "资本充足率为15.44%", JIEBA
    )


def test_bm25_ranks_the_chunk_that_shares_the_terms():
    texts = [
        "营业收入稳步增长",
        "2022年 | 资本充足率 | 15.44%",
        "Total liabilities $ 765,432",
        "Total assets $ 1,234,567",
    ]
    for method in (NGRAM, JIEBA):
        index = LexicalIndex.build(texts, method)
        assert int(index.scores("资本充足率。").argmax()) == 1
        assert int(index.scores("total assets.").argmax()) == 3
        assert not index.scores("完全无关 zebra").any()  # unknown terms score nothing, never raise


def test_stemming_meets_word_forms_in_the_middle():
    assert tokenize("operating revenues") == tokenize("operations revenue")
    assert tokenize("Total liabilities") == tokenize("total liability")
    assert tokenize("expenses") == tokenize("expense")
