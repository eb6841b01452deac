"""A股利润分配权益类公告: the plan announcement and the implementation announcement of FY Y, merged.

The cash dividend is stated per 10 shares (每10股派发现金红利4.10元), so the per-share amount must be
derived; an after-tax amount sits beside it. Record and ex-dividend dates are printed the way the
document's style says (dividend_dates.py: SSE date table, SZSE prose, dated events, an A+H bank's table
with its H-share dates, and the held-out ways), next to the last trading day and the payment date (the
ex-date in most announcements, a few business days later in others): the reader must tell the record
date from its neighbours by their names.
"""

from __future__ import annotations

import datetime as dt

from . import dividend_dates, fmt
from .dividend_dates import Dates, weekdays_after
from .page import Page
from .writer import mark

PER_SHARE = "value_pre_tax_dividend_per_share_cny"


def write_dividend(p: Page) -> None:
    w, s, rng = p.w, p.spec, p.spec.rng
    f, prior, c, year = s.facts, s.prior, s.company, s.year
    per10 = fmt.trim(f["per10"], 3)
    w.heading(
        f"证券代码：{c.symbol}    证券简称：{c.short_name}    公告编号：{year + 1}-{rng.randint(5, 20):03d}",
        size=10,
    )
    w.centered(c.name, 15)
    w.centered(f"{year}年度利润分配方案公告", 14)
    w.paragraph(
        f"本公司董事会及全体董事保证本公告内容不存在任何虚假记载、误导性陈述或者重大遗漏。"
        f"经{f['auditor']}审计，本行{year}年度实现净利润{fmt.yi(f['net_profit'])}。"
        f"经董事会审议，{year}年度利润分配预案为：以实施权益分派股权登记日的总股本为基数，"
        f"向全体股东每10股派发现金红利{per10}元（含税）。上年度每10股派发现金红利{fmt.trim(prior['per10'], 3)}元（含税）。"
    )
    w.paragraph(
        f"本次利润分配方案已经{fmt.date_cn(f['plan_date'])}召开的董事会会议审议通过，尚需提交股东大会审议。"
    )
    p.section_done(0, 3)
    w.new_page()
    w.heading(
        f"证券代码：{c.symbol}    证券简称：{c.short_name}    公告编号：{year + 1}-{rng.randint(21, 45):03d}",
        size=10,
    )
    w.centered(c.name, 15)
    w.centered(f"{year}年年度权益分派实施公告", 14)
    w.paragraph("重要内容提示：", indent=False)
    after_tax = fmt.trim(f["per10"] * 0.9, 4)
    w.paragraph(
        [
            "● 每股分配比例：A股",
            mark(f"每10股派发现金红利{per10}元（含税）", PER_SHARE),
            f"，扣税后每10股派发现金红利{after_tax}元。",
        ],
        indent=False,
    )
    record, ex = f["record_date"], f["ex_date"]
    pay = ex if rng.random() < 0.65 else weekdays_after(ex, rng.randint(1, 5))  # not asked: a neighbour
    dates = Dates(record, ex, pay, f["approval_date"], weekdays_after(record, -rng.randint(2, 6)))
    way, sections = dividend_dates.WAYS[s.style.record_date], iter(range(1, 10))

    def number() -> str:
        return fmt.zh_numeral(next(sections))

    if s.style.record_date not in dividend_dates.SECTION_WAYS:
        way(p, dates, number)
    w.paragraph(
        f"{number()}、通过分配方案的股东大会届次和日期：本次利润分配方案经公司{fmt.date_cn(f['approval_date'])}"
        f"的{year}年年度股东大会审议通过。"
    )
    w.paragraph(
        f"{number()}、分配方案：本次利润分配以方案实施前的公司总股本{f['total_shares']:,}股为基数，"
        f"共计派发现金红利{fmt.grouped(f['dividend_total'])}元。"
    )
    if s.style.record_date in dividend_dates.SECTION_WAYS:
        way(p, dates, number)
    dividend_dates.payment_method(p, number)
    w.paragraph(
        f"{number()}、扣税说明：对于持有公司无限售条件流通股的个人股东，持股期限超过1年的，股息红利所得暂免征收个人所得税；"
        f"持股期限在1年以内（含1年）的，暂不扣缴个人所得税，待转让股票时按持股期限计算应纳税额。"
        f"合格境外机构投资者（QFII）按10%的税率统一代扣代缴企业所得税，扣税后每10股实际派发现金{after_tax}元。"
    )
    p.section_done(1, 3)
    w.paragraph(
        f"{number()}、咨询方式：联系部门：董事会办公室；联系电话：{rng.randint(10, 99)}-{rng.randint(1000000, 9999999)}。"
    )
    w.paragraph(f"特此公告。{c.name}董事会 {fmt.date_cn(record - dt.timedelta(days=7))}", indent=False)
