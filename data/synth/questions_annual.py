"""Gold questions over A股年报: top-k, ratio top-k, growth, range/std, change detection, filter+count."""

from __future__ import annotations

from .fields import ANNUAL
from .qkit import ZH_K, ZH_PREFIX, Doc, growth, item, pair_docs, pstdev, tie_note_zh, top, year_pairs, zh_list

CAR, COST, NET = "value_capital_adequacy_ratio_pct", "value_total_operating_cost_cny", "value_net_profit_cny"
FIRM, ADDR = "value_accounting_firm_name", "value_office_address"
HOLDER, FEMALE = "value_largest_shareholder_holding_ratio_pct", "value_female_executive_count"


def _top_metric(docs: list[Doc], year: int, field: str, noun: str, unit: str, ask: str) -> dict:
    k = min(3, len(docs))
    scores = {d.symbol: d.gold[field] for d in docs}
    winners = top(scores, k)
    sa = [f"根据{year}年数据，股票代码{d.symbol}的{noun}为{d.gold[field]}{unit}" for d in docs]
    final = f"根据{year}年数据分析，{noun}{ask}的{ZH_K[k]}家公司股票代码分别是：{zh_list(winners)}{tie_note_zh(winners, k)}。"
    return item(
        f"{ZH_PREFIX}请你给出你知识库中{year}年{noun}{ask}的{ZH_K[k]}家公司股票代码", docs, [field], sa, final
    )


def annual_questions(groups: dict, years: list[int]) -> list[dict]:
    y1 = years[0]
    docs = groups.get((ANNUAL, y1), [])
    out: list[dict] = []
    if len(docs) >= 2:
        out.append(_top_metric(docs, y1, CAR, "资本充足率", "%", "最高"))
        out.append(
            _top_metric(docs, y1, HOLDER, "第一大股东持股比率", "%", "前三" if len(docs) >= 3 else "最高")
        )
        out.append(_female(docs, y1))
        out.append(_cost_range(docs, y1))
        out.append(_car_std(docs, y1))
        out.append(_ratio_top(docs, y1))
        out.append(_city_count(docs, y1))
        out.append(_outliers(docs, y1))
    pairs = year_pairs(groups, ANNUAL, years)
    if len(pairs) >= 2:
        y2 = years[1]
        out.append(_changed(pairs, y1, y2, FIRM, "会计事务所"))
        out.append(_changed(pairs, y1, y2, ADDR, "办公地址"))
        out.append(_both_growth(pairs, y1, y2))
        out.append(_growth_top(pairs, y1, y2))
        out.append(_composite(pairs, y1, y2))
    return out


def _female(docs: list[Doc], year: int) -> dict:
    k = min(3, len(docs))
    scores = {d.symbol: d.gold[FEMALE] for d in docs}
    winners = top(scores, k)
    sa = [f"股票代码{d.symbol}在{year}年共有{d.gold[FEMALE]}名女性高管" for d in docs]
    detail = "、".join(f"{s}（{scores[s]}名）" for s in winners)
    final = f"根据{year}年数据分析，女性高管最多的{ZH_K[k]}家公司股票代码分别是：{detail}{tie_note_zh(winners, k)}。"
    return item(
        f"{ZH_PREFIX}{year}年你的知识库中女性高管最多的{ZH_K[k]}家公司的股票代码是？（如有并列请全部列出）",
        docs,
        [FEMALE],
        sa,
        final,
    )


def _cost_range(docs: list[Doc], year: int) -> dict:
    values = [d.gold[COST] for d in docs]
    sa = [f"根据{year}年数据，股票代码{d.symbol}的营业总成本为{d.gold[COST]:.2f}元" for d in docs]
    final = f"根据{year}年数据分析，知识库中公司营业总成本的极差为{max(values) - min(values):.2f}元。"
    return item(f"{ZH_PREFIX}请你计算你知识库中{year}年公司营业总成本的极差是多少？", docs, [COST], sa, final)


def _car_std(docs: list[Doc], year: int) -> dict:
    std = pstdev([d.gold[CAR] for d in docs])
    sa = [f"根据{year}年数据，股票代码{d.symbol}的资本充足率为{d.gold[CAR]}%" for d in docs]
    final = f"根据{year}年数据分析，各公司资本充足率的总体标准差为{std:.4f}个百分点。"
    return item(f"{ZH_PREFIX}请你计算你知识库中{year}年各公司资本充足率的总体标准差", docs, [CAR], sa, final)


def _ratio_top(docs: list[Doc], year: int) -> dict:
    k = min(3, len(docs))
    scores = {d.symbol: d.gold[NET] / d.gold[COST] for d in docs}
    winners = top(scores, k)
    sa = [
        f"股票代码{d.symbol}在{year}年的净利润为{d.gold[NET]:.2f}元，营业总成本为{d.gold[COST]:.2f}元，"
        f"净利润与营业总成本之比为{scores[d.symbol]:.4f}"
        for d in docs
    ]
    final = f"根据{year}年数据分析，净利润与营业总成本之比最高的{ZH_K[k]}家公司股票代码分别是：{zh_list(winners)}。"
    return item(
        f"{ZH_PREFIX}请你给出你知识库中{year}年净利润与营业总成本之比（净利润÷营业总成本）最高的{ZH_K[k]}家公司股票代码",
        docs,
        [NET, COST],
        sa,
        final,
    )


def _city_count(docs: list[Doc], year: int) -> dict:
    cities = ["深圳", "北京", "上海", "杭州"]
    counts = {c: sum(c in d.gold[ADDR] for d in docs) for c in cities}
    city = next((c for c in cities if counts[c] >= 1), "深圳")
    sa = [
        f"股票代码{d.symbol}的办公地址为：{d.gold[ADDR]}，{'在' if city in d.gold[ADDR] else '不在'}{city}"
        for d in docs
    ]
    final = f"根据{year}年数据分析，办公地址在{city}的公司共有{counts[city]}家。"
    return item(f"{ZH_PREFIX}在你的知识库中{year}年有多少家办公地址在{city}的公司？", docs, [ADDR], sa, final)


