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


# ---- issue 22 items 11, 12: one id is one document, a year is a fiscal year ------------------------
def _jsonl(tmp_path, rows, name="c.jsonl"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


ROW = {"symbol": "AAA", "year": 2022, "doctype": "A股年报"}


def test_one_id_given_for_two_companies_is_refused_naming_both_lines(tmp_path):
    rows = [{"id": "x", **ROW}, {"id": "y", **ROW}, {"id": "x", **ROW, "symbol": "BBB"}]
    path = _jsonl(tmp_path, rows)
    with pytest.raises(CatalogError) as caught:
        Catalog.load(path)
    message = str(caught.value)
    assert message.startswith("c.jsonl line 3: id 'x' is given twice with different companies (AAA, BBB)")
    assert "line 1" in message and message.endswith("give each document its own id")


def test_one_id_given_for_two_years_is_refused_in_a_csv_with_its_line(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("id,symbol,year,doctype\nx,AAA,2021,A股年报\nx,AAA,2022,A股年报\n", encoding="utf-8")
    with pytest.raises(
        CatalogError, match=r"c\.csv line 3: id 'x' is given twice with different years \(2021, 2022\)"
    ):
        Catalog.load(path)


def test_identical_repeats_of_a_row_stay_one_document(tmp_path):
    # MuDABench datasets list a document once per question that uses it: the same row, repeated
    cat = Catalog.load(_jsonl(tmp_path, [{"id": "x", **ROW}, {"id": "x", **ROW, "year": "2022"}]))
    assert [(d.id, d.year) for d in cat.documents()] == [("x", 2022)]
    dataset = tmp_path / "dataset.json"
    row = {"id": "x", **ROW, "value_a": 1}
    items = [
        {"question_id": q, "question": "?", "metadata": [row], "final_answer": "1"} for q in ("q1", "q2")
    ]
    dataset.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    assert len(Catalog.load(dataset)) == 1


@pytest.mark.parametrize(
    ("year", "needle"),
    [
        (0, "year 0 is not a fiscal year"),
        (-5, "year -5 is not a fiscal year"),
        (99999, "year 99999 is not a fiscal year"),
        (True, "year True is not a number"),
        (2022.7, "year 2022.7 is not a whole number"),
        (1e308 * 10, "year inf is not a number"),
        ("1" * 400, "is not a fiscal year"),
        ("2022.5", "year '2022.5' is not a whole number"),
        ("last", "year 'last' is not a number"),
    ],
)
def test_a_year_that_is_no_fiscal_year_is_refused_naming_the_fix(tmp_path, year, needle):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"id": "x", **ROW, "year": year}) + "\n", encoding="utf-8")
    with pytest.raises(CatalogError) as caught:
        Catalog.load(path)
    assert needle in str(caught.value) and "e.g. 2022" in str(caught.value)
    assert str(caught.value).startswith("c.jsonl line 1: ")


@pytest.mark.parametrize("year", [2022, "2022", " 2022 ", 2022.0, "2022.0"])
def test_years_written_as_text_or_whole_floats_are_read(tmp_path, year):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"id": "x", **ROW, "year": year}) + "\n", encoding="utf-8")
    assert Catalog.load(path).get("x").year == 2022
