"""A table headed by short labels (not years) keeps its header with its rows of dates and amounts."""

from __future__ import annotations

import pytest

from retrievers.documents.chunking import TARGET_CHARS, chunk_pages
from retrievers.documents.labels import label_header
from retrievers.documents.pdf import Block, Page
from retrievers.documents.statements import column_header, dated_row

_MONTHS = "January February March April May June July August September October November December".split()
EN_HEADER = "Declaration date Record date Payment date Amount"
ZH_HEADER = "分配方案 股权登记日 除权除息日 派息日"


def _en_rows(n: int) -> list[str]:
    return [
        f"{_MONTHS[i % 12]} {1 + i % 20}, {2000 + i} {_MONTHS[i % 12]} {10 + i % 15}, {2000 + i} "
        f"{_MONTHS[(i + 1) % 12]} 1, {2000 + i} $0.{10 + i}"
        for i in range(n)
    ]


def _zh_rows(n: int) -> list[str]:
    return [f"每10股派{i}.5元 {2000 + i}年6月15日 {2000 + i}-06-16 {2000 + i}/6/20" for i in range(n)]


def _chunks(header: str, rows: list[str], before: list[str]) -> list:
    return chunk_pages([Page(1, [Block("text", ["Dividends", *before, header, *rows])])])


@pytest.mark.parametrize(
    ("header", "rows"),
    [(EN_HEADER, _en_rows(40)), (ZH_HEADER, _zh_rows(40))],
    ids=["english", "chinese"],
)
def test_a_label_header_heads_every_chunk_of_its_date_rows(header, rows):
    chunks = _chunks(header, rows, [])
    holding = [c for c in chunks if any(r in c.text for r in rows)]
    assert len(holding) >= 2, "the table should span several chunks"
    assert all(header in c.text for c in holding)


def test_a_label_header_printed_last_in_a_chunk_also_heads_the_next_one():
    # prose fills the chunk so that the header row ends it and the value row opens the next
    prose = [
        ("审计委员会积极优化流动性风险监测，各项监管指标均符合要求，报告期内理财产品规模较上年增长。" * 10)[
            : TARGET_CHARS - 40
        ]
    ]
    rows = ["A股 2023/5/17 2023/5/18 2023/5/25", "H股 2023/5/11 2023/5/12 2023/6/30"]
    chunks = _chunks("股份类别 股权登记日 除权除息日 现金红利发放日", rows, prose)
    row = next(c for c in chunks if rows[0] in c.text)
    assert prose[0] not in row.text  # the rows open a chunk of their own
    assert "股份类别 股权登记日 除权除息日 现金红利发放日" in row.text


def test_dates_are_values_a_row_states():
    for line in (
        "A股 2022-06-15 2022-06-16",
        "2022年6月15日 2022年6月16日",
        "2022 年06 月15 日 2022 年06 月16 日",
        "June 15, 2022 July 1, 2022",
        "Sept. 1, 2021 Oct. 1, 2021 $0.25",
        "6/15/2022 7/1/2022",
        "A股 2023/7/20 － 2023/7/21 2023/7/26",
    ):
        assert dated_row(line), line
    for line in (
        "股份类别 股权登记日 除权除息日",
        "Record date Payment date",
        "Item 7 of 2022",
        "see page 12",
        "1,234 5,678",
    ):
        assert not dated_row(line), line
    for line in (
        "June 15, 2022 $0.25",  # one date
        "The fair values as of December 25, 2021 and December 26, 2020 were",  # prose
        "本行将于2022年6月15日至2022年6月20日暂停办理H股股份过户登记手续，H股股权登记日为2022年6月20日",
    ):
        assert not dated_row(line), line


def test_a_single_row_of_dates_in_a_chunk_of_its_own_keeps_its_labels():
    header, row = (
        "股份类别 股权登记日 最后交易日 除权（息）日 现金红利发放日",
        "A股 2023/7/20 2023/7/20 2023/7/21 2023/7/26",
    )
    prose = "审计委员会积极优化流动性风险监测，各项监管指标均符合要求，报告期内理财产品规模较上年增长。" * 8
    chunks = chunk_pages(
        [Page(1, [Block("text", ["（四）内部控制", prose, header, row, "三、分配实施办法", prose])])]
    )
    alone = next(c for c in chunks if row in c.text)
    assert alone.text.splitlines()[-1] == row and prose not in alone.text  # the row opens a chunk of its own
    assert header in alone.text
    after = next(c for c in chunks if c.section == "三、分配实施办法")
    assert header not in after.text  # the next section is not under the table's labels


def test_label_rows_need_short_cells_and_a_row_of_dates_under_them():
    for line in (
        ZH_HEADER,
        EN_HEADER,
        "Declaration Date Record Date Payment Date Amount",
        "权益登记日 除权除息日 现金红利到账日",
    ):
        assert label_header(line), line
        assert column_header(line, after="A股 2022-06-15 2022-06-16 2022-06-16"), line
        assert not column_header(line), line  # a label row heads a table only above a row of dates
        assert not column_header(line, after="Net income 1,234 5,678"), line
    for line in (
        "We paid dividends on each record date.",  # a sentence
        "The Board declared a quarterly dividend payable to holders",  # prose wrapped at the margin
        "Accounts payable and accrued",  # a statement's row label wrapped before its figures
        "Cash flows from operating activities:",
        "本行坚持稳健经营，提升服务效率",  # Chinese prose
        "重要内容提示：",
        "股权登记日",  # one label is no row of labels
        "Record date",
        "证券代码：000845 证券简称：盛海银行 公告编号：2022-043",
        "本次权益分派权益登记日为：2022年7月1日（星期五），除权除息日为：2022年7月4日（星期一）。",
    ):
        assert not column_header(line, after="A股 2022-06-15 2022-06-16 2022-06-16"), line


def test_a_title_or_a_running_line_above_dated_lines_does_not_head_them():
    rows = _en_rows(30)
    assert not column_header("ACME CORPORATION AND SUBSIDIARIES", after=rows[0])  # capitals: a name, a title
    for line in ("Table of Contents", "Notes to Consolidated Financial Statements"):
        chunks = chunk_pages([Page(1, [Block("text", ["Item 5. Market", "Prose ends here.", line, *rows])])])
        later = [c for c in chunks if rows[-1] in c.text and rows[0] not in c.text]
        assert later and all(line not in c.text for c in later), line
    # a line printed on every page (a running title) is no header, even above a row of dates
    running = "Acme Holdings Annual Report"
    assert label_header(running)
    pages = [
        Page(n, [Block("text", [f"Item {n}. Part", "Some prose here.", running, *rows])]) for n in range(1, 7)
    ]
    later = [c for c in chunk_pages(pages) if rows[-1] in c.text and rows[0] not in c.text]
    assert len(later) == 6 and all(running not in c.text for c in later)


def test_a_period_header_still_heads_its_rows():
    rows = [f"Line item {i} {1000 + i:,} {900 + i:,}" for i in range(40)]
    chunks = chunk_pages([Page(1, [Block("text", ["Selected data", "2022 2021", *rows])])])
    assert all("2022 2021" in c.text for c in chunks if any(r in c.text for r in rows))