def _changed(pairs, y1: int, y2: int, field: str, noun: str) -> dict:
    changed = [a.symbol for a, b in pairs if a.gold[field] != b.gold[field]]
    sa = [
        f"股票代码{a.symbol}在{y1}年到{y2}年期间"
        + (
            f"更换了{noun}，从{a.gold[field]}更换为{b.gold[field]}"
            if a.gold[field] != b.gold[field]
            else f"未更换{noun}"
        )
        for a, b in pairs
    ]
    final = (
        f"根据{y1}年到{y2}年数据分析，更换了{noun}的公司股票代码有：{zh_list(changed)}。"
        if changed
        else f"根据{y1}年到{y2}年数据分析，没有公司更换{noun}。"
    )
    docs = pair_docs(pairs)
    verb = "更换了会计事务所" if field == FIRM else "办公地址发生变更"
    return item(f"{ZH_PREFIX}请你给出你知识库中{y1}-{y2}年{verb}的公司股票代码", docs, [field], sa, final)


def _both_growth(pairs, y1: int, y2: int) -> dict:
    winners, sa = [], []
    for a, b in pairs:
        gc, gn = growth(b.gold[COST], a.gold[COST]), growth(b.gold[NET], a.gold[NET])
        sa.append(
            f"股票代码{a.symbol}在{y1}年到{y2}年期间，营业总成本增长率为{gc * 100:.2f}%，净利润增长率为{gn * 100:.2f}%"
        )
        if gc > 0 and gn > 0:
            winners.append(a.symbol)
    final = (
        f"根据{y1}年到{y2}年数据分析，营业总成本和净利润都实现正向增长的公司有：{zh_list(winners)}。"
        if winners
        else f"根据{y1}年到{y2}年数据分析，没有营业总成本和净利润都实现正向增长的公司。"
    )
    docs = pair_docs(pairs)
    return item(
        f"{ZH_PREFIX}从你的知识库中，{y1}年至{y2}年之间，营业总成本和净利润都实现正向增长的公司的股票代码是？",
        docs,
        [COST, NET],
        sa,
        final,
    )


def _growth_top(pairs, y1: int, y2: int) -> dict:
    k = min(3, len(pairs))
    scores = {a.symbol: growth(b.gold[NET], a.gold[NET]) for a, b in pairs}
    winners = top(scores, k)
    sa = [
        f"股票代码{a.symbol}的净利润从{y1}年的{a.gold[NET]:.2f}元变为{y2}年的{b.gold[NET]:.2f}元，"
        f"增长率为{scores[a.symbol] * 100:.2f}%"
        for a, b in pairs
    ]
    detail = "、".join(f"{s}（{scores[s] * 100:.2f}%）" for s in winners)
    final = f"根据{y1}年到{y2}年数据分析，净利润增长率最高的{ZH_K[k]}家公司股票代码分别是：{detail}。"
    docs = pair_docs(pairs)
    return item(
        f"{ZH_PREFIX}请你给出你知识库中{y1}-{y2}年净利润增长率最高的{ZH_K[k]}家公司股票代码",
        docs,
        [NET],
        sa,
        final,
    )


def _outliers(docs: list[Doc], year: int) -> dict:
    mean = sum(d.gold[COST] for d in docs) / len(docs)
    hits = [d.symbol for d in docs if d.gold[COST] > 2 * mean]
    sa = [f"根据{year}年数据，股票代码{d.symbol}的营业总成本为{d.gold[COST]:.2f}元" for d in docs]
    head = f"根据{year}年数据分析，各公司营业总成本的平均值为{mean:.2f}元，"
    final = head + (
        f"超过平均值2倍的公司股票代码有：{zh_list(hits)}。" if hits else "没有营业总成本超过平均值2倍的公司。"
    )
    return item(
        f"{ZH_PREFIX}请你找出你知识库中{year}年营业总成本超过所有公司平均值2倍的公司股票代码",
        docs,
        [COST],
        sa,
        final,
    )


def _composite(pairs, y1: int, y2: int) -> dict:
    k = min(3, len(pairs))
    scores, sa = {}, []
    for a, b in pairs:
        g_car, g_net, g_cost = (growth(b.gold[f], a.gold[f]) for f in (CAR, NET, COST))
        scores[a.symbol] = 0.4 * g_car + 0.3 * g_net - 0.3 * g_cost
        sa.append(
            f"股票代码{a.symbol}在{y1}年到{y2}年期间：资本充足率增长率{g_car * 100:.2f}%，净利润增长率{g_net * 100:.2f}%，"
            f"营业总成本增长率{g_cost * 100:.2f}%，综合得分{scores[a.symbol]:.4f}"
        )
    winners = top(scores, k)
    final = (
        f"根据{y1}年到{y2}年数据分析，按综合得分=资本充足率增长率×40%+净利润增长率×30%−营业总成本增长率×30%计算，"
        f"综合财务表现最优的{ZH_K[k]}家公司股票代码分别是：{zh_list(winners)}。"
    )
    docs = pair_docs(pairs)
    return item(
        f"{ZH_PREFIX}请你给出你知识库中{y1}-{y2}年期间综合财务表现最优的{ZH_K[k]}家公司股票代码"
        f"（综合得分=资本充足率增长率×40%+净利润增长率×30%−营业总成本增长率×30%，增长率=(后一年−前一年)÷|前一年|）",
        docs,
        [CAR, NET, COST],
        sa,
        final,
    )
