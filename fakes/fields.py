"""The fake analyst's vocabulary: which question words mean which field, and how filings label it.

A keyword table like an analyst's cheat sheet, written from the public MuDABench field list (names,
descriptions, units). It holds no values and never reads gold answers or truth files.
"""

from __future__ import annotations

from dataclasses import dataclass

ZH_ANNUAL, ZH_ESG, ZH_DIVIDEND, ZH_MEETING, US_ANNUAL = (
    "A股年报",
    "A股ESG报告",
    "A股利润分配权益类公告",
    "A股股东大会类公告",
    "US Stock Annual Report",
)
DOCTYPES = (US_ANNUAL, ZH_ANNUAL, ZH_ESG, ZH_DIVIDEND, ZH_MEETING)


@dataclass(frozen=True)
class FieldRule:
    name: str
    description: str  # what the planner writes into FieldSpec.description (the filing's language)
    type: str
    unit: str
    doctype: str
    question_words: tuple[str, ...]  # any of these in the question selects the field
    labels: tuple[str, ...] = ()  # how a filing labels it (defaults to the description)
    not_after: tuple[str, ...] = ()  # a label preceded by these is a sibling metric, not this one
    hint: str = ""  # words that find the right page (a table heading), added to the sub-query

    def filing_labels(self) -> tuple[str, ...]:
        return self.labels or (self.description.rstrip("。."),)


def _r(name, description, type_, unit, doctype, words, labels=(), not_after=(), hint=""):
    return FieldRule(
        name, description, type_, unit, doctype, tuple(words), tuple(labels), tuple(not_after), hint
    )


