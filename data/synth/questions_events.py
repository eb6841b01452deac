"""Gold questions over dividend and shareholder-meeting announcements: dates, intervals, ties, modes."""

from __future__ import annotations

import datetime as dt

from .fields import DIVIDEND, MEETING
from .qkit import (
    ZH_K,
    ZH_PREFIX,
    Doc,
    by_symbol,
    item,
    most_common,
    pair_docs,
    tie_note_zh,
    top,
    year_pairs,
    zh_list,
)

PER_SHARE, RECORD, MMDD, EX = (
    "value_pre_tax_dividend_per_share_cny",
    "value_record_date",
    "value_record_date_mmdd",
    "value_ex_dividend_date",
)
PEOPLE, SHARES, RATIO = (
    "value_attending_shareholders_and_proxies_count",
    "value_attending_shares_count",
    "value_attendance_share_ratio_pct",
)
METHODS, VOTING, EXTRA, EVENTS = (
    "value_annual_meeting_methods",
    "value_annual_meeting_voting_methods",
    "value_extraordinary_shareholder_meeting_count",
    "value_shareholder_meeting_events",
)


def _day(text: str) -> dt.date:
    return dt.date.fromisoformat(text)


def _top(docs: list[Doc], y: int, field: str, noun: str, unit: str, ask: str, what: str) -> dict:
    k = min(3, len(docs))
    winners = top({d.symbol: d.gold[field] for d in docs}, k)
    sa = [f"证券代码{d.symbol}在{y}年{what}{noun}为{d.gold[field]}{unit}" for d in docs]
    final = f"根据{y}年{what}数据，{noun}最高的{ZH_K[k]}家公司证券代码分别为：{zh_list(winners)}{tie_note_zh(winners, k)}"
    return item(
        f"{ZH_PREFIX}请给出你知识库中{y}年{ask}{noun}最高的{ZH_K[k]}家公司证券代码", docs, [field], sa, final
    )


def dividend_questions(groups: dict, years: list[int]) -> list[dict]:
    y = years[0]
    docs = groups.get((DIVIDEND, y), [])
    if len(docs) < 2:
        return []
    out = [
        _top(docs, y, PER_SHARE, "税前每股股利", "元", "年度分配中", "年度分配"),
        _earliest(docs, y),
        _min_gap(docs, y),
        _before_july(docs, y),
    ]
    pairs = year_pairs(groups, DIVIDEND, years)
    if len(pairs) >= 2:
        out.append(_mmdd_shift(pairs, y, years[1]))
    return out


def _earliest(docs: list[Doc], y: int) -> dict:
    winners = top({d.symbol: _day(d.gold[RECORD]).toordinal() for d in docs}, 1, highest=False)
    sa = [f"证券代码{d.symbol}在{y}年的股权登记日为{d.gold[RECORD]}" for d in docs]
    day = by_symbol(docs)[winners[0]].gold[RECORD]
    final = f"根据{y}年股权登记日数据，股权登记日最早的公司证券代码为：{zh_list(winners)}{tie_note_zh(winners, 1)}，对应日期为：{day}"
    return item(
        f"{ZH_PREFIX}请根据你知识库中{y}年的数据，股权登记日最早的公司证券代码是什么？",
        docs,
        [RECORD],
        sa,
        final,
    )


def _min_gap(docs: list[Doc], y: int) -> dict:
    gaps = {d.symbol: (_day(d.gold[EX]) - _day(d.gold[RECORD])).days for d in docs}
    best = min(gaps.values())
    winners = sorted(s for s, g in gaps.items() if g == best)
    sa = [
        f"证券代码{d.symbol}在{y}年年度分配中股权登记日为{d.gold[RECORD]}，除权除息日为{d.gold[EX]}，间隔{gaps[d.symbol]}天"
        for d in docs
    ]
    final = f"根据{y}年年度分配数据，股权登记日与除权除息日的最短间隔为{best}天；达到该最短间隔的公司有：{zh_list(winners)}。"
    return item(
        f"{ZH_PREFIX}请根据你知识库中{y}年年度分配的数据，股权登记日与除权除息日的最短间隔是多少天？"
        f"达到该最短间隔的公司证券代码有哪些（含并列）？",
        docs,
        [RECORD, EX],
        sa,
        final,
    )


def _before_july(docs: list[Doc], y: int) -> dict:
    hits = [d.symbol for d in docs if _day(d.gold[RECORD]).month < 7]
    sa = [
        f"证券代码{d.symbol}在{y}年年度分配的股权登记日为{d.gold[RECORD]}，{'早于' if d.symbol in hits else '不早于'}7月1日"
        for d in docs
    ]
    final = f"根据{y}年年度分配数据，股权登记日在{y + 1}年7月1日之前的公司共有{len(hits)}家" + (
        f"：{zh_list(hits)}" if hits else ""
    )
    return item(
        f"{ZH_PREFIX}在你的知识库中{y}年年度分配的股权登记日早于{y + 1}年7月1日的公司有多少家？",
        docs,
        [RECORD],
        sa,
        final,
    )


