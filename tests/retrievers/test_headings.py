"""Headings by their form, their depth, the path above each chunk, the table of contents, running titles."""

from __future__ import annotations

import pytest

from retrievers.documents.chunking import chunk_pages
from retrievers.documents.headings import (
    DECIMAL,
    ITEM,
    NUMBERED,
    PAREN_NUMBER,
    PART,
    SECTION,
    TITLE,
    Heading,
    Outline,
    find_contents,
    heading_level,
    running_lines,
)
from retrievers.documents.pdf import Block, Page

PROSE = "We sell our products to retailers and distributors in more than forty countries around the world."


@pytest.mark.parametrize(
    ("line", "level"),
    [
        ("PART II", PART),
        ("第三节 管理层讨论与分析", PART),
        ("第二章 公司简介", PART),
        (
            "Item 7. Management’s Discussion and Analysis of Financial Condition and Results of Operations.",
            ITEM,
        ),
        ("Item 2. Properties.", ITEM),  # a period after the title is still a title
        ("ITEM 1A. RISK FACTORS", ITEM),
        ("一、公司信息", ITEM),
        ("（一）主要会计数据", SECTION),
        ("Note 1 – Basis of presentation", SECTION),
        ("7. Income Taxes", NUMBERED),
        ("1、基本情况", NUMBERED),
        ("1.2 Capital adequacy", DECIMAL),
        ("（1）资本充足率", PAREN_NUMBER),
        ("CONSOLIDATED BALANCE SHEETS (in millions)", TITLE),
        ("Consolidated Balance Sheets Corning Incorporated and Subsidiary Companies", TITLE),
    ],
)
def test_numbered_and_statement_headings_and_their_depth(line, level):
    assert heading_level(line) == level


@pytest.mark.parametrize(
    "line",
    [
        "Item 8 for more information.",  # a cross-reference that starts a line
        "Part II, Item 1A, Risk Factors on pages 172-173 of this Form",
        "Note 10 for additional information on securities financing",
        "2021. amount to the cardholder and will charge back the",  # a year, not a section number
        "QFNA 604 — 7 — — — 611",  # a table row in capitals
        "2022 | 资本充足率 | 15.44%",
        "本行坚持稳健经营。",
        "Total assets were $5 million.",
    ],
)
def test_prose_rows_and_cross_references_are_no_headings(line):
    assert heading_level(line, "", PROSE) is None


def test_a_title_case_line_is_a_heading_between_a_sentence_end_and_prose():
    assert heading_level("Seasonality", "Sales rose in every region.", PROSE) == TITLE
    assert heading_level("For the Full Year of Fiscal 2022", "", PROSE) == TITLE  # it may name a period
    assert heading_level("Seasonality", "", "Net sales 1,234 1,456 1,789") is None  # a table's row label
    assert heading_level("Mountain Dew, Pepsi and Propel", "brands including Aquafina, Diet", PROSE) is None
    assert heading_level("Our customers include large", "", PROSE) is None  # not Title Case


def test_the_outline_closes_headings_as_deep_or_deeper():
    outline = Outline()
    for text, level in [("PART I", PART), ("Item 1. Business", ITEM), ("Customers", TITLE)]:
        outline.enter(Heading(text, level))
    assert outline.path == ("PART I", "Item 1. Business", "Customers")
    outline.enter(Heading("Competition", TITLE))
    assert outline.path == ("PART I", "Item 1. Business", "Competition")
    outline.enter(Heading("Item 3. Legal Proceedings", ITEM))
    assert outline.path == ("PART I", "Item 3. Legal Proceedings")
    outline.leave(ITEM)
    assert outline.path == ("PART I",)


CONTENTS = [
    "Table of Contents",
    "PART I",
    "Item 1. Business 2",
    "Item 1A. Risk Factors 2",
    "Item 3. Legal Proceedings 3",
    "PART II",
    "Management’s discussion and analysis 4",
    "Item 8. Financial Statements and Supplementary Data 5",
]


def _ten_k() -> list[Page]:
    """A 10-K in small: contents, Items with sub-headings, a running title on every page."""
    pages = [
        Page(1, [Block("text", CONTENTS)]),
        Page(
            2,
            [
                Block(
                    "text", ["PART I", "Item 1. Business", "Company Overview", PROSE, "Our Customers", PROSE]
                )
            ],
        ),
        Page(3, [Block("text", ["Item 3. Legal Proceedings.", PROSE])]),
        Page(4, [Block("text", ["PART II", "Management’s discussion and analysis", PROSE])]),
        Page(5, [Block("text", [PROSE])]),
        Page(6, [Block("text", ["Consolidated Balance Sheets", "Total assets 1,234 1,111"])]),
    ]
    for page in pages:
        page.blocks[0].lines.insert(0, "Acme Corp Annual Report")  # a running title the parser left in
    return pages


def test_each_chunk_carries_its_heading_path_and_keeps_its_text():
    chunks = chunk_pages(_ten_k())
    paths = {c.path for c in chunks}
    assert "PART I > Item 1. Business > Our Customers" in paths
    assert "PART I > Item 3. Legal Proceedings." in paths
    customers = next(c for c in chunks if c.path.endswith("Our Customers"))
    # the path is beside the text, not in it: the text is as printed, headed by its own section only
    assert customers.text.startswith(f"Our Customers\n{PROSE}") and "Item 1" not in customers.text
    # the contents list headings without opening them; a line they list opens one where its form would not
    assert not any(c.path.endswith("Risk Factors 2") for c in chunks)
    assert "PART II > Management’s discussion and analysis" in paths
    # a line printed on every page is a running title, not a heading
    assert not any("Acme Corp Annual Report" in c.path for c in chunks)


def test_the_table_of_contents_and_running_lines_are_found():
    pages = _ten_k()
    lines = [(p.number, [x for b in p.blocks for x in b.lines]) for p in pages]
    contents = find_contents(lines)
    assert contents.pages == {1}
    assert contents.lists("ITEM 3. LEGAL PROCEEDINGS") and not contents.lists("• item 3. legal proceedings;")
    assert "Acme Corp Annual Report" in running_lines(lines)


def test_a_chinese_report_has_its_sections_as_a_path():
    body = "报告期内，本行营业收入稳步增长，资产质量保持稳定，各项业务均衡发展。"
    pages = [
        Page(
            1,
            [
                Block(
                    "text", ["第三节 管理层讨论与分析", "一、经营情况讨论与分析", "（一）主营业务分析", body]
                )
            ],
        ),
        Page(2, [Block("text", ["（二）资产及负债状况", body, "二、风险管理", body])]),
        Page(3, [Block("text", ["第四节 公司治理", body])]),
    ]
    paths = [c.path for c in chunk_pages(pages)]
    assert "第三节 管理层讨论与分析 > 一、经营情况讨论与分析 > （一）主营业务分析" in paths
    assert "第三节 管理层讨论与分析 > 一、经营情况讨论与分析 > （二）资产及负债状况" in paths
    assert "第三节 管理层讨论与分析 > 二、风险管理" in paths
    assert paths[-1] == "第四节 公司治理"
