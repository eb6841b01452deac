"""A股年报 (bank annual report): company profile, key indicators, capital ratios, governance, holders, statements.

Truth lives where a real report puts it: 办公地址 and the auditor in 公司简介 (next to the registered
address and the auditor's own office address), 资本充足率 among its sibling ratios with the prior year
beside it (a table, or prose only in some reports), 营业总成本 and 净利润 in the income statement in 元
(and again in 亿元 in the MD&A), the largest holder in 前十名股东, women in the executives table.

As in real reports (data/synth/style.py): the unit in the title, on its own line ("单位：元  币种：人民币")
or in the header row; 监管标准 and 附注 cells before the values ("资本充足率 ≥10.75（注 2） 13.11%",
"五、净利润 七、45 1,234.56"); "□是 √否" answers; an income statement that runs over a page break with
its header on the first page only.
"""

from __future__ import annotations

from . import fmt
from .page import Page
from .writer import mark

CAR = "value_capital_adequacy_ratio_pct"
COST = "value_total_operating_cost_cny"
NET = "value_net_profit_cny"


def _change(now: float, before: float) -> str:
    return f"{(now / before - 1) * 100:.2f}%" if before else "-"


def write_annual(p: Page) -> None:
    s = p.spec
    sections = [_cover, _profile, _mdna, _governance, _holders, _statements]
    for i, section in enumerate(sections):
        section(p, s.facts, s.prior, s.company, s.rng, s.year)
        p.section_done(i, len(sections))


def _cover(p, f, prior, c, rng, year):
    w = p.w
    w.y -= 180
    w.centered(c.name, 20)
    w.centered(f"{year}年年度报告", 18, gap=20)
    w.centered(f"股票代码：{c.symbol}    股票简称：{c.short_name}", 11, gap=40)
    w.centered(f"{year + 1}年3月", 11, gap=200)
    w.new_page()
    w.heading("第一节  重要提示")
    w.paragraph(
        f"本行董事会、监事会及董事、监事、高级管理人员保证年度报告内容的真实性、准确性、完整性，"
        f"不存在虚假记载、误导性陈述或重大遗漏，并承担个别和连带的法律责任。{f['auditor']}为本行出具了"
        f"标准无保留意见的审计报告。"
    )
    w.paragraph(
        "本报告中“本行”指" + c.name + "；“本集团”指本行及其附属公司。除特别说明外，金额币种为人民币。"
    )


def _profile(p, f, prior, c, rng, year):
    w = p.w
    w.heading("第二节  公司简介和主要财务指标")
    w.paragraph("一、公司信息", indent=False)
    firm_address = rng.choice(
        ["北京市东城区东长安街1号东方广场", "上海市浦东新区世纪大道100号", "上海市黄浦区延安东路222号"]
    )
    rows = [
        ["项目", "内容"],
        ["公司的中文名称", c.name],
        ["股票简称", c.short_name],
        ["股票代码", c.symbol],
        ["注册地址", f["registered_address"]],
        ["办公地址", mark(f["office_address"], "value_office_address")],
        ["公司聘请的会计师事务所名称", mark(f["auditor"], "value_accounting_firm_name")],
        ["会计师事务所办公地址", firm_address],
        ["签字会计师姓名", "、".join(x["name"] for x in f["executives"][-2:])],
    ]
    if rng.random() < 0.7:
        w.table(rows, [0.32, 0.68], align_right_from=9)
    else:  # some reports list the profile as "label：value" lines instead of a table
        for label, value in rows[1:]:
            w.paragraph([f"{label}：", value], indent=False)
    m = 1e6
    rows = [
        [
            _titled(p, "二、主要会计数据和财务指标", "人民币百万元"),
            f"{year}年",
            f"{year - 1}年",
            "本年比上年增减",
        ],
        [
            "营业收入",
            fmt.grouped(f["revenue"] / m),
            fmt.grouped(prior["revenue"] / m),
            _change(f["revenue"], prior["revenue"]),
        ],
        [
            "利润总额",
            fmt.grouped(f["total_profit"] / m),
            fmt.grouped(prior["total_profit"] / m),
            _change(f["total_profit"], prior["total_profit"]),
        ],
        [
            "归属于母公司股东的净利润",
            fmt.grouped(f["parent_net_profit"] / m),
            fmt.grouped(prior["parent_net_profit"] / m),
            _change(f["parent_net_profit"], prior["parent_net_profit"]),
        ],
    ]
    w.table(rows, [0.37, 0.21, 0.21, 0.21], by_column=rng.random() < 0.3)
    if p.style.checkboxes:
        w.paragraph("公司是否需追溯调整或重述以前年度会计数据：□是 √否", indent=False)
    w.paragraph("三、资本充足率", indent=False)
    now, before = f, prior
    if p.style.notes_before_values:
        _capital_with_thresholds(p, now, before, rng, year)
    elif rng.random() < 0.7:
        rows = [
            ["项目", f"{year}年12月31日", f"{year - 1}年12月31日"],
            ["核心一级资本充足率", fmt.pct(now["core_tier1"]), fmt.pct(before["core_tier1"])],
            ["一级资本充足率", fmt.pct(now["tier1"]), fmt.pct(before["tier1"])],
            ["资本充足率", mark(fmt.pct(now["car"]), CAR), fmt.pct(before["car"])],
        ]
        if rng.random() < 0.5:
            rows[1:] = rows[1:][::-1]
        w.table(rows, [0.4, 0.3, 0.3], by_column=rng.random() < 0.4)
    else:  # prose only: the ratio and its siblings in one sentence, prior year right after
        w.paragraph(
            [
                "报告期末，本集团核心一级资本充足率为",
                fmt.pct(now["core_tier1"]),
                "，一级资本充足率为",
                fmt.pct(now["tier1"]),
                "，资本充足率为",
                mark(fmt.pct(now["car"]), CAR),
                f"，上年末分别为{fmt.pct(before['core_tier1'])}、{fmt.pct(before['tier1'])}和"
                f"{fmt.pct(before['car'])}，均满足监管要求。",
            ]
        )


