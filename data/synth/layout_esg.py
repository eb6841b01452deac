"""A股ESG报告: about-this-report (standards, assurance, auditor), one chapter per disclosed topic, KPI table.

A topic counts as disclosed when the report has a chapter for it; its heading is the truth string. GRI use
and third-party assurance are stated in the compilation notes (GRI the way the style says:
esg_standards.py); a report without assurance says so in some documents and is silent in others. 社会捐赠 appears in the public-welfare chapter (with the prior
year beside it) and in the KPI table in 万元; 纳税总额 in the KPI table in 万元 and in prose in 亿元.
Some reports answer the compilation questions with checkboxes ("是否经第三方机构鉴证：□是 √否"), and some
print the KPI table two indicators to a line, current year only (data/synth/style.py).
"""

from __future__ import annotations

from . import esg_standards, fmt
from .page import Page
from .writer import mark

TOPIC_TITLES = {
    "value_environment_protection_disclosed": "环境保护与可持续发展",
    "value_shareholder_protection_disclosed": "股东权益保护",
    "value_creditor_protection_disclosed": "债权人权益保护",
    "value_staff_protection_disclosed": "职工权益保护",
    "value_supplier_protection_disclosed": "供应商权益保护",
    "value_customer_protection_disclosed": "客户及消费者权益保护",
    "value_public_relations_disclosed": "公共关系与社会公益事业",
    "value_system_construction_disclosed": "社会责任制度建设及改善措施",
    "value_work_safety_disclosed": "安全生产",
    "value_deficiency_disclosed": "存在的不足与改进方向",
}
TOPIC_TEXT = {
    "value_environment_protection_disclosed": "本行践行绿色发展理念，推进节能减排和绿色运营，报告期末绿色贷款余额{green}亿元。",
    "value_shareholder_protection_disclosed": "本行严格履行信息披露义务，保障股东知情权、参与权和决策权，保持稳定的现金分红政策。",
    "value_creditor_protection_disclosed": "本行坚持稳健经营，严格执行资本和流动性管理要求，切实保障债权人合法权益。",
    "value_staff_protection_disclosed": "本行依法保障员工权益，报告期末在职员工{employees}人，员工培训覆盖率100%。",
    "value_supplier_protection_disclosed": "本行建立公开透明的集中采购机制，与供应商签订廉洁协议，平等对待各类供应商。",
    "value_customer_protection_disclosed": "本行将消费者权益保护纳入公司治理，完善投诉处理机制，客户满意度持续提升。",
    "value_public_relations_disclosed": "本行积极投身乡村振兴和社会公益事业，组织员工志愿服务活动。",
    "value_system_construction_disclosed": "本行制定社会责任管理办法，明确董事会、高级管理层在社会责任工作中的职责。",
    "value_work_safety_disclosed": "本行落实安全生产责任制，开展消防演练和安全检查，全年未发生重大安全生产事故。",
    "value_deficiency_disclosed": "对照监管要求和利益相关方期望，本行在环境信息披露的量化程度等方面仍存在不足，将持续改进。",
}
DONATION = "value_social_donation_10k_cny"
TAX = "value_tax_total_10k_cny"


