"""An ask over the whole catalog is quoted whole (an upper bound) and, beside it, for the documents the
question names by fiscal year and company (programs/quote/scope.py)."""

from __future__ import annotations

import pytest

from collate import ask as collate_ask
from collate import estimate
from programs.quote.scope import named_documents, names
from signatures.types import Document


def doc(symbol: str, year: int) -> Document:
    return Document(id=f"{symbol}-{year}", symbol=symbol, year=year, doctype="10k", language="en")


CATALOG = [doc(s, y) for s in ("Adobe Inc.", "AES Corporation", "DUNM", "601536") for y in (2015, 2016)]


@pytest.mark.parametrize(
    "question, symbol, named",
    [
        ("What is Adobe's FY2015 operating income?", "Adobe Inc.", True),
        ("what did ADOBE report", "Adobe Inc.", True),
        ("What were total sales in 2015?", "AES Corporation", False),  # "sales" holds "aes", not the word
        ("What did AES report in 2015?", "AES Corporation", True),
        ("DUNM's total assets", "DUNM", True),
        ("dunmore's total assets", "DUNM", False),
        ("601536的资本充足率", "601536", True),
        ("6015361的资本充足率", "601536", False),
        ("The Group's revenue", "Holdings Group Ltd", False),  # nothing distinctive: the whole name only
    ],
)
def test_a_question_names_a_symbol_by_its_code_or_its_distinctive_word(question, symbol, named):
    assert names(question, symbol) is named


def test_the_named_years_and_companies_choose_the_documents():
    chosen, how = named_documents("Adobe's operating income from FY2015 to FY2016", CATALOG)
    assert [d.id for d in chosen] == [
        "Adobe Inc.-2015",
        "Adobe Inc.-2016",
    ] and how == "years 2015, 2016; Adobe Inc."
    chosen, how = named_documents("Which company had the most assets in 2016?", CATALOG)
    assert {d.year for d in chosen} == {2016} and len(chosen) == 4 and how == "years 2016"
    chosen, how = named_documents("Which company had the most assets in 2031?", CATALOG)  # no such year
    assert chosen == CATALOG and how == ""


def test_an_ask_over_the_whole_catalog_prints_what_the_named_documents_would_cost(small_corpus, brain_server):
    _, index = small_corpus
    argv = ["--index", str(index), "--estimate", "Which company had the highest total assets in 2022?"]
    quote = estimate.quote_ask(collate_ask.parse_args(argv), collate_ask.read_question, collate_ask.build)
    documents, how, totals = quote.likely
    assert how == "years 2022" and 0 < documents < quote.documents  # 3 companies x 2 years: half of them
    assert totals["tokens_in"] < quote.totals()["tokens_in"]
    (line,) = [line for line in quote.lines() if line.lstrip().startswith("likely")]
    assert f"the {documents} document(s) the question names (years 2022)" in line
    unnamed = ["--index", str(index), "--estimate", "Which company had the highest revenue?"]
    assert (
        estimate.quote_ask(
            collate_ask.parse_args(unnamed), collate_ask.read_question, collate_ask.build
        ).likely
        is None
    )