def _titled(p: Page, title: str, unit: str) -> str:
    """Where the document prints a table's unit; returns the first header cell ("项目", or the unit)."""
    w, place = p.w, p.style.unit_place
    if place == "title":
        w.paragraph(f"{title}（单位：{unit}）", indent=False)
        return "项目"
    w.paragraph(title, indent=False)
    if place == "line":
        w.aside(
            p.spec.rng.choice([f"（货币单位：{unit}）", f"单位：{unit.removeprefix('人民币')}  币种：人民币"])
        )
        return "项目"
    return f"（货币单位：{unit}）"


def _capital_with_thresholds(p: Page, now: dict, before: dict, rng, year: int) -> None:
    """The regulatory minimum (and a note marker) printed between a ratio's name and its values."""
    extra = rng.choice([0.0, 0.25, 0.75])  # the systemic-importance add-on some banks carry
    note = rng.randint(1, 3)
    rows = [
        ["项目", "监管标准", f"{year}年12月31日", f"{year - 1}年12月31日"],
        [
            "核心一级资本充足率",
            f"≥{7.5 + extra:.2f}",
            fmt.pct(now["core_tier1"]),
            fmt.pct(before["core_tier1"]),
        ],
        ["一级资本充足率", f"≥{8.5 + extra:.2f}", fmt.pct(now["tier1"]), fmt.pct(before["tier1"])],
        [
            "资本充足率",
            f"≥{10.5 + extra:.2f}（注 {note}）",
            mark(fmt.pct(now["car"]), CAR),
            fmt.pct(before["car"]),
        ],
    ]
    p.w.table(rows, [0.3, 0.2, 0.25, 0.25], by_column=rng.random() < 0.3)
    p.w.paragraph(
        f"注 {note}：根据《商业银行资本管理办法》及系统重要性银行附加监管要求，本行资本充足率不得低于"
        f"{10.5 + extra:.2f}%。",
        indent=False,
        size=p.w.size - 1,
    )


def _mdna(p, f, prior, c, rng, year):
    w = p.w
    w.heading("第三节  管理层讨论与分析")
    w.paragraph(
        f"报告期内，本集团实现营业收入{fmt.yi(f['revenue'])}，同比{_word(f['revenue'], prior['revenue'])}"
        f"{abs(f['revenue'] / prior['revenue'] - 1) * 100:.2f}%；营业总成本{fmt.yi(f['total_operating_cost'])}，"
        f"上年为{fmt.yi(prior['total_operating_cost'])}；实现净利润{fmt.yi(f['net_profit'])}，"
        f"归属于母公司股东的净利润{fmt.yi(f['parent_net_profit'])}。"
    )
    w.paragraph(
        p.fill.rng.choice(["本行坚持稳中求进工作总基调，", "面对复杂严峻的外部环境，"])
        + "持续优化资产负债结构，资本充足水平保持稳健，主要监管指标持续满足监管要求。"
    )


def _word(now: float, before: float) -> str:
    return "增长" if now >= before else "下降"


def _governance(p, f, prior, c, rng, year):
    w = p.w
    w.heading("第四节  公司治理")
    w.paragraph("一、董事、监事和高级管理人员基本情况", indent=False)
    rows = [["姓名", "职务", "性别", "年龄", "任期起始日期"]]
    for person in f["executives"]:
        name = (
            mark(person["name"], "value_female_executive_count")
            if person["gender"] == "女"
            else person["name"]
        )
        start = f"{rng.randint(year - 8, year)}年{rng.randint(1, 12)}月"
        rows.append([name, person["title"], person["gender"], str(person["age"]), start])
    w.table(rows, [0.16, 0.36, 0.1, 0.1, 0.28], by_column=rng.random() < 0.3, align_right_from=9)
    w.paragraph("二、报告期内离任董事、监事和高级管理人员", indent=False)
    left = [
        ["姓名", "原任职务", "性别", "离任原因"],
        [
            rng.choice("王李张刘陈杨") + rng.choice(["建华", "晓梅", "志强", "丽娟"]),
            "副行长",
            rng.choice(["男", "女"]),
            "工作调动",
        ],
    ]
    w.table(left, [0.2, 0.3, 0.15, 0.35], align_right_from=9)