def write_esg(p: Page) -> None:
    w, s, rng = p.w, p.spec, p.spec.rng
    f, prior, c, year = s.facts, s.prior, s.company, s.year
    w.y -= 200
    w.centered(c.name, 20)
    w.centered(rng.choice([f"{year}年度社会责任报告", f"{year}年环境、社会及治理（ESG）报告"]), 18, gap=20)
    w.new_page()
    w.heading("关于本报告")
    w.paragraph(f"报告时间范围：{year}年1月1日至{year}年12月31日。报告组织范围：{c.name}总行及各分支机构。")
    esg_standards.WAYS[p.style.gri](p, f["gri"])
    # the answers as ticked boxes: the ticked one is the answer, both boxes are printed
    if p.style.checkboxes:
        esg_standards.boxes(p, f["gri"], f["assured"])
    if f["assured"]:
        w.paragraph(
            [
                "报告保证：本报告由",
                mark(f["assurer"], "value_assurance_org_name", "value_third_party_assured"),
                "进行独立第三方鉴证，鉴证报告附后。",
            ]
        )
    elif rng.random() < 0.5:
        w.paragraph(
            [
                "报告保证：本报告",
                mark("未经第三方机构鉴证", "value_third_party_assured"),
                "，本行董事会对内容的真实性负责。",
            ]
        )
    w.paragraph(
        [
            "财务数据说明：本报告财务数据摘自经",
            mark(f["auditor"], "value_big4_auditor_client"),
            f"审计的{year}年度财务报告，如与年度报告不一致，以年度报告为准。",
        ]
    )
    topics = [k for k, on in f["esg_topics"].items() if on]
    sections = len(topics) + 2
    p.section_done(0, sections)
    for i, topic in enumerate(topics):
        w.heading(mark(f"{fmt.zh_numeral(i + 1)}、{TOPIC_TITLES[topic]}", topic))
        w.paragraph(
            TOPIC_TEXT[topic].format(green=fmt.grouped(f["green_loans_yi"]), employees=f"{f['employees']:,}")
        )
        if topic == "value_public_relations_disclosed":
            w.paragraph(
                [
                    "报告期内，本行对外捐赠合计",
                    mark(f"{fmt.grouped(f['donation_10k'])}万元", DONATION),
                    f"（上年为{fmt.grouped(prior['donation_10k'])}万元），主要用于乡村振兴、助学和抗灾救助。",
                ]
            )
        p.section_done(i + 1, sections)
    _kpis(p, f, prior, year)
    if f["gri"] and p.style.gri == "gssb_prose":
        esg_standards.gri_index(p)
    p.section_done(sections - 1, sections)


def _kpis(p: Page, f: dict, prior: dict, year: int) -> None:
    w, rng = p.w, p.spec.rng
    w.heading("关键绩效表")
    if f["tax_10k"] is not None:
        w.paragraph(f"报告期内，本行依法纳税{fmt.yi(f['tax_10k'] * 1e4)}，为地方经济发展作出贡献。")
    if f["contribution_per_share"] is not None:
        w.paragraph(
            [
                "以归属于股东的净利润为基础，加上纳税额、职工费用、利息支出和对外捐赠额等计算，本行每股社会贡献值为",
                mark(f"{f['contribution_per_share']:.2f}元", "value_social_contribution_per_share_cny"),
                f"（上年为{fmt.grouped(rng.uniform(1, 18))}元）。",
            ]
        )
    money = fmt.grouped
    rows = [
        ["指标", "单位", f"{year}年", f"{year - 1}年"],
        ["对外捐赠总额", "万元", mark(money(f["donation_10k"]), DONATION), money(prior["donation_10k"])],
        ["员工总数", "人", f"{f['employees']:,}", f"{prior['employees']:,}"],
        ["绿色贷款余额", "亿元", money(f["green_loans_yi"]), money(prior["green_loans_yi"])],
    ]
    if f["tax_10k"] is not None:
        old = money(prior["tax_10k"]) if prior["tax_10k"] is not None else "-"
        rows.insert(2, ["纳税总额", "万元", mark(money(f["tax_10k"]), TAX), old])
    if (
        p.style.paired
    ):  # two indicators to a line, this year only: "对外捐赠总额（万元） 1,234.56 员工总数（人） 5,432"
        cells = [[f"{r[0]}（{r[1]}）", r[2]] for r in rows[1:]]
        if len(cells) % 2:
            cells.append(["", ""])
        paired = [[f"{year}年指标", "数值", "指标", "数值"]]
        paired += [cells[i] + cells[i + 1] for i in range(0, len(cells), 2)]
        w.table(paired, [0.3, 0.2, 0.3, 0.2], align_right_from=9)
        return
    w.table(rows, [0.34, 0.14, 0.26, 0.26], by_column=rng.random() < 0.4, align_right_from=2)
