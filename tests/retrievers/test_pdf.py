"""Parsing: lines rebuilt from positions, tables rendered with headers, broken files reported by kind."""

from __future__ import annotations

import pypdfium2 as pdfium
import pytest

from retrievers.documents.pdf import ParseError, parse_pdf, render_table


def test_ruled_table_values_keep_their_row_label_and_column_header(cjk_pdf):
    doc = parse_pdf(cjk_pdf)
    assert [p.number for p in doc.pages] == [1, 2]
    tables = [b for b in doc.pages[0].blocks if b.kind == "table"]
    assert len(tables) == 1
    assert "2022年 | 资本充足率 | 15.44%" in tables[0].lines
    assert "2021年 | 不良贷款率 | 1.10%" in tables[0].lines
    assert tables[0].header == "项目 | 2022年 | 2021年"
    # the table's cells are not repeated as loose text lines
    assert not any("15.44%" in line for b in doc.pages[0].blocks if b.kind == "text" for line in b.lines)
    assert "第四节 公司治理" in doc.pages[1].text


def test_table_written_column_by_column_comes_out_row_by_row(column_pdf):
    # pdfium's own reading order separates labels from values: the reason lines are rebuilt
    pdf = pdfium.PdfDocument(str(column_pdf))
    raw = pdf[0].get_textpage().get_text_range()
    pdf.close()
    assert "Total assets $ 1,234,567" not in raw
    text = parse_pdf(column_pdf).pages[0].text
    assert "Total assets $ 1,234,567" in text.splitlines()
    assert "Net income $ 98,765" in text.splitlines()
    assert text.splitlines()[0] == "Item 8. Financial Statements"


@pytest.mark.parametrize(
    ("writer", "kind"),
    [("encrypted", "encrypted"), ("corrupt", "corrupt"), ("blank", "empty"), ("scanned", "scanned")],
)
def test_unreadable_documents_say_what_happened_and_what_to_do(tmp_path, writers, writer, kind):
    path = getattr(writers, writer)(tmp_path / f"{kind}.pdf")
    with pytest.raises(ParseError) as info:
        parse_pdf(path)
    assert info.value.kind == kind
    assert info.value.fix and "Fix:" in str(info.value)


def test_missing_file_is_reported(tmp_path):
    with pytest.raises(ParseError) as info:
        parse_pdf(tmp_path / "nope.pdf")
    assert info.value.kind == "missing"


def test_scanned_page_inside_a_text_document_is_counted(tmp_path, writers, cjk_pdf):
    scanned = writers.scanned(tmp_path / "scan.pdf")
    merged = pdfium.PdfDocument.new()
    for source in (cjk_pdf, scanned):
        src = pdfium.PdfDocument(str(source))
        merged.import_pages(src)
        src.close()
    merged.save(str(tmp_path / "mixed.pdf"))
    doc = parse_pdf(tmp_path / "mixed.pdf")
    assert doc.scanned_pages == [3]
    assert doc.text_pages == 2
    assert "scanned" in doc.warnings[0]


def test_render_table_fills_merged_headers_and_joins_wrapped_chinese():
    header, lines = render_table(
        [["项目", "2022年", None], ["资本充\n足率", "15.44%", "14.12%"], ["小计", None, None]]
    )
    assert header == "项目 | 2022年 | 2022年"
    assert lines == ["2022年 | 资本充足率 | 15.44%", "2022年 | 资本充足率 | 14.12%", "小计"]


def test_running_headers_and_page_numbers_are_dropped_and_the_body_kept():
    from retrievers.documents.pdf import Block, Page, _drop_running_lines

    def body(n):  # lines that differ from page to page in more than their digits
        mark = "甲乙丙丁"[n - 1]
        return [f"正文一{mark}。", "风险提示", f"正文二{mark}。", f"正文三{mark}。"]

    pages = [
        Page(n, [Block("text", ["某某银行 2022年年度报告", *body(n), f"第 {n} 页"])]) for n in range(1, 5)
    ]
    pages.append(Page(5, [Block("table", ["2022年 | 资本充足率 | 15.44%"])]))
    _drop_running_lines(pages)
    # header and page number repeat (digits aside) at a page edge: gone; "风险提示" repeats but inside the page
    assert [p.text.splitlines() for p in pages[:4]] == [body(n) for n in range(1, 5)]
    assert pages[4].blocks[0].lines == ["2022年 | 资本充足率 | 15.44%"]  # tables are never touched


def _one_line_per_page(path, pages: int):
    """A statement whose every page is one templated line (issue 22 item 16): the running-line filter
    saw a header on each page and removed all text."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A4)
    for n in range(1, pages + 1):
        c.setFont("Helvetica", 11)
        c.drawString(72, 780, f"Acme Holdings account statement: balance carried forward, sheet {n}")
        c.showPage()
    c.save()
    return path


def test_a_page_whose_only_text_is_a_templated_line_keeps_it(tmp_path):
    doc = parse_pdf(_one_line_per_page(tmp_path / "statement.pdf", 4))
    assert [p.text for p in doc.pages] == [
        f"Acme Holdings account statement: balance carried forward, sheet {n}" for n in range(1, 5)
    ]


def test_the_filter_keeps_a_pages_only_lines_and_still_drops_headers_over_a_body():
    from retrievers.documents.pdf import Block, Page, _drop_running_lines

    header, footer = "Verizon 2022 Annual Report", "Page 7"
    pages = [
        Page(n, [Block("text", [header, f"Revenue rose in quarter {'ABC'[n % 3]}.", footer])])
        for n in range(4)
    ]
    pages.append(Page(5, [Block("text", [header, footer])]))  # a divider page: header and footer only
    _drop_running_lines(pages)
    assert [p.text.splitlines() for p in pages[:4]] == [
        [f"Revenue rose in quarter {'ABC'[n % 3]}."] for n in range(4)
    ]
    assert pages[4].text.splitlines() == [header, footer]  # its only text: kept


def test_a_document_of_templated_lines_indexes_with_its_text(tmp_path):
    from retrievers.building.jobs import Job, build_document
    from retrievers.indexing.document_index import DocumentIndex

    pdf = _one_line_per_page(tmp_path / "statement.pdf", 3)
    result = build_document(Job("stmt", str(pdf), str(tmp_path / "index" / "docs" / "stmt"), None, "ngram"))
    assert result.status == "built", result.message
    index = DocumentIndex.load(tmp_path / "index" / "docs" / "stmt")
    assert (
        "balance carried forward, sheet 2"
        in index.search("balance carried forward sheet", k=3, mode="bm25")[0].text
    )