# Order matters: the first rules are the more specific ones ("operating profit" before "profit").
RULES: tuple[FieldRule, ...] = (
    _r(
        "capital_adequacy_ratio",
        "资本充足率。",
        "percent",
        "percent",
        ZH_ANNUAL,
        ["资本充足率", "资本增长率"],
        ["资本充足率"],
        not_after=["一级", "核心"],
    ),
    _r("total_operating_cost", "营业总成本。", "number", "CNY", ZH_ANNUAL, ["营业总成本"]),
    _r(
        "net_profit",
        "净利润。",
        "number",
        "CNY",
        ZH_ANNUAL,
        ["净利润"],
        not_after=["归属于母公司股东的", "扣除非经常性损益的"],
    ),
    _r(
        "accounting_firm_name",
        "会计师事务所名称。",
        "string",
        "none",
        ZH_ANNUAL,
        ["会计师事务所", "会计事务所"],
        ["会计师事务所名称", "境内会计师事务所", "会计师事务所"],
    ),
    _r(
        "office_address",
        "办公地址。",
        "string",
        "none",
        ZH_ANNUAL,
        ["办公地址"],
        not_after=["会计师事务所", "事务所"],
    ),
    _r(
        "female_executive_names",
        "女性高管姓名列表。",
        "list",
        "none",
        ZH_ANNUAL,
        ["女性高管姓名", "女性高管名单", "哪些女性高管"],
        ["女性高管"],
        hint="董事、监事和高级管理人员基本情况 姓名 职务 性别",
    ),
    _r(
        "female_executive_count",
        "女性高管人数。",
        "integer",
        "people",
        ZH_ANNUAL,
        ["女性高管"],
        ["女性高管人数", "女性高管"],
        hint="董事、监事和高级管理人员基本情况 姓名 职务 性别",
    ),
    _r(
        "largest_shareholder_holding_ratio",
        "第一大股东持股比例。",
        "percent",
        "percent",
        ZH_ANNUAL,
        ["第一大股东"],
        ["第一大股东持股比例", "持股比例(%)", "持股比例"],
        hint="前十名股东持股情况 股东名称 持股比例",
    ),
    _r(
        "assurance_org_name",
        "第三方审验机构名称。",
        "string",
        "none",
        ZH_ESG,
        ["审验机构", "鉴证机构"],
        ["审验机构", "鉴证机构"],
    ),
    _r(
        "big4_auditor_client",
        "是否为四大会计师事务所客户。",
        "boolean",
        "none",
        ZH_ESG,
        ["四大"],
        ["普华永道", "德勤", "安永", "毕马威"],
    ),
    _r("uses_gri_standard", "是否使用或参照 GRI 标准。", "boolean", "none", ZH_ESG, ["GRI"], ["GRI"]),
    _r(
        "third_party_assured",
        "是否经过第三方审验。",
        "boolean",
        "none",
        ZH_ESG,
        ["第三方审验", "第三方鉴证"],
        ["第三方审验", "第三方鉴证", "独立鉴证"],
    ),
    _r(
        "social_donation",
        "社会捐赠额。",
        "number",
        "CNY",
        ZH_ESG,
        ["社会捐赠", "捐赠"],
        ["社会捐赠", "对外捐赠", "捐赠"],
    ),
    _r("tax_total", "纳税总额。", "number", "CNY", ZH_ESG, ["纳税总额", "纳税"], ["纳税总额"]),
    _r(
        "social_contribution_per_share",
        "每股社会贡献值。",
        "number",
        "CNY",
        ZH_ESG,
        ["每股社会贡献"],
        ["每股社会贡献值"],
    ),
    _r(
        "environment_protection_disclosed",
        "是否披露环境和可持续发展信息。",
        "boolean",
        "none",
        ZH_ESG,
        ["环境"],
        ["环境保护", "可持续发展"],
    ),
    _r(
        "shareholder_protection_disclosed",
        "是否披露股东权益保护。",
        "boolean",
        "none",
        ZH_ESG,
        ["股东权益"],
        ["股东权益保护"],
    ),
    _r(
        "creditor_protection_disclosed",
        "是否披露债权人权益保护。",
        "boolean",
        "none",
        ZH_ESG,
        ["债权人"],
        ["债权人权益保护"],
    ),
    _r(
        "staff_protection_disclosed",
        "是否披露职工权益保护。",
        "boolean",
        "none",
        ZH_ESG,
        ["职工", "员工权益"],
        ["职工权益保护"],
    ),
    _r(
        "customer_protection_disclosed",
        "是否披露客户权益保护。",
        "boolean",
        "none",
        ZH_ESG,
        ["客户"],
        ["客户权益保护"],
    ),
    _r(
        "supplier_protection_disclosed",
        "是否披露供应商权益保护。",
        "boolean",
        "none",
        ZH_ESG,
        ["供应商"],
        ["供应商权益保护"],
    ),
    _r(
        "public_relations_disclosed",
        "是否披露公共关系和社会公益事业。",
        "boolean",
        "none",
        ZH_ESG,
        ["公共关系", "社会公益"],
        ["公共关系", "社会公益"],
    ),
    _r("work_safety_disclosed", "是否披露安全生产。", "boolean", "none", ZH_ESG, ["安全生产"], ["安全生产"]),
    _r(
        "system_construction_disclosed",
        "是否披露社会责任制度建设及改善措施。",
        "boolean",
        "none",
        ZH_ESG,
        ["制度建设"],
        ["制度建设"],
    ),
    _r("deficiency_disclosed", "是否披露公司存在的不足。", "boolean", "none", ZH_ESG, ["不足"], ["不足"]),
    _r(
        "pre_tax_dividend_per_share",
        "税前每股股利。",
        "number",
        "CNY",
        ZH_DIVIDEND,
        ["每股股利", "派息", "分红", "股利"],
        ["每10股派", "每股派", "税前", "每股股利", "派发现金红利"],
    ),
    _r("record_date", "股权登记日。", "date", "date", ZH_DIVIDEND, ["股权登记日", "登记日"]),
    _r("ex_dividend_date", "除权除息日。", "date", "date", ZH_DIVIDEND, ["除权除息日", "除息日"]),
    _r(
        "attending_shareholders_and_proxies_count",
        "年度股东大会出席股东及股东代表人数。",
        "integer",
        "people",
        ZH_MEETING,
        ["出席股东", "股东代表人数", "出席人数"],
        ["出席会议的股东和代理人人数", "股东及股东代表", "出席股东"],
    ),
    _r(
        "attending_shares_count",
        "年度股东大会出席股份总数。",
        "integer",
        "shares",
        ZH_MEETING,
        ["出席股份总数", "表决权股份总数"],
        ["所持有表决权的股份总数", "出席股份总数", "股份总数"],
    ),
    _r(
        "attendance_share_ratio",
        "年度股东大会出席股份比例。",
        "percent",
        "percent",
        ZH_MEETING,
        ["出席股份比例", "出席比例", "股份比例"],
        ["占公司有表决权股份总数的比例", "出席股份比例", "比例"],
    ),
    _r(
        "annual_meeting_methods",
        "年度股东大会召开方式列表。",
        "list",
        "none",
        ZH_MEETING,
        ["召开方式"],
        ["召开方式"],
    ),
    _r(
        "annual_meeting_voting_methods",
        "年度股东大会表决方式列表。",
        "list",
        "none",
        ZH_MEETING,
        ["表决方式"],
        ["表决方式"],
    ),
    _r(
        "extraordinary_shareholder_meeting_count",
        "临时股东大会次数。",
        "integer",
        "count",
        ZH_MEETING,
        ["临时股东大会"],
        ["临时股东大会"],
    ),
    # US annual reports (English). Ratio questions pull their two statement items.
    _r(
        "total_liabilities",
        "total liabilities.",
        "number",
        "USD",
        US_ANNUAL,
        ["total liabilities", "debt-to-assets", "debt to assets"],
        ["total liabilities"],
    ),
    _r(
        "total_assets",
        "total assets.",
        "number",
        "USD",
        US_ANNUAL,
        [
            "total assets",
            "debt-to-assets",
            "debt to assets",
            "intangible",
            "to-total-assets",
            "to total assets",
        ],
        ["total assets"],
    ),
    _r(
        "intangible_assets",
        "intangible assets.",
        "number",
        "USD",
        US_ANNUAL,
        ["intangible"],
        ["intangible assets"],
    ),
    _r("inventory", "inventory.", "number", "USD", US_ANNUAL, ["inventory"], ["inventories", "inventory"]),
    _r(
        "current_assets",
        "total current assets.",
        "number",
        "USD",
        US_ANNUAL,
        ["current assets", "inventory-to"],
        ["total current assets"],
    ),
    _r(
        "operating_profit",
        "operating profit.",
        "number",
        "USD",
        US_ANNUAL,
        ["operating profit", "operating income"],
        ["operating profit", "operating income", "income from operations"],
    ),
    _r(
        "net_profit",
        "net profit.",
        "number",
        "USD",
        US_ANNUAL,
        ["net profit", "net income"],
        ["net income", "net profit"],
    ),
    _r(
        "operating_revenue",
        "operating revenue.",
        "number",
        "USD",
        US_ANNUAL,
        ["operating revenue", "revenue", "gross profit margin", "gross margin"],
        ["total revenues", "total revenue", "revenues", "revenue"],
    ),
    _r(
        "operating_costs",
        "operating costs.",
        "number",
        "USD",
        US_ANNUAL,
        ["gross profit margin", "gross margin", "operating cost"],
        ["cost of revenues", "cost of revenue", "cost of sales", "operating costs"],
    ),
    _r(
        "other_business_revenue",
        "other business revenue.",
        "number",
        "USD",
        US_ANNUAL,
        ["other-business", "other business"],
        ["other business revenue", "other revenue"],
    ),
    _r(
        "main_business_revenue",
        "main business revenue.",
        "number",
        "USD",
        US_ANNUAL,
        ["other-business", "other business", "main business"],
        ["main business revenue"],
    ),
    _r(
        "shareholders_equity",
        "shareholders' equity.",
        "number",
        "USD",
        US_ANNUAL,
        ["equity"],
        [
            "total shareholders' equity",
            "total stockholders' equity",
            "shareholders' equity",
            "stockholders' equity",
        ],
    ),
)

