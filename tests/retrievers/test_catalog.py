"""Catalog: loads the three formats, never reads gold, answers the planner's questions, persists to SQLite."""

from __future__ import annotations

import json

import pytest

from retrievers.catalog import Catalog, CatalogError
from signatures.types import Restriction


def _dataset(tmp_path):
    rows = [
        {
            "id": "a",
            "symbol": 600000,
            "year": 2022,
            "doctype": "A股年报",
            "schema": {"value_x": "X"},
            "value_x": 1.5,
        },
        {"id": "b", "symbol": "AAPL", "year": "2021", "doctype": "US Stock Annual Report", "value_x": 2},
    ]
    items = [
        {"question_id": "q1", "question": "?", "metadata": rows, "source_answer": [], "final_answer": "1"},
        {
            "question_id": "q2",
            "question": "?",
            "metadata": [rows[0]],
            "source_answer": [],
            "final_answer": "2",
        },
    ]
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    return path


def test_dataset_json_gives_deduplicated_documents_without_gold(tmp_path):
    cat = Catalog.load(_dataset(tmp_path))
    assert [d.id for d in cat.documents()] == ["a", "b"]
    a = cat.get("a")
    assert a.symbol == "600000" and a.year == 2022 and a.language == "zh"
    assert cat.get("b").language == "en" and cat.get("b").year == 2021
    assert "value_x" not in a.model_dump() and "schema" not in a.model_dump()


def test_csv_and_jsonl_load_the_same_documents(tmp_path):
    (tmp_path / "c.csv").write_text(
        "id,symbol,year,doctype,language,path\nx,000001,2023,A股ESG报告,zh,sub/x.pdf\ny,MSFT,2022,US Stock Annual Report,,\n",
        encoding="utf-8",
    )
    rows = [
        {"id": "x", "symbol": "000001", "year": 2023, "doctype": "A股ESG报告", "path": "sub/x.pdf"},
        {"id": "y", "symbol": "MSFT", "year": 2022, "doctype": "US Stock Annual Report", "pages": 12},
    ]
    (tmp_path / "c.jsonl").write_text(
        "\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8"
    )
    from_csv, from_jsonl = Catalog.load(tmp_path / "c.csv"), Catalog.load(tmp_path / "c.jsonl")
    assert [(d.id, d.symbol, d.year, d.language, d.path) for d in from_csv.documents()] == [
        (d.id, d.symbol, d.year, d.language, d.path) for d in from_jsonl.documents()
    ]
    assert from_jsonl.get("y").pages == 12 and from_csv.get("y").language == "en"


@pytest.mark.parametrize(
    ("content", "name", "needle"),
    [
        ('{"id": "a", "symbol": "1", "doctype": "A股年报"}\n', "c.jsonl", "lacks year"),
        ('{"id": "a", "symbol": "1", "year": "last", "doctype": "A股年报"}\n', "c.jsonl", "not a number"),
        ("not json\n", "c.jsonl", "line 1 is not JSON"),
        ('{"a": 1}', "c.json", "not a MuDABench dataset"),
        ("id,symbol\n", "c.txt", "unknown catalog format"),
    ],
)
def test_bad_catalogs_name_the_fix(tmp_path, content, name, needle):
    (tmp_path / name).write_text(content, encoding="utf-8")
    with pytest.raises(CatalogError, match=needle):
        Catalog.load(tmp_path / name)


def test_select_distinct_summary_and_sqlite_round_trip(tmp_path):
    cat = Catalog.load(_dataset(tmp_path))
    assert [d.id for d in cat.select(Restriction(doctypes=["A股年报"]))] == ["a"]
    assert [d.id for d in cat.select(Restriction(years=[2021, 2022], symbols=["AAPL"]))] == ["b"]
    assert [d.id for d in cat.select(Restriction(), within=["b"])] == ["b"]
    assert cat.select(Restriction(years=[2020])) == []
    assert cat.distinct("year") == {2022: 1, 2021: 1}
    assert cat.distinct("doctype", within=["a"]) == {"A股年报": 1}
    with pytest.raises(ValueError, match="use one of"):
        cat.distinct("value_x")
    summary = cat.summary()
    assert summary.startswith("2 documents") and "A股年报 (1)" in summary and "AAPL" in summary
    assert cat.summary(within=["b"]).splitlines() == [
        "1 documents",
        "doctype: US Stock Annual Report (1)",
        "year: 2021 (1)",
        "language: en (1)",
        "symbols: AAPL",
    ]
    cat.update("a", pages=7, content_hash="abc")
    cat.save(tmp_path / "idx")
    again = Catalog.open(tmp_path / "idx")
    assert again.documents() == cat.documents() and again.get("a").pages == 7
    with pytest.raises(KeyError, match="not in the catalog"):
        again.get("zzz")
    with pytest.raises(CatalogError, match="build the index first"):
        Catalog.open(tmp_path / "nowhere")
