"""Finding a quote in a page: folded exactly, then fuzzily; the match points at the page's own words."""

from factcheck.quotes import FUZZY_THRESHOLD, MIN_FUZZY_CHARS, fold, locate, score


def test_fold_removes_layout_and_width():
    assert fold("（１，２３４）％") == "(1,234)%"
    assert fold("资本充足率\n 15.44%") == fold("资本充足率15.44%")
    assert fold("2022年 | 资本充足率 | 15.44%") == "2022年资本充足率15.44%"
    assert fold("Cash and cash equivalents.......... $ 876,560") == "cashandcashequivalents$876,560"
    assert fold("Firm’s “net” revenue – 2022") == 'firm\'s"net"revenue-2022'
    assert fold("2.5 million") == "2.5million"  # a decimal point is not a leader


def test_exact_match_spans_the_original_text():
    page = "主要会计数据\n2022年 | 资本充足率 | 15.44%\n2021年 | 资本充足率 | 14.80%\n"
    match = locate("资本充足率  15.44％", page)
    assert match is not None and match.score == 100.0
    assert match.text == "资本充足率 | 15.44%"
    assert page[match.start : match.end] == match.text


def test_quote_over_a_line_break_is_found():
    page = "The Company repurchased 1,200,000 shares\nfor $45.6 million during the quarter."
    assert locate("repurchased 1,200,000 shares for $45.6 million", page).score == 100.0


def test_a_word_the_text_layer_split_is_found_fuzzily():
    page = "ending the first quarter of 2021 at $66.56, up 10% versus the prior year (the Firm s TBVPS)"
    quote = "the Firm's TBVPS"
    match = locate(quote, page)
    assert match is not None and FUZZY_THRESHOLD <= match.score < 100
    assert "TBVPS" in match.text


def test_short_quotes_must_match_exactly():
    page = "资本充足率 13.96%"
    assert len(fold("充足率13.95%")) < MIN_FUZZY_CHARS
    assert locate("充足率13.95%", page) is None  # one digit off: another number, never "close enough"
    assert locate("充足率13.96%", page) is not None


def test_a_reworded_quote_is_not_found():
    page = "2022年 | 资本充足率 | 13.96%\n2022年 | 核心一级资本充足率 | 10.12%"
    reworded = "根据公司披露的信息，本报告期内资本充足率最终达到了13.96%，与上一年度相比有所变化"
    assert locate(reworded, page) is None
    assert score(reworded, page) < FUZZY_THRESHOLD


def test_empty_quote_or_page_finds_nothing():
    assert locate("", "text") is None
    assert locate("   \n", "text") is None
    assert locate("quote", "") is None