def _mmdd_shift(pairs, y1: int, y2: int) -> dict:
    def doy(mmdd: str) -> int:  # day of year in a fixed leap year, so 02-29 never breaks
        return dt.date.fromisoformat(f"2000-{mmdd}").timetuple().tm_yday

    k = min(3, len(pairs))
    shifts = {a.symbol: abs(doy(b.gold[MMDD]) - doy(a.gold[MMDD])) for a, b in pairs}
    winners = top(shifts, k)
    sa = [
        f"证券代码{a.symbol}的股权登记日从{a.gold[MMDD]}调整到{b.gold[MMDD]}，变化{shifts[a.symbol]}天"
        for a, b in pairs
    ]
    final = f"根据{y1}-{y2}年股权登记日数据，日期变化最大的{ZH_K[k]}家公司证券代码分别为：{zh_list(winners)}{tie_note_zh(winners, k)}"
    docs = pair_docs(pairs)
    return item(
        f"{ZH_PREFIX}请给出你知识库中{y1}-{y2}年股权登记日（月-日）变化天数最大的{ZH_K[k]}家公司证券代码",
        docs,
        [MMDD],
        sa,
        final,
    )


def meeting_questions(groups: dict, years: list[int]) -> list[dict]:
    y = years[0]
    docs = groups.get((MEETING, y), [])
    if len(docs) < 2:
        return []
    out = [
        _top(docs, y, RATIO, "出席股份比例", "%", "年度股东大会", "年度股东大会"),
        _top(docs, y, PEOPLE, "出席股东及股东代表人数", "人", "年度股东大会", "年度股东大会"),
        _extra_line(docs, y),
        _mode(docs, y, METHODS, "召开方式组合"),
        _mode(docs, y, VOTING, "一种或多种表决方式组合"),
        _busiest_month(docs, y),
    ]
    pairs = year_pairs(groups, MEETING, years)
    if len(pairs) >= 2:
        out.append(_more_extraordinary(pairs, y, years[1]))
    return out


def _more_extraordinary(pairs, y1: int, y2: int) -> dict:
    hits = [a.symbol for a, b in pairs if b.gold[EXTRA] > a.gold[EXTRA]]
    sa = [
        f"证券代码{a.symbol}在{y1}年召开临时股东大会{a.gold[EXTRA]}次，{y2}年召开{b.gold[EXTRA]}次"
        for a, b in pairs
    ]
    final = f"根据{y1}-{y2}年临时股东大会数据，{y2}年召开次数多于{y1}年的公司共有{len(hits)}家" + (
        f"：{zh_list(hits)}" if hits else ""
    )
    docs = pair_docs(pairs)
    return item(
        f"{ZH_PREFIX}在你的知识库中，{y2}年召开临时股东大会的次数比{y1}年多的公司有多少家？分别是哪些？",
        docs,
        [EXTRA],
        sa,
        final,
    )


def _extra_line(docs: list[Doc], y: int) -> dict:
    k = min(3, len(docs))
    counts = {d.symbol: d.gold[EXTRA] for d in docs}
    winners = top(counts, k)
    sa = [f"证券代码{d.symbol}在{y}年召开临时股东大会{d.gold[EXTRA]}次" for d in docs]
    detail = "、".join(f"{s}（{counts[s]}次）" for s in winners)
    final = f"根据{y}年临时股东大会数据，达到第{k}名次数线及以上的公司有：{detail}。"
    return item(
        f"{ZH_PREFIX}请给出你知识库中{y}年召开临时股东大会次数不低于第{k}名次数线的全部公司证券代码及召开次数（含并列）",
        docs,
        [EXTRA],
        sa,
        final,
    )


def _mode(docs: list[Doc], y: int, field: str, noun: str) -> dict:
    best, n = most_common({d.symbol: d.gold[field] for d in docs})
    sa = [f"证券代码{d.symbol}在{y}年年度股东大会采用{'、'.join(d.gold[field])}" for d in docs]
    combos = "；".join(f"“{'、'.join(b)}”" for b in best)
    final = f"根据{y}年年度股东大会数据，按{noun}统计，最常见的{noun}是{combos}，共有{n}家公司采用。"
    return item(f"{ZH_PREFIX}在你的知识库中{y}年年度股东大会最常见的{noun}是什么？", docs, [field], sa, final)


def _busiest_month(docs: list[Doc], y: int) -> dict:
    per_month: dict[int, set] = {}
    for d in docs:
        for event in d.gold[EVENTS]:
            per_month.setdefault(event["month"], set()).add(d.symbol)
    best = max(len(s) for s in per_month.values())
    months = sorted(m for m, s in per_month.items() if len(s) == best)
    sa = [
        f"证券代码{d.symbol}在{y}年"
        + "，".join(f"{e['month']}月召开{e['meeting_type']}" for e in d.gold[EVENTS])
        for d in docs
    ]
    final = f"根据{y}年股东大会时间分布，{'、'.join(f'{m}月' for m in months)}召开股东大会的公司最多，共有{best}家公司"
    return item(f"{ZH_PREFIX}在你的知识库中{y}年哪个月份召开股东大会的公司最多？", docs, [EVENTS], sa, final)
