"""The MuDABench field keys this corpus fills, with their schema text, per doctype.

Keys and descriptions are copied from the public MuDABench question sets so that our dataset has the
same shape as the real one. `COMPONENT_FIELDS` are statement items the US ratio fields are computed from;
they are not MuDABench keys, but truth.jsonl records them so extraction can be scored item by item.
"""

from __future__ import annotations

US = "US Stock Annual Report"
ANNUAL = "A股年报"
ESG = "A股ESG报告"
DIVIDEND = "A股利润分配权益类公告"
MEETING = "A股股东大会类公告"
DOCTYPES = (US, ANNUAL, ESG, DIVIDEND, MEETING)
A_SHARE_DOCTYPES = (ANNUAL, ESG, DIVIDEND, MEETING)

FIELDS: dict[str, dict[str, str]] = {
    US: {
        "value_total_assets_usd": "total assets.",
        "value_total_liabilities_usd": "total liabilities.",
        "value_shareholders_equity_usd": "shareholders' equity.",
        "value_operating_revenue_usd": "operating revenue.",
        "value_operating_profit_usd": "operating profit.",
        "value_net_profit_usd": "net profit.",
        "value_debt_to_assets_ratio": "Debt-to-assets ratio (total_liabilities_usd / total_assets_usd)",
        "value_gross_profit_margin": "Gross profit margin ((operating_revenue_usd - operating_costs_usd) / operating_revenue_usd)",
        "value_intangible_to_total_assets_ratio": "Intangible-assets-to-total-assets ratio (intangible_assets_usd / total_assets_usd)",
        "value_inventory_to_current_assets_ratio": "Inventory-to-current-assets ratio (inventory_usd / current_assets_usd)",
        "value_other_business_revenue_ratio": "Other-business-revenue ratio (other_business_revenue_usd / (other_business_revenue_usd + main_business_revenue_usd))",
    },
    ANNUAL: {
        "value_capital_adequacy_ratio_pct": "资本充足率。",
        "value_total_operating_cost_cny": "营业总成本。",
        "value_net_profit_cny": "净利润。",
        "value_accounting_firm_name": "会计师事务所名称。",
        "value_office_address": "办公地址。",
        "value_largest_shareholder_holding_ratio_pct": "第一大股东持股比例。",
        "value_female_executive_count": "女性高管人数。",
    },
    ESG: {
        "value_environment_protection_disclosed": "是否披露环境和可持续发展信息。",
        "value_shareholder_protection_disclosed": "是否披露股东权益保护。",
        "value_creditor_protection_disclosed": "是否披露债权人权益保护。",
        "value_staff_protection_disclosed": "是否披露职工权益保护。",
        "value_supplier_protection_disclosed": "是否披露供应商权益保护。",
        "value_customer_protection_disclosed": "是否披露客户权益保护。",
        "value_public_relations_disclosed": "是否披露公共关系和社会公益事业。",
        "value_system_construction_disclosed": "是否披露社会责任制度建设及改善措施。",
        "value_work_safety_disclosed": "是否披露安全生产。",
        "value_deficiency_disclosed": "是否披露公司存在的不足。",
        "value_uses_gri_standard": "是否使用或参照 GRI 标准。",
        "value_third_party_assured": "是否经过第三方审验。",
        "value_assurance_org_name": "第三方审验机构名称。",
        "value_big4_auditor_client": "是否为四大会计师事务所客户。",
        "value_social_donation_10k_cny": "社会捐赠额。",
        "value_tax_total_10k_cny": "纳税总额。",
        "value_social_contribution_per_share_cny": "每股社会贡献值。",
    },
    DIVIDEND: {
        "value_pre_tax_dividend_per_share_cny": "税前每股股利。",
        "value_record_date": "股权登记日。",
        "value_record_date_mmdd": "股权登记日（月-日）。",
        "value_ex_dividend_date": "除权除息日。",
    },
    MEETING: {
        "value_attending_shareholders_and_proxies_count": "年度股东大会出席股东及股东代表人数。",
        "value_attending_shares_count": "年度股东大会出席股份总数。",
        "value_attendance_share_ratio_pct": "年度股东大会出席股份比例。",
        "value_annual_meeting_methods": "年度股东大会召开方式列表。",
        "value_annual_meeting_voting_methods": "年度股东大会表决方式列表。",
        "value_extraordinary_shareholder_meeting_count": "临时股东大会次数。",
        "value_shareholder_meeting_events": "股东大会事件列表。",
    },
}

# Statement items behind the US ratios (not MuDABench keys; recorded in truth.jsonl only).
COMPONENT_FIELDS: dict[str, str] = {
    "value_operating_costs_usd": "operating costs (cost of revenue).",
    "value_intangible_assets_usd": "intangible assets.",
    "value_inventory_usd": "inventory.",
    "value_current_assets_usd": "total current assets.",
    "value_main_business_revenue_usd": "main business revenue.",
    "value_other_business_revenue_usd": "other business revenue.",
}


def description(field: str) -> str:
    for per_type in FIELDS.values():
        if field in per_type:
            return per_type[field]
    return COMPONENT_FIELDS[field]


def language(doctype: str) -> str:
    return "en" if doctype == US else "zh"
