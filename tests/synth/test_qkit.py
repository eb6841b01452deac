"""The question building blocks on hand-made values: ties, ordering, pairing across years, ids."""

from __future__ import annotations

import hashlib
import json

from data.synth.qkit import Doc, growth, item, most_common, pair_docs, top, year_pairs


def _doc(symbol: str, year: int, doctype: str = "A股年报", **gold) -> Doc:
    return Doc(f"{symbol}-{year}", symbol, year, doctype, gold)


def test_top_keeps_everyone_tied_with_the_kth_and_orders_best_first_then_symbol():
    scores = {"B": 5.0, "A": 5.0, "C": 3.0, "D": 3.0, "E": 1.0}
    assert top(scores, 1) == ["A", "B"]
    assert top(scores, 3) == ["A", "B", "C", "D"]
    assert top(scores, 2, highest=False) == ["E", "C", "D"]
    assert top(scores, 10) == ["A", "B", "C", "D", "E"]
    assert top({}, 3) == []


def test_most_common_returns_every_tied_value_in_first_seen_order():
    best, n = most_common({"A": ["x", "y"], "B": ["x"], "C": ["x", "y"], "D": ["x"], "E": ["z"]})
    assert (best, n) == ([["x", "y"], ["x"]], 2)


def test_growth_is_relative_to_the_absolute_earlier_value_and_none_from_zero():
    assert growth(110.0, 100.0) == 0.1
    assert growth(-50.0, -100.0) == 0.5  # a smaller loss is growth
    assert growth(5.0, 0.0) is None


def test_year_pairs_match_companies_across_the_first_two_years_only():
    groups = {
        ("A股年报", 2021): [_doc("A", 2021), _doc("B", 2021)],
        ("A股年报", 2022): [_doc("B", 2022), _doc("C", 2022)],
        ("A股年报", 2023): [_doc("A", 2023)],
    }
    pairs = year_pairs(groups, "A股年报", [2021, 2022, 2023])
    assert [(a.id, b.id) for a, b in pairs] == [("B-2021", "B-2022")]
    assert [d.id for d in pair_docs(pairs)] == ["B-2021", "B-2022"]
    assert year_pairs(groups, "A股年报", [2021]) == []
    assert year_pairs(groups, "A股ESG报告", [2021, 2022]) == []


def test_item_rows_carry_identity_values_schema_and_a_stable_id():
    docs = [_doc("A", 2021, value_net_profit_cny=1.5), _doc("B", 2021, value_net_profit_cny=2.5)]
    q = item("问题", docs, ["value_net_profit_cny"], ["a", "b"], "答案")
    assert q["metadata"][1] == {
        "symbol": "B",
        "year": 2021,
        "value_net_profit_cny": 2.5,
        "schema": {"value_net_profit_cny": "净利润。"},
        "id": "B-2021",
        "doctype": "A股年报",
    }
    blob = json.dumps({"question": "问题", "metadata": q["metadata"]}, sort_keys=True)
    assert q["question_id"] == "q_" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]
    assert item("问题?", docs, ["value_net_profit_cny"], [], "")["question_id"] != q["question_id"]
