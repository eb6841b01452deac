"""How a dividend implementation notice prints its dates: one function per way (style.RECORD_DATE_WAYS).

The record date (股权登记日) is asked; the ex-dividend date is asked too and always stands beside it;
the payment date, the last trading day, the approval date and (in an A+H bank's notice) the H-share
record date are neighbours a reader must tell apart by their labels.

dev ways: the SSE date table under 重要内容提示 (股份类别 | 股权登记日 | 最后交易日 | 除权（息）日 |
现金红利发放日, 2022/6/15); SZSE prose ("本次权益分派股权登记日为：2022年6月15日，除权除息日为：...");
a two-column list of dated events in an order of its own; the SSE table of an A+H bank followed by its
H-share book closure and record date.
heldout ways (never in the default corpus): a numbered section of its own, "权益登记日与除权除息日", as
NEEQ/BSE and some SZSE notices print it, followed by the 权益分派对象 sentence that repeats the date;
"● A股股权登记日：2022年06月15日（星期三）" bullets with H-share bullets among them; a schedule table
whose header is 权益登记日 | 除权除息日 | 现金红利到账日 over ISO dates.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from . import fmt
from .page import Page
from .writer import mark

RECORD = ("value_record_date", "value_record_date_mmdd")
EX = "value_ex_dividend_date"
SSE_HEADER = ["股份类别", "股权登记日", "最后交易日", "除权（息）日", "现金红利发放日"]


@dataclass(frozen=True)
class Dates:
    record: dt.date
    ex: dt.date
    pay: dt.date
    approval: dt.date
    h_record: dt.date  # an A+H bank's H-share record date: a few trading days before the A-share one


def weekdays_after(day: dt.date, days: int) -> dt.date:
    step = 1 if days > 0 else -1
    for _ in range(abs(days)):
        day += dt.timedelta(days=step)
        while day.weekday() >= 5:
            day += dt.timedelta(days=step)
    return day


def _exchange(symbol: str) -> tuple[str, str]:
    """(exchange, clearing branch) of an A-share symbol: 6xxxxx trades in Shanghai, the rest in Shenzhen."""
    return ("上海证券交易所", "上海分公司") if symbol.startswith("6") else ("深圳证券交易所", "深圳分公司")


# ---- dev ------------------------------------------------------------------------------------------------
def sse_table(p: Page, d: Dates, number: Callable[[], str]) -> None:
    w, rng = p.w, p.spec.rng
    w.paragraph("● 相关日期：", indent=False)
    rows = [
        SSE_HEADER,
        [
            "A股",
            mark(fmt.date_slash(d.record), *RECORD),
            fmt.date_slash(d.record),
            mark(fmt.date_slash(d.ex), EX),
            fmt.date_slash(d.pay),
        ],
    ]
    w.table(rows, [0.16, 0.21, 0.21, 0.21, 0.21], by_column=rng.random() < 0.5, align_right_from=9)


def szse_prose(p: Page, d: Dates, number: Callable[[], str]) -> None:
    said = [
        ("本次权益分派股权登记日为：", mark(fmt.date_cn(d.record), *RECORD)),
        ("除权除息日为：", mark(fmt.date_cn(d.ex), EX)),
        ("现金红利发放日为", fmt.date_cn(d.pay)),
    ]
    if p.spec.rng.random() < 0.5:
        said = [said[1], said[2], ("股权登记日为：", said[0][1])]
    parts = []
    for k, (label, day) in enumerate(said):
        parts += ["，" if k else "", label, day]
    p.w.paragraph(parts + ["。"])


def event_list(p: Page, d: Dates, number: Callable[[], str]) -> None:
    events = [
        ("股权登记日", mark(fmt.date_cn(d.record), *RECORD)),
        ("除权除息日", mark(fmt.date_cn(d.ex), EX)),
        ("现金红利发放日", fmt.date_cn(d.pay)),
        ("股东大会审议通过日", fmt.date_cn(d.approval)),
    ]
    p.spec.rng.shuffle(events)
    p.w.table([["事项", "日期"], *[[name, day] for name, day in events]], [0.5, 0.5], align_right_from=9)


def ah_share_table(p: Page, d: Dates, number: Callable[[], str]) -> None:
    """An A+H bank: the SSE table for its A shares (last trading day "－"), then the H-share arrangements."""
    w = p.w
    w.paragraph("● 相关日期：", indent=False)
    row = ["A股", mark(fmt.date_slash(d.record), *RECORD), "－", mark(fmt.date_slash(d.ex), EX)]
    w.table([SSE_HEADER, row + [fmt.date_slash(d.pay)]], [0.16, 0.21, 0.21, 0.21, 0.21], align_right_from=9)
    closure = weekdays_after(d.h_record, -3)
    w.paragraph(
        f"● H股股息派发：本行将于{fmt.date_cn(closure)}至{fmt.date_cn(d.h_record)}（包括首尾两天）暂停办理H股股份"
        f"过户登记手续，H股股权登记日为{fmt.date_cn(d.h_record)}，H股股息派发安排详见本行在香港联合交易所"
        "披露易网站发布的公告。",
        indent=False,
    )


# ---- heldout --------------------------------------------------------------------------------------------
def equity_section(p: Page, d: Dates, number: Callable[[], str]) -> None:
    """Numbered sections after the plan: the dates in prose with weekdays, then who is paid (the date again)."""
    w, c = p.w, p.spec.company
    exchange, branch = _exchange(c.symbol)
    w.paragraph(f"{number()}、权益登记日与除权除息日", indent=False)
    w.paragraph(
        [
            "本次权益分派权益登记日为：",
            mark(fmt.date_cn(d.record), *RECORD),
            f"（{fmt.weekday_cn(d.record)}），除权除息日为：",
            mark(fmt.date_cn(d.ex), EX),
            f"（{fmt.weekday_cn(d.ex)}）。",
        ]
    )
    w.paragraph(f"{number()}、权益分派对象", indent=False)
    w.paragraph(
        f"本次分派对象为：截止{fmt.date_cn(d.record)}下午{exchange}收市后，在中国证券登记结算有限责任公司"
        f"{branch}登记在册的本公司全体股东。"
    )
    w.paragraph(f"{number()}、权益分派方法", indent=False)
    w.paragraph(
        f"本公司此次委托中国结算{branch}代派的现金红利将于{fmt.date_cn(d.pay)}通过股东托管证券公司"
        "（或其他托管机构）直接划入其资金账户。"
    )


def a_share_bullets(p: Page, d: Dates, number: Callable[[], str]) -> None:
    """One bullet per date, A-share labels, padded dates with weekdays, the H-share dates among them."""
    rng = p.spec.rng

    def day(value: dt.date, *fields: str) -> list:
        text = fmt.date_cn_padded(value)
        return [mark(text, *fields) if fields else text, f"（{fmt.weekday_cn(value)}）"]

    a_lines = [
        ["● A股股权登记日：", *day(d.record, *RECORD)],
        ["● A股除权（息）日：", *day(d.ex, EX)],
        ["● A股现金红利发放日：", *day(d.pay)],
    ]
    h_lines = [
        ["● H股股权登记日：", *day(d.h_record)],
        ["● H股股息发放日：", *day(weekdays_after(d.pay, 10))],
    ]
    for line in h_lines + a_lines if rng.random() < 0.5 else a_lines + h_lines:
        p.w.paragraph(line, indent=False)


def schedule_table(p: Page, d: Dates, number: Callable[[], str]) -> None:
    """A one-row schedule without a share-class column, ISO dates."""
    p.w.paragraph("● 分红派息日程安排：", indent=False)
    rows = [
        ["权益登记日", "除权除息日", "现金红利到账日"],
        [mark(fmt.date_iso(d.record), *RECORD), mark(fmt.date_iso(d.ex), EX), fmt.date_iso(d.pay)],
    ]
    p.w.table(rows, [1 / 3, 1 / 3, 1 / 3], by_column=p.spec.rng.random() < 0.5, align_right_from=9)


def payment_method(p: Page, number: Callable[[], str]) -> None:
    """The SSE template's 分配实施办法: the record-date label again, without the date (a ranking distractor)."""
    way = p.style.record_date
    if way == "equity_section":  # its own 权益分派对象 / 权益分派方法 sections say this
        return
    label = {"schedule_table": "权益登记日", "a_share_bullets": "A股股权登记日"}.get(way, "股权登记日")
    exchange, branch = _exchange(p.spec.company.symbol)
    p.w.paragraph(
        f"{number()}、分配实施办法：除自行发放对象外，本公司其余股东的现金红利委托中国结算{branch}通过其资金清算"
        f"系统向{label}{exchange}收市后登记在册并在{exchange}各会员办理了指定交易的股东派发。已办理指定交易的"
        "投资者可于红利发放日在其指定的证券营业部领取现金红利，未办理指定交易的股东红利暂由中国结算保管。"
    )


WAYS = {
    "sse_table": sse_table,
    "szse_prose": szse_prose,
    "event_list": event_list,
    "ah_share_table": ah_share_table,
    "equity_section": equity_section,
    "a_share_bullets": a_share_bullets,
    "schedule_table": schedule_table,
}
SECTION_WAYS = {"equity_section"}  # printed as numbered sections after the plan, not under 重要内容提示
