"""What heads a financial table (title, unit, fiscal years) is recognised and carried into its chunks."""

from __future__ import annotations

from retrievers.documents.chunking import chunk_pages, is_heading
from retrievers.documents.pdf import Block, Page, parse_pdf
from retrievers.documents.statements import column_header, statement_kind, statement_title, unit_line


def test_statement_titles_and_their_usual_names():
    assert statement_title("Consolidated Statement of Cash Flows")
    assert statement_title("CONDENSED CONSOLIDATED BALANCE SHEETS (Unaudited)")
    assert statement_title("Consolidated Statements of Operations (continued)")
    assert not statement_title("consolidated statements of operations and")  # a sentence running on
    assert not statement_title("The consolidated statements of cash flows show that we spent more this year")
    assert "statement of financial position" in statement_kind("CONSOLIDATED BALANCE SHEETS")
    assert "income statement" in statement_kind("Consolidated Statements of Operations")
    assert "cash flow statement" in statement_kind("Consolidated Statement of Cash Flows")
    assert "comprehensive" in statement_kind("Consolidated Statements of Comprehensive Income")
    assert statement_kind("Report of Independent Registered Public Accounting Firm") == ""


def test_unit_lines_and_column_headers():
    for line in (
        "(In millions, except per share data)",
        "(in thousands)",
        "（货币单位：人民币百万元）",
        "(dollars in millions)",
    ):
        assert unit_line(line), line
    assert not unit_line("In 2022, revenue grew by 10 million units across the world.")
    for line in (
        "2022 2021 2020",
        "Fiscal years ended December 31, 2022, December 25, 2021",
        "2022年 2021年",
    ):
        assert column_header(line), line
    for line in (
        "Net revenue $ 86,392 $ 79,474",
        "In 2022, we grew revenue.",
        "Capital spending (5,207) (4,625)",
    ):
        assert not column_header(line), line
    assert not is_heading("2017 2016 (1)")  # a column header, not a numbered section


def _statement_pages():
    rows = [f"Line item {i} {1000 + i:,} {900 + i:,}" for i in range(40)]
    first = ["Consolidated Statement of Cash Flows", "(in millions)", "2022 2021", "ASSETS", *rows[:30]]
    return [
        Page(1, [Block("text", first)]),
        Page(
            2, [Block("text", ["FINANCING ACTIVITIES", *rows[30:], "Purchases of property (5,207) (4,625)"])]
        ),
        Page(
            3, [Block("text", ["Prose three pages on with 1,234 and 5,678 in it.", "More prose 9,999 here."])]
        ),
    ]


def test_chunks_of_a_statement_carry_its_head_onto_its_second_page_and_no_further():
    chunks = chunk_pages(_statement_pages())
    row = next(c for c in chunks if "Purchases of property" in c.text)
    assert row.page == 2
    for head in ("Consolidated Statement of Cash Flows", "(in millions)", "2022 2021"):
        assert head in row.text, head
    assert "cash flow statement" in row.terms
    # an upper-case line inside a statement is a part of it, not a new section
    assert row.section == "Consolidated Statement of Cash Flows"
    later = [c for c in chunks if c.page == 3]
    assert later and all(not c.terms and "2022 2021" not in c.text for c in later)


def test_a_filled_shading_grid_is_not_a_ruled_table_but_a_stroked_grid_is(tmp_path):
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    path = tmp_path / "shaded.pdf"
    c = canvas.Canvas(str(path), pagesize=A4)
    xs, ys = [72, 252, 362, 472], [700, 680, 660, 640]
    rows = [["Item", "2022", "2021"], ["Revenue", "1,000", "900"], ["Costs", "(500)", "(450)"]]
    c.setFillGray(0.9)
    for r in range(3):  # row shading: cells as filled rectangles, as real 10-Ks draw them
        for j in range(3):
            c.rect(xs[j], ys[r + 1], xs[j + 1] - xs[j], ys[r] - ys[r + 1], stroke=0, fill=1)
    c.setFillGray(0)
    for r, row in enumerate(rows):
        for j, cell in enumerate(row):
            c.drawString(xs[j] + 4, ys[r] - 14, cell)
    c.showPage()
    for r in range(3):  # the same table in a stroked grid
        for j in range(3):
            c.rect(xs[j], ys[r + 1], xs[j + 1] - xs[j], ys[r] - ys[r + 1], stroke=1, fill=0)
    for r, row in enumerate(rows):
        for j, cell in enumerate(row):
            c.drawString(xs[j] + 4, ys[r] - 14, cell)
    c.save()
    shaded, ruled = parse_pdf(path).pages
    assert [b.kind for b in shaded.blocks] == ["text"]
    assert "Revenue 1,000 900" in shaded.text.splitlines()
    tables = [b for b in ruled.blocks if b.kind == "table"]
    assert len(tables) == 1 and "2022 | Revenue | 1,000" in tables[0].lines


def test_amount_lines_count_whole_numbers_where_rows_print_them():
    from retrievers.documents.statements import amount_line

    for line in (
        "Fiscal 2021 | Total revenues | 777",
        "Other revenue 19 50",
        "Interest expense, net (12) (2)",
    ):
        assert amount_line(line), line
    for line in (
        "Note 3 - Revenue Recognition",
        "Item 7",
        "2022 2021 2020",
        "Fiscal 2021 | Fiscal 2020",
        "19 50",
    ):
        assert not amount_line(line), line