# Ratio columns the code-writer derives from two extracted items: (result name, numerator, denominator).
RATIOS = {
    "debt-to-assets": ("debt_to_assets_ratio", "total_liabilities", "total_assets"),
    "debt to assets": ("debt_to_assets_ratio", "total_liabilities", "total_assets"),
    "intangible": ("intangible_to_total_assets_ratio", "intangible_assets", "total_assets"),
    "inventory": ("inventory_to_current_assets_ratio", "inventory", "current_assets"),
    "other business revenue": ("other_business_revenue_ratio", "other_business_revenue", "operating_revenue"),
}
# Margins it derives: (result name, revenue, cost) -> (revenue - cost) / revenue. Without this rule it
# ranked "the highest gross profit margin" by operating revenue and said so as an answer (a confident
# wrong answer about another figure, on 2 of the 40 demo questions).
MARGINS = {
    "gross profit margin": ("gross_profit_margin", "operating_revenue", "operating_costs"),
    "gross margin": ("gross_profit_margin", "operating_revenue", "operating_costs"),
}


def rules_for(question: str) -> list[FieldRule]:
    """The fields a question needs, most specific first, each name once."""
    text = question.lower()
    chosen: dict[str, FieldRule] = {}
    for rule in RULES:
        if rule.name in chosen:
            continue
        if any(w.lower() in text for w in rule.question_words):
            if rule.name == "female_executive_count" and "female_executive_names" in chosen:
                continue
            chosen[rule.name] = rule
    return list(chosen.values())


def rule_named(name: str, description: str = "") -> FieldRule | None:
    """The rule for a field the planner named: by name (in the description's language), else by description."""
    candidates = [r for r in RULES if r.name == name]
    if description:
        english = description.isascii()
        same_language = [r for r in candidates if (r.doctype == US_ANNUAL) == english]
        candidates = same_language or candidates
    if candidates:
        return candidates[0]
    desc = description.strip().lower().rstrip("。.")
    return next((r for r in RULES if desc and r.description.lower().rstrip("。.") == desc), None)
