"""One text vocabulary: the normalizer (programs/stages/units.py) and the scorer (evaluate/matching/cells.py,
evaluate/matching/quantities.py) read not-disclosed words, yes/no words, lists, scales, full-width text and
month names the same way; the scorer's extra words stay the scorer's."""

import pytest

from evaluate.matching import cells, quantities
from evaluate.matching.cells import SCORER_FALSE_WORDS, SCORER_TRUE_WORDS, compare_cell
from evaluate.matching.quantities import find_dates, find_quantities, fold, parse_date_value
from programs.stages import units
from programs.stages.units import parse_value
from signatures import vocabulary
from signatures.types import FieldSpec
from signatures.vocabulary import (
    EN_SCALES,
    FALSE_WORDS,
    NOT_DISCLOSED,
    SCALE_LETTERS,
    TRUE_WORDS,
    ZH_SCALES,
    month_number,
)


def normalized(raw, type_="number", unit="CNY"):
    return parse_value(raw, None, FieldSpec(name="x", description="x", type=type_, unit=unit))


def scored(text):
    """The first quantity the scorer reads in a free-text answer."""
    folded = fold(text)
    return find_quantities(folded, [(d.start, d.end) for d in find_dates(folded)])[0]


def test_both_sides_use_the_one_vocabulary():
    assert units.is_not_disclosed is cells.is_not_disclosed is vocabulary.is_not_disclosed
    assert quantities.fold is vocabulary.fold  # final_match, gold_facts, question_traits import it from here
    assert units.list_items is cells.list_items is vocabulary.list_items


VARIANTS = {"Not stated.", "ＮＯＴ ＳＴＡＴＥＤ", " 未披露。", "N/A"}  # case, full width, spaces, full stops


@pytest.mark.parametrize("word", sorted(NOT_DISCLOSED | VARIANTS))
def test_not_disclosed_reads_the_same_on_both_sides(word):
    # Before the shared vocabulary, the normalizer kept "无" and the scorer did not know "not stated".
    parsed = normalized(word)
    assert parsed.ok and parsed.value is None
    assert compare_cell("value_donation_cny", None, word) == (True, "gold: not disclosed")
    assert compare_cell("value_donation_cny", 1.0, word) == (False, "not extracted")


YES_NO = [(w, True) for w in sorted(TRUE_WORDS)] + [(w, False) for w in sorted(FALSE_WORDS)]


@pytest.mark.parametrize(("word", "expected"), YES_NO)
def test_yes_no_words_read_the_same_on_both_sides(word, expected):
    # Before, "已", "存在", "对", "不存在", "不", "t", "f" were read by the normalizer only.
    assert normalized(word, "boolean", "none").value is expected
    assert compare_cell("value_assured", expected, word)[0] is True
    assert compare_cell("value_assured", not expected, word)[0] is False


def test_wu_is_no_on_a_yes_no_field_and_not_disclosed_elsewhere():
    assert normalized("无", "boolean", "none").value is False
    assert compare_cell("value_assured", False, "无")[0] is True
    assert normalized("无", "string", "none").value is None
    assert compare_cell("value_org_name", "安永", "无") == (False, "not extracted")


SCORER_ONLY = (SCORER_TRUE_WORDS - TRUE_WORDS) | (SCORER_FALSE_WORDS - FALSE_WORDS)


@pytest.mark.parametrize("word", sorted(SCORER_ONLY))
def test_scorer_only_yes_no_words_stay_scorer_only(word):
    assert word not in TRUE_WORDS | FALSE_WORDS
    expected = word in SCORER_TRUE_WORDS
    assert compare_cell("value_assured", expected, word)[0] is True
    parsed = normalized(word, "boolean", "none")
    if word in NOT_DISCLOSED:  # "未披露", "不适用": the document did not answer; the normalizer keeps null
        assert parsed.ok and parsed.value is None
    else:  # "已审验", "遵循": the normalizer's LM reads these with the field's question
        assert not parsed.ok


def test_lists_split_the_same_on_both_sides():
    text = "普华永道、德勤，安永; KPMG and EY/ＢＤＯ"
    items = ["普华永道", "德勤", "安永", "KPMG", "EY", "BDO"]
    assert normalized(text, "list", "none").value == items
    assert compare_cell("value_auditors", items, text)[0] is True
    assert compare_cell("value_auditors", items[:-1], text) == (False, "extra ['bdo']")
    # Only None and blanks are empty items; a 0 is kept.
    assert normalized(["0", 0, None, " "], "list", "none").value == ["0", "0"]


@pytest.mark.parametrize("word", sorted(ZH_SCALES))
def test_chinese_scales_agree(word):
    factor = ZH_SCALES[word]
    assert normalized(f"2.5{word}元").value == pytest.approx(2.5 * factor)
    for written in (f"2.5{word}元", f"2.5{word}"):
        quantity = scored(written)
        assert quantity.value == pytest.approx(2.5 * factor)
        assert (quantity.kind, quantity.text) == ("money", written)


@pytest.mark.parametrize("word", sorted(EN_SCALES) + sorted(SCALE_LETTERS))
def test_english_scales_agree(word):
    factor = EN_SCALES.get(word) or SCALE_LETTERS[word]
    written = f"$2.5{word.upper()}" if word in SCALE_LETTERS else f"$2.5 {word}"
    assert normalized(written, unit="USD").value == pytest.approx(2.5 * factor)
    assert scored(written).value == pytest.approx(2.5 * factor)


def test_full_width_text_is_folded_on_both_sides():
    assert normalized("１２．５％", "percent", "percent").value == pytest.approx(12.5)
    assert scored("１２．５％").value == pytest.approx(0.125)
    assert normalized("  上海市\n　浦东新区 ", "string", "none").value == "上海市 浦东新区"


@pytest.mark.parametrize("month", range(1, 13))
def test_month_names_agree(month):
    name = vocabulary.MONTH_NAMES[month - 1].capitalize()
    assert month_number(name) == month_number(name[:3] + ".") == month
    assert normalized(f"{name} 5, 2022", "date", "date").value == f"2022-{month:02d}-05"
    assert parse_date_value(f"{name} 5, 2022") == (2022, month, 5)


def test_the_scorer_reads_only_full_month_names_in_free_text():
    # A value field holds one date, so the normalizer reads "Sept."; in free text "Mar", "may" mean other things.
    assert normalized("Sept. 12, 2023", "date", "date").value == "2023-09-12"
    assert parse_date_value("Sept. 12, 2023") is None
