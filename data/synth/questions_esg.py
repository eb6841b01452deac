"""Gold questions over A股ESG报告: top-k, filter+count/list, most frequent assurer, formula top-k, range."""

from __future__ import annotations

from .fields import ESG
from .qkit import ZH_K, ZH_PREFIX, Doc, item, most_common, pair_docs, tie_note_zh, top, year_pairs, zh_list

BIG4 = "value_big4_auditor_client"
IMPROVE = {
    "value_environment_protection_disclosed": "环境披露",
    "value_shareholder_protection_disclosed": "股东保护",
    "value_staff_protection_disclosed": "员工保护",
    "value_customer_protection_disclosed": "客户保护",
    "value_system_construction_disclosed": "制度建设",
}
DONATION, TAX, PER_SHARE = (
    "value_social_donation_10k_cny",
    "value_tax_total_10k_cny",
    "value_social_contribution_per_share_cny",
)
ENV, GRI, ASSURED, ORG = (
    "value_environment_protection_disclosed",
    "value_uses_gri_standard",
    "value_third_party_assured",
    "value_assurance_org_name",
)
STAKEHOLDERS = {
    "value_shareholder_protection_disclosed": "股东权益保护",
    "value_creditor_protection_disclosed": "债权人权益保护",
    "value_staff_protection_disclosed": "职工权益保护",
    "value_supplier_protection_disclosed": "供应商权益保护",
    "value_customer_protection_disclosed": "客户权益保护",
}


def esg_questions(groups: dict, years: list[int]) -> list[dict]:
    y = years[0]
    docs = groups.get((ESG, y), [])
    if len(docs) < 2:
        return []
    out = [
        _donation_top(docs, y),
        _count(docs, y, [ENV], "披露了环境和可持续发展信息"),
        _count(docs, y, [GRI, ASSURED], "既参照GRI标准又经第三方机构审验"),
        _stakeholders(docs, y),
        _top_assurer(docs, y),
        _tax_efficiency(docs, y),
        _big4_max(docs, y),
    ]
    pairs = year_pairs(groups, ESG, years)
    if len(pairs) >= 2:
        out.append(_improvement(pairs, y, years[1]))
    return [q for q in out if q is not None]


def _donation_top(docs: list[Doc], y: int) -> dict:
    k = min(3, len(docs))
    winners = top({d.symbol: d.gold[DONATION] for d in docs}, k)
    sa = [f"证券代码{d.symbol}在{y}年的社会捐赠额为{d.gold[DONATION]}万元" for d in docs]
    final = f"根据{y}年社会捐赠数据，捐赠额最高的{ZH_K[k]}家公司股票代码分别为：{zh_list(winners)}"
    return item(
        f"{ZH_PREFIX}请你给出你知识库中{y}年社会捐赠额最高的{ZH_K[k]}家公司股票代码",
        docs,
        [DONATION],
        sa,
        final,
    )


def _count(docs: list[Doc], y: int, fields: list[str], what: str) -> dict:
    hits = [d for d in docs if all(d.gold[f] for f in fields)]
    labels = {ENV: "披露环境和可持续发展信息", GRI: "参照GRI标准", ASSURED: "经第三方机构审验"}
    sa = [
        f"证券代码{d.symbol}在{y}年" + "，".join(("" if d.gold[f] else "未") + labels[f] for f in fields)
        for d in docs
    ]
    final = f"根据{y}年ESG报告数据分析，共有{len(hits)}家公司{what}"
    return item(f"{ZH_PREFIX}在你的知识库中{y}年有多少家公司的ESG报告{what}？", docs, fields, sa, final)


def _stakeholders(docs: list[Doc], y: int) -> dict:
    fields = list(STAKEHOLDERS)
    hits = [d.symbol for d in docs if all(d.gold[f] for f in fields)]
    sa = []
    for d in docs:
        shown = [name for f, name in STAKEHOLDERS.items() if d.gold[f]]
        sa.append(
            f"证券代码{d.symbol}在{y}年披露了{'、'.join(shown)}信息"
            if shown
            else f"证券代码{d.symbol}在{y}年未披露利益相关者权益保护信息"
        )
    final = (
        f"根据{y}年ESG报告，完整披露所有利益相关者权益保护信息的公司股票代码为：{zh_list(hits)}"
        if hits
        else f"根据{y}年ESG报告，没有公司完整披露所有利益相关者权益保护信息"
    )
    return item(
        f"{ZH_PREFIX}请你给出你知识库中{y}年ESG报告中披露了所有利益相关者权益保护信息（包括股东、债权人、职工、供应商、"
        f"客户权益五个方面）的公司股票代码",
        docs,
        fields,
        sa,
        final,
    )


