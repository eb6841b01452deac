"""The coverage line: each document named once with its reasons; records read in different units flagged."""

from __future__ import annotations

from programs.stages.coverage import UNIT_GAP, coverage_of, unit_mismatches
from signatures.types import Document, Fact

US, A = "US Stock Annual Report", "A股年报"


def doc(doc_id: str, symbol: str, doctype: str = US) -> Document:
    return Document(id=doc_id, symbol=symbol, year=2022, doctype=doctype, language="en")


def fact(doc_id: str, name: str, verdict: str = "verified") -> Fact:
    return Fact(doc_id=doc_id, field=name, value="1", quote="q", page=1, verdict=verdict)


def record(doc_id: str, symbol: str, value: float, doctype: str = US, name: str = "total_assets") -> dict:
    return {"id": doc_id, "symbol": symbol, "year": 2022, "doctype": doctype, name: value}


def test_a_document_with_several_unverified_facts_is_named_once_with_each_reason_once():
    documents = {"d1": doc("d1", "DUNM"), "d2": doc("d2", "FARR")}
    facts = [
        fact("d1", "total_assets", "quote_not_found"),
        fact("d1", "revenue", "quote_not_found"),
        fact("d1", "net_income", "value_not_in_quote"),
        fact("d2", "total_assets"),
    ]
    line = coverage_of(documents, facts, []).line("Which company grew fastest?")
    assert line.count("DUNM") == 1, line
    assert "1 unverified: DUNM (quote not found, value not in quote)" in line


def test_a_group_of_records_1000x_off_the_rest_of_its_doctype_is_named():
    records = [record(f"d{i}", f"S{i}", v) for i, v in enumerate([2.1e9, 3.4e9, 5.0e9, 8.8e9, 1.2e10])]
    records.append(record("slip", "DUNM", 4.96e6))  # a table "in thousands" read as units
    (found,) = unit_mismatches(records)
    assert found["doc_ids"] == ["slip"] and found["side"] == "below" and found["others"] == 5
    assert 500 < found["ratio"] < 2000
    line = coverage_of({r["id"]: doc(r["id"], r["symbol"]) for r in records}, [], [], records=records).line(
        "Total assets?"
    )
    assert "units differ: total_assets of DUNM ~1,000x below the other 5" in line, line


def test_companies_of_every_size_are_not_a_unit_slip():
    # 10 companies spread over a 1,000x range with no empty stretch: each neighbour is < 3x the last
    sizes = [1e8 * 2.2**i for i in range(10)]
    assert max(sizes) / min(sizes) > 1000
    assert unit_mismatches([record(f"d{i}", f"S{i}", v) for i, v in enumerate(sizes)]) == []


def test_doctypes_are_compared_only_with_themselves_and_identity_fields_never():
    records = [record(f"u{i}", f"U{i}", 3e9 + i) for i in range(3)]
    records += [record(f"a{i}", f"60000{i}", 3e12 + i, doctype=A) for i in range(3)]  # 元, not USD
    assert unit_mismatches(records) == []


def test_the_threshold_sits_between_natural_spread_and_a_slip():
    low = [record("a", "A", 1.0), record("b", "B", 1.1)]
    assert unit_mismatches([*low, record("c", "C", UNIT_GAP * 1.1 * 0.99)]) == []
    (found,) = unit_mismatches([*low, record("c", "C", UNIT_GAP * 1.1 * 1.01)])
    assert found["symbols"] == ["C"] and found["side"] == "above"


def test_the_chinese_line_says_it_in_chinese():
    records = [record(f"d{i}", f"00000{i}", 1.5e11 * (i + 1), doctype=A) for i in range(4)]
    records.append(record("x", "601825", 1.5e15, doctype=A))  # 万元 read as 元 the other way
    documents = {r["id"]: doc(r["id"], r["symbol"], A) for r in records}
    line = coverage_of(documents, [], [], records=records).line("哪家银行总资产最高？")
    assert "单位存疑：601825的total_assets约为其余4份的" in line and line.endswith("。")
