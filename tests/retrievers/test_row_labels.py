"""Row labels (retrievers/indexing/row_labels.py): a field's description finds the row printing it."""

from __future__ import annotations

import numpy as np

from retrievers.documents.chunking import Chunk
from retrievers.embedding.embedders import HashingEmbedder
from retrievers.indexing.document_index import DocumentIndex
from retrievers.indexing.row_labels import RowLabels, label_ranking, line_label

BALANCE_SHEET = "\n".join(
    [
        "CONSOLIDATED BALANCE SHEETS (in millions)",
        "Accounts payable $ 1,204 $ 1,117",
        "Accrued compensation 310 298",
        "Current portion of long-term debt 250 —",
        "Total current liabilities 1,764 1,415",
        "Long-term debt 3,729 3,430",
        "Deferred income taxes 412 388",
        "Other long-term liabilities 480 160",
        "Total liabilities 6,385 5,393",
        "Common stock 8 8",
        "Additional paid-in capital 7,119 7,561",
        "Retained earnings (1,089) (680)",
        "Total stockholders' equity 2,798 2,634",
        "Total liabilities and stockholders' equity $ 9,183 $ 8,027",
    ]
)
NOTES = [
    "Pension plans\nTotal liabilities of the plans grew as total liabilities for retirees were remeasured; "
    "the plans' total liabilities exceed their assets.",
    "Derivatives\nThe fair value of total liabilities under hedges is disclosed in Note 6; total liabilities "
    "subject to collateral were not material.",
    "Leases\nLease liabilities are included in total liabilities; see the maturity table for total liabilities.",
]


def _index() -> DocumentIndex:
    chunks = [Chunk(text, n + 1, n + 1) for n, text in enumerate([*NOTES, BALANCE_SHEET])]
    return DocumentIndex.build("d", chunks, HashingEmbedder(), dense_chunks="all")


def test_a_rows_label_is_its_words_before_the_first_amount():
    assert line_label("TOTAL LIABILITIES $ — $ 369 $ 15") == "TOTAL LIABILITIES"  # in millions: no 1,234
    assert line_label("Cash and cash equivalents, end of period $ 23,646 $ 35,929") == (
        "Cash and cash equivalents, end of period"
    )
    assert line_label("营业收入 | 1,234,567.89 | 1,111.00") == "营业收入"
    assert (
        line_label("Revenue was $ 5.2 billion, up 10% from the prior year") is None
    )  # prose quoting a figure
    assert line_label("Total revenue 2022 2021") is None  # a header of years prints no amount
    assert line_label("1,234 5,678") is None  # no label


def test_the_description_finds_the_balance_sheets_row_over_notes_quoting_its_words():
    index = _index()
    scores = index.ranked("total liabilities", "hybrid")
    assert int(np.argmax(scores)) == 3  # the balance sheet, not a note repeating "total liabilities"
    # BM25 alone still ranks the notes first: the row label is what lifts the statement
    assert int(np.argmax(index.ranked("total liabilities", "bm25"))) != 3


def test_the_exact_label_ranks_before_a_longer_one_and_long_questions_match_none():
    rows = RowLabels(["Total liabilities and equity 9,183 8,027", "Total liabilities 6,385 5,393"])
    assert rows.matches("total liabilities") == {1: 0, 0: 1}
    assert list(rows.ranking("total liabilities", np.zeros(2))) == [1, 0]
    assert rows.matches("total liabilities and stockholders' equity") == {}  # 2 words the label lacks
    assert rows.matches("What were the total liabilities at the end of FY2021, in USD millions?") == {}
    assert len(label_ranking({}, np.zeros(2))) == 0


CASH_FLOWS = "\n".join(
    [
        "Investing activities",
        "Purchases of property and equipment (1,204) (987)",
        "Proceeds from sales of investments 310 298",
        "Net cash used in investing activities (894) (689)",
    ]
)
CAPEX_PROSE = [
    "Liquidity\nConsolidated Statements of Cash Flows show purchases of property and equipment; "
    "purchases of property and equipment for new stores and equipment will grow in the coming year.",
    "Commitments\nPurchases of property and equipment under contracts signed, as the consolidated statements "
    "of cash flows and their notes describe, are not recorded until the property and equipment are received.",
]


def test_each_search_term_is_a_label_of_its_own():
    """A planner's terms name the row and its statement: joined, no label holds all their words."""
    terms = ["Purchases of property and equipment", "Consolidated Statements of Cash Flows"]
    chunks = [Chunk(text, n + 1, n + 1) for n, text in enumerate([*CAPEX_PROSE, CASH_FLOWS])]
    index = DocumentIndex.build("d", chunks, HashingEmbedder(), dense_chunks="all")
    assert index.row_labels.matches("\n".join(terms)) == {}
    assert index.row_labels.matches_any(terms) == {2: 0}
    apart = index.ranked("capital expenditures", "hybrid", terms=terms)
    joined = index.ranked(
        "capital expenditures", "hybrid", terms=["\n".join(terms)]
    )  # one term: no row fires
    # the row's chunk rises by its label over the prose repeating the terms' words
    assert list(np.argsort(-joined, kind="stable")).index(2) == 2
    assert list(np.argsort(-apart, kind="stable")).index(2) < 2