def _top_assurer(docs: list[Doc], y: int) -> dict | None:
    orgs = {d.symbol: d.gold[ORG] for d in docs if d.gold[ORG]}
    if not orgs:
        return None
    best, n = most_common(orgs)
    sa = [
        f"证券代码{d.symbol}在{y}年" + (f"经{d.gold[ORG]}审验" if d.gold[ORG] else "未经第三方审验")
        for d in docs
    ]
    final = f"根据{y}年第三方审验机构客户数量统计，审验客户数量最多的机构是{'、'.join(best)}（{n}家客户）"
    if len(best) > 1:
        final += "，并列最多"
    return item(
        f"{ZH_PREFIX}在你的ESG报告知识库中{y}年审验客户数量最多的第三方审验机构是哪家？",
        docs,
        [ASSURED, ORG],
        sa,
        final,
    )


def _tax_efficiency(docs: list[Doc], y: int) -> dict | None:
    scores = {d.symbol: d.gold[TAX] / d.gold[PER_SHARE] for d in docs if d.gold[TAX] and d.gold[PER_SHARE]}
    if len(scores) < 2:
        return None
    k = min(3, len(scores))
    winners = top(scores, k)
    sa = [
        f"证券代码{d.symbol}在{y}年的纳税效率为{scores[d.symbol]:.2f}"
        if d.symbol in scores
        else f"证券代码{d.symbol}在{y}年缺少纳税总额或每股社会贡献值数据"
        for d in docs
    ]
    final = f"根据{y}年纳税效率计算结果，纳税效率最高的{ZH_K[k]}家公司股票代码分别为：{zh_list(winners)}{tie_note_zh(winners, k)}"
    return item(
        f"{ZH_PREFIX}请根据你知识库中{y}年的数据，计算纳税效率（纳税效率=纳税总额÷每股社会贡献值），"
        f"给出最高的{ZH_K[k]}家公司股票代码",
        docs,
        [TAX, PER_SHARE],
        sa,
        final,
    )


def _big4_max(docs: list[Doc], y: int) -> dict | None:
    clients = {d.symbol: d.gold[DONATION] for d in docs if d.gold[BIG4]}
    if not clients:
        return None
    winners = top(clients, 1)
    sa = [
        f"证券代码{d.symbol}在{y}年{'是' if d.gold[BIG4] else '不是'}四大会计师事务所客户，社会捐赠额为{d.gold[DONATION]}万元"
        for d in docs
    ]
    final = (
        f"根据{y}年ESG报告数据，四大会计师事务所客户中社会捐赠额最高的公司股票代码为：{zh_list(winners)}"
        f"{tie_note_zh(winners, 1)}，捐赠额为{clients[winners[0]]}万元"
    )
    return item(
        f"{ZH_PREFIX}在你的知识库中{y}年为四大会计师事务所客户的公司中，社会捐赠额最高的公司股票代码是什么？",
        docs,
        [BIG4, DONATION],
        sa,
        final,
    )


def _improvement(pairs, y1: int, y2: int) -> dict:
    scores, sa = {}, []
    for a, b in pairs:
        gained = [name for f, name in IMPROVE.items() if not a.gold[f] and b.gold[f]]
        scores[a.symbol] = len(gained)
        sa.append(
            f"证券代码{a.symbol}从{y1}年到{y2}年新增披露：{'、'.join(gained) if gained else '无'}，改进分为{len(gained)}"
        )
    best = max(scores.values())
    if best == 0:
        final = f"根据{y1}年和{y2}年ESG披露比较分析，没有改进分大于0的公司。"
    else:
        winners = top({s: v for s, v in scores.items() if v > 0}, 3)
        final = (
            f"根据{y1}年和{y2}年ESG披露比较分析，改进分最高且大于0的公司股票代码为："
            + "、".join(f"{s}（{scores[s]}分）" for s in winners)
            + tie_note_zh(winners, 3)
            + "。"
        )
    docs = pair_docs(pairs)
    return item(
        f"{ZH_PREFIX}请根据你知识库中的数据，比较{y1}年和{y2}年的ESG披露情况，找出改进分最高且大于0的三家公司"
        f"（含并列；若不足3家，则按实际数量返回）。改进定义：在环境披露、股东保护、员工保护、客户保护、制度建设这5个维度中，"
        f"从未披露变为披露的每个维度计一分。",
        docs,
        list(IMPROVE),
        sa,
        final,
    )