def _holders(p, f, prior, c, rng, year):
    w = p.w
    w.heading("第五节  股份变动及股东情况")
    w.paragraph(
        f"截至报告期末，本行普通股股东总数为{rng.randint(20000, 400000):,}户，"
        f"总股本为{f['total_shares']:,}股。前十名股东持股情况如下："
    )
    rows = [["股东名称", "持股比例(%)", "持股总数(股)", "报告期内增减(股)"]]
    before = {h["name"]: h["shares"] for h in prior["shareholders"]}
    for i, holder in enumerate(f["shareholders"]):
        ratio = f"{holder['pct']:.2f}"
        delta = holder["shares"] - before.get(holder["name"], holder["shares"])
        rows.append(
            [
                holder["name"],
                mark(ratio, "value_largest_shareholder_holding_ratio_pct") if i == 0 else ratio,
                f"{holder['shares']:,}",
                f"{delta:,}",
            ]
        )
    w.table(rows, [0.4, 0.16, 0.24, 0.2], by_column=rng.random() < 0.3)
    top = prior["shareholders"][0]
    w.paragraph(f"上年末，第一大股东{top['name']}持股比例为{top['pct']:.2f}%。")


def _statements(p, f, prior, c, rng, year):
    w = p.w
    w.heading("第十节  财务报告")
    w.paragraph(
        f"审计报告：我们审计了{c.name}的财务报表，包括{year}年12月31日的合并资产负债表，{year}年度的合并利润表。"
        f"我们认为，后附的财务报表在所有重大方面按照企业会计准则的规定编制。——{f['auditor']}"
    )
    first = _titled(p, "合并利润表", "人民币元")

    def split(facts):  # cost components that add up to 营业总成本, in cents
        total = facts["total_operating_cost"]
        parts = [round(total * share, 2) for share in (0.62, 0.03, 0.27)]
        return parts + [round(total - sum(parts), 2)]

    def other_income(facts):  # 其他综合收益的税后净额: small, either sign (not asked)
        return round(facts["net_profit"] * rng.uniform(-0.03, 0.03), 2)

    now_parts, old_parts = split(f), split(prior)
    now_oci, old_oci = other_income(f), other_income(prior)
    g = fmt.grouped

    def eps(x):
        return f"{x['parent_net_profit'] / x['total_shares']:.2f}"

    rows = [
        [first, f"{year}年度", f"{year - 1}年度"],
        ["一、营业总收入", g(f["revenue"]), g(prior["revenue"])],
        ["二、营业总成本", mark(g(f["total_operating_cost"]), COST), g(prior["total_operating_cost"])],
        ["其中：业务及管理费", g(now_parts[0]), g(old_parts[0])],
        ["税金及附加", g(now_parts[1]), g(old_parts[1])],
        ["信用减值损失", g(now_parts[2]), g(old_parts[2])],
        ["其他业务成本", g(now_parts[3]), g(old_parts[3])],
        [
            "三、营业利润",
            g(f["revenue"] - f["total_operating_cost"]),
            g(prior["revenue"] - prior["total_operating_cost"]),
        ],
        ["加：营业外收支净额", g(f["non_operating"]), g(prior["non_operating"])],
        ["四、利润总额", g(f["total_profit"]), g(prior["total_profit"])],
        [
            "减：所得税费用",
            g(f["total_profit"] - f["net_profit"]),
            g(prior["total_profit"] - prior["net_profit"]),
        ],
        ["五、净利润", mark(g(f["net_profit"]), NET), g(prior["net_profit"])],
        ["（一）按所有权归属分类", "", ""],
        ["1.归属于母公司股东的净利润", g(f["parent_net_profit"]), g(prior["parent_net_profit"])],
        [
            "2.少数股东损益",
            g(f["net_profit"] - f["parent_net_profit"]),
            g(prior["net_profit"] - prior["parent_net_profit"]),
        ],
        ["六、其他综合收益的税后净额", g(now_oci), g(old_oci)],
        ["七、综合收益总额", g(f["net_profit"] + now_oci), g(prior["net_profit"] + old_oci)],
        ["八、每股收益：", "", ""],
        ["（一）基本每股收益（元/股）", eps(f), eps(prior)],
        ["（二）稀释每股收益（元/股）", eps(f), eps(prior)],
    ]
    widths = [0.36, 0.32, 0.32]
    if p.style.notes_before_values:  # the 附注 column: "七、43" between a line item and its figures
        refs = iter(range(rng.randint(25, 40), 99))
        rows = [
            [r[0], "附注" if i == 0 else (f"七、{next(refs)}" if r[1] and rng.random() < 0.7 else ""), *r[1:]]
            for i, r in enumerate(rows)
        ]
        widths = [0.34, 0.1, 0.28, 0.28]
    body = len(rows) - 1
    w.table(
        rows,
        widths,
        by_column=rng.random() < 0.35,
        totals=(1, 2, 7, 9, 11, 16),
        align_right_from=2 if p.style.notes_before_values else 1,
        repeat_header=not p.style.split,
        break_after=rng.randint(5, body - 4) if p.style.split else None,
    )
