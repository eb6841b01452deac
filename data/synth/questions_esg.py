"""Gold questions over A股ESG报告: top-k, filter+count/list, most frequent assurer, formula top-k, range."""

from __future__ import annotations

from .fields import ESG
from .qkit import ZH_K, ZH_PREFIX, Doc, item, most_common, tie_note_zh, top, zh_list

DONATION, TAX, PER_SHARE = "value_social_donation_10k_cny", "value_tax_total_10k_cny", "value_social_contribution_per_share_cny"
ENV, GRI, ASSURED, ORG = ("value_environment_protection_disclosed", "value_uses_gri_standard",
                          "value_third_party_assured", "value_assurance_org_name")
STAKEHOLDERS = {"value_shareholder_protection_disclosed": "股东权益保护", "value_creditor_protection_disclosed": "债权人权益保护",
                "value_staff_protection_disclosed": "职工权益保护", "value_supplier_protection_disclosed": "供应商权益保护",
                "value_customer_protection_disclosed": "客户权益保护"}


def esg_questions(groups: dict, years: list[int]) -> list[dict]:
    y = years[0]
    docs = groups.get((ESG, y), [])
    if len(docs) < 2:
        return []
    out = [_donation_top(docs, y), _count(docs, y, [ENV], "披露了环境和可持续发展信息"),
           _count(docs, y, [GRI], "参照了GRI《可持续发展报告指南》"),
           _count(docs, y, [GRI, ASSURED], "既参照GRI标准又经第三方机构审验"),
           _assured_list(docs, y), _stakeholders(docs, y), _top_assurer(docs, y), _tax_efficiency(docs, y)]
    return [q for q in out if q is not None]


def _donation_top(docs: list[Doc], y: int) -> dict:
    k = min(3, len(docs))
    winners = top({d.symbol: d.gold[DONATION] for d in docs}, k)
    sa = [f"证券代码{d.symbol}在{y}年的社会捐赠额为{d.gold[DONATION]}万元" for d in docs]
    final = f"根据{y}年社会捐赠数据，捐赠额最高的{ZH_K[k]}家公司股票代码分别为：{zh_list(winners)}"
    return item(f"{ZH_PREFIX}请你给出你知识库中{y}年社会捐赠额最高的{ZH_K[k]}家公司股票代码", docs, [DONATION], sa, final)


def _count(docs: list[Doc], y: int, fields: list[str], what: str) -> dict:
    hits = [d for d in docs if all(d.gold[f] for f in fields)]
    labels = {ENV: "披露环境和可持续发展信息", GRI: "参照GRI标准", ASSURED: "经第三方机构审验"}
    sa = [f"证券代码{d.symbol}在{y}年" + "，".join(("" if d.gold[f] else "未") + labels[f] for f in fields) for d in docs]
    final = f"根据{y}年ESG报告数据分析，共有{len(hits)}家公司{what}"
    return item(f"{ZH_PREFIX}在你的知识库中{y}年有多少家公司的ESG报告{what}？", docs, fields, sa, final)


def _assured_list(docs: list[Doc], y: int) -> dict:
    hits = [d.symbol for d in docs if d.gold[ASSURED]]
    sa = [f"证券代码{d.symbol}在{y}年的ESG报告{'经过' if d.gold[ASSURED] else '未经过'}第三方机构审验" for d in docs]
    final = (f"根据{y}年第三方审验数据，经第三方机构审验的公司股票代码为：{zh_list(hits)}" if hits
             else f"根据{y}年第三方审验数据，没有公司的ESG报告经第三方机构审验")
    return item(f"{ZH_PREFIX}请你给出你知识库中{y}年ESG报告经第三方机构审验的公司股票代码", docs, [ASSURED], sa, final)


def _stakeholders(docs: list[Doc], y: int) -> dict:
    fields = list(STAKEHOLDERS)
    hits = [d.symbol for d in docs if all(d.gold[f] for f in fields)]
    sa = []
    for d in docs:
        shown = [name for f, name in STAKEHOLDERS.items() if d.gold[f]]
        sa.append(f"证券代码{d.symbol}在{y}年披露了{'、'.join(shown)}信息" if shown else f"证券代码{d.symbol}在{y}年未披露利益相关者权益保护信息")
    final = (f"根据{y}年ESG报告，完整披露所有利益相关者权益保护信息的公司股票代码为：{zh_list(hits)}" if hits
             else f"根据{y}年ESG报告，没有公司完整披露所有利益相关者权益保护信息")
    return item(f"{ZH_PREFIX}请你给出你知识库中{y}年ESG报告中披露了所有利益相关者权益保护信息（包括股东、债权人、职工、供应商、"
                f"客户权益五个方面）的公司股票代码", docs, fields, sa, final)


def _top_assurer(docs: list[Doc], y: int) -> dict | None:
    orgs = {d.symbol: d.gold[ORG] for d in docs if d.gold[ORG]}
    if not orgs:
        return None
    best, n = most_common(orgs)
    sa = [f"证券代码{d.symbol}在{y}年" + (f"经{d.gold[ORG]}审验" if d.gold[ORG] else "未经第三方审验") for d in docs]
    final = f"根据{y}年第三方审验机构客户数量统计，审验客户数量最多的机构是{'、'.join(best)}（{n}家客户）"
    if len(best) > 1:
        final += "，并列最多"
    return item(f"{ZH_PREFIX}在你的ESG报告知识库中{y}年审验客户数量最多的第三方审验机构是哪家？", docs,
                [ASSURED, ORG], sa, final)


def _tax_efficiency(docs: list[Doc], y: int) -> dict | None:
    scores = {d.symbol: d.gold[TAX] / d.gold[PER_SHARE] for d in docs if d.gold[TAX] and d.gold[PER_SHARE]}
    if len(scores) < 2:
        return None
    k = min(3, len(scores))
    winners = top(scores, k)
    sa = [f"证券代码{d.symbol}在{y}年的纳税效率为{scores[d.symbol]:.2f}" if d.symbol in scores
          else f"证券代码{d.symbol}在{y}年缺少纳税总额或每股社会贡献值数据" for d in docs]
    final = f"根据{y}年纳税效率计算结果，纳税效率最高的{ZH_K[k]}家公司股票代码分别为：{zh_list(winners)}{tie_note_zh(winners, k)}"
    return item(f"{ZH_PREFIX}请根据你知识库中{y}年的数据，计算纳税效率（纳税效率=纳税总额÷每股社会贡献值），"
                f"给出最高的{ZH_K[k]}家公司股票代码", docs, [TAX, PER_SHARE], sa, final)
