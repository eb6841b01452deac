"""Chunking follows sections and tables, keeps page spans, and is deterministic."""

from __future__ import annotations

from retrievers.documents.chunking import MAX_CHARS, TARGET_CHARS, chunk_pages, is_heading
from retrievers.documents.pdf import Block, Page, parse_pdf


def test_headings_are_recognised_and_numbers_are_not():
    for line in [
        "第三节 管理层讨论与分析",
        "一、公司信息",
        "（二）主要会计数据",
        "Item 7. Management's Discussion",
        "PART II",
    ]:
        assert is_heading(line), line
    for line in [
        "1,234,567",
        "2022年 | 资本充足率 | 15.44%",
        "本行坚持稳健经营。",
        "Total assets were $5 million.",
    ]:
        assert not is_heading(line), line


def test_chunks_carry_their_section_and_table_header(cjk_pdf):
    chunks = chunk_pages(parse_pdf(cjk_pdf).pages)
    table = [c for c in chunks if c.kind == "table"]
    assert len(table) == 1
    assert table[0].text.splitlines()[:2] == ["第三节 管理层讨论与分析", "项目 | 2022年 | 2021年"]
    assert "2022年 | 资本充足率 | 15.44%" in table[0].text
    assert table[0].section == "第三节 管理层讨论与分析" and table[0].page == 1
    governance = [c for c in chunks if "毕马威" in c.text]
    assert governance[0].page == 2 and governance[0].text.startswith("第四节 公司治理")


def test_text_runs_across_pages_within_a_section_and_chunks_stay_bounded():
    long_line = "本行持续推进数字化转型，提升服务效率。" * 60  # one run-on line far over the limit
    pages = [
        Page(1, [Block("text", ["一、经营情况", "第一页的内容。"])]),
        Page(2, [Block("text", ["第二页接着写。", long_line])]),
        Page(3, [Block("text", ["二、风险管理", "风险可控。"])]),
    ]
    chunks = chunk_pages(pages)
    assert (chunks[0].page, chunks[0].page_end) == (1, 2)
    assert all(len(c.text) <= MAX_CHARS + 20 for c in chunks)
    assert sum(c.text.count("提升服务效率") for c in chunks) == 60  # nothing lost in splitting
    assert all(c.text.startswith("一、经营情况") for c in chunks if c.page_end == 2)
    assert chunks[-1].section == "二、风险管理" and chunks[-1].page == 3
    assert len(chunks) > 1 and TARGET_CHARS < MAX_CHARS
    assert chunk_pages(pages) == chunks  # deterministic


def test_upper_case_statement_titles_with_a_unit_note_are_headings():
    assert is_heading("CONSOLIDATED STATEMENTS OF OPERATIONS (in thousands)")
    assert not is_heading("Net sales (in thousands) 359,378")


def test_wrapped_chinese_prose_is_rejoined_but_table_rows_keep_their_breaks():
    prose = "本行持续推进数字化转型，提升服务效率，客户满意度持续提升，消费"
    pages = [
        Page(
            1,
            [
                Block(
                    "text",
                    [
                        "二、客户权益保护",
                        prose,
                        "者权益保护工作稳步推进。",
                        "项目 2021年 2020年",
                        "资本充足率 15.88% 16.70%",
                    ],
                )
            ],
        )
    ]
    text = chunk_pages(pages)[0].text
    assert "消费者权益保护" in text
    assert "2020年\n资本充足率 15.88%" in text
    assert text.startswith("二、客户权益保护\n")


def test_one_notion_of_a_chinese_character_for_wrapped_lines_and_table_cells():
    from retrievers.documents.pdf import is_han

    assert all(is_han(c) for c in "资本充足率，。、；：％（）\u3400\uf900")
    assert not any(is_han(c) for c in "aZ19 ,.%()$|")
