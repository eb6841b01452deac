"""The truth model: every company's facts per year, generated first; PDFs and questions are drawn from it.

Histories start one year before the first requested year so that every report's prior-year column
is the previous report's current value, as in real filings. `gold(doctype, facts)` maps a year's facts
to the MuDABench `value_*` fields of that doctype.
"""

from __future__ import annotations

import datetime as dt
import math
import random

from .companies import Company, make_address
from .fields import ANNUAL, DIVIDEND, ESG, MEETING, US
from .people import executives, shareholders
from .seeding import rng_for

AUDITORS = [
    "毕马威华振会计师事务所(特殊普通合伙)",
    "普华永道中天会计师事务所(特殊普通合伙)",
    "安永华明会计师事务所(特殊普通合伙)",
    "德勤华永会计师事务所(特殊普通合伙)",
    "立信会计师事务所(特殊普通合伙)",
    "天健会计师事务所(特殊普通合伙)",
    "大信会计师事务所(特殊普通合伙)",
    "苏亚金诚会计师事务所(特殊普通合伙)",
]
BIG4 = set(AUDITORS[:4])
ASSURERS = AUDITORS[:4] + ["杭州汉德质量认证服务有限公司", "中国节能皓信(香港)咨询有限公司"]
ESG_TOPICS = {  # field -> probability the report discloses it
    "value_environment_protection_disclosed": 0.9,
    "value_shareholder_protection_disclosed": 0.85,
    "value_creditor_protection_disclosed": 0.6,
    "value_staff_protection_disclosed": 0.85,
    "value_supplier_protection_disclosed": 0.45,
    "value_customer_protection_disclosed": 0.85,
    "value_public_relations_disclosed": 0.7,
    "value_system_construction_disclosed": 0.6,
    "value_work_safety_disclosed": 0.6,
    "value_deficiency_disclosed": 0.5,
}


def _grow(value: float, rng: random.Random, low: float, high: float) -> float:
    return value * (1 + rng.uniform(low, high))


def _log_uniform(rng: random.Random, low: float, high: float) -> float:
    return math.exp(rng.uniform(math.log(low), math.log(high)))


def _business_day_after(day: dt.date, days: int = 1) -> dt.date:
    while days:
        day += dt.timedelta(days=1)
        if day.weekday() < 5:
            days -= 1
    return day


def _weekday_in(rng: random.Random, year: int, start: tuple, end: tuple) -> dt.date:
    first, last = dt.date(year, *start), dt.date(year, *end)
    while True:
        day = first + dt.timedelta(days=rng.randint(0, (last - first).days))
        if day.weekday() < 5:
            return day


def a_share_history(company: Company, years: list[int], seed: int) -> dict[int, dict]:
    rng = rng_for(seed, "history", company.symbol)
    first = min(years) - 1
    revenue = _log_uniform(rng, 8e9, 6e11)  # skewed like real bank sizes: a few giants, many small
    car = rng.uniform(11.5, 17.5)
    total_shares = rng.randint(30, 3000) * 10_000_000
    auditor = rng.choice(AUDITORS)
    address = make_address(company, rng)
    largest = round(rng.uniform(8, 55), 2)
    n_exec, n_female = rng.randint(13, 20), rng.randint(1, 8)
    esg_state = _esg_start(rng)
    history = {}
    for year in range(first, max(years) + 1):
        if year > first:
            revenue = _grow(revenue, rng, -0.08, 0.15)
            car = min(max(car + rng.uniform(-0.9, 0.9), 10.6), 19.0)
            if rng.random() < 0.3:
                auditor = rng.choice([a for a in AUDITORS if a != auditor])
            if rng.random() < 0.2:
                address = make_address(company, rng)
            largest = round(min(max(largest + rng.uniform(-1.5, 1.5), 5), 60), 2)
            n_female = min(max(n_female + rng.choice([-1, 0, 0, 1]), 0), 9)
            esg_state = _esg_next(rng, esg_state)
        yr = rng_for(seed, "year", company.symbol, year)
        cost = round(revenue * yr.uniform(0.55, 0.78), 2)
        non_operating = round(revenue * yr.uniform(-0.004, 0.004), 2)
        total_profit = round(revenue - cost + non_operating, 2)
        net_profit = round(total_profit * (1 - yr.uniform(0.12, 0.22)), 2)
        tier1 = round(car - yr.uniform(0.8, 2.6), 2)
        facts = {
            "revenue": round(revenue, 2),
            "total_operating_cost": cost,
            "non_operating": non_operating,
            "total_profit": total_profit,
            "net_profit": net_profit,
            "parent_net_profit": round(net_profit * yr.uniform(0.93, 0.99), 2),
            "car": round(car, 2),
            "tier1": tier1,
            "core_tier1": round(tier1 - yr.uniform(0.0, 1.4), 2),
            "auditor": auditor,
            "office_address": address,
            "registered_address": make_address(company, yr),
            "total_shares": total_shares,
            "shareholders": shareholders(yr, company.city[1], largest, total_shares),
            "executives": executives(yr, n_female, n_exec),
        }
        facts.update(_esg(yr, auditor, esg_state))
        facts.update(_dividend(yr, year, net_profit, total_shares))
        facts.update(_meetings(yr, year, total_shares))
        history[year] = facts
    return history


def _esg_start(rng: random.Random) -> dict:
    """What a company's ESG reporting practice looks like in the first year."""
    assured = rng.random() < 0.55
    return {
        "topics": {field: rng.random() < p for field, p in ESG_TOPICS.items()},
        "gri": rng.random() < 0.6,
        "assured": assured,
        "assurer": rng.choice(ASSURERS) if assured else None,
    }


def _esg_next(rng: random.Random, state: dict) -> dict:
    """Practice is sticky: a topic is added now and then and rarely dropped; assurers seldom change."""
    topics = {f: (rng.random() < 0.93) if on else (rng.random() < 0.2) for f, on in state["topics"].items()}
    assured = state["assured"] or rng.random() < 0.2
    assurer = state["assurer"] if state["assurer"] and rng.random() < 0.85 else rng.choice(ASSURERS)
    return {
        "topics": topics,
        "gri": state["gri"] or rng.random() < 0.2,
        "assured": assured,
        "assurer": assurer if assured else None,
    }


def _esg(rng: random.Random, auditor: str, state: dict) -> dict:
    return {
        "esg_topics": dict(state["topics"]),
        "gri": state["gri"],
        "assured": state["assured"],
        "assurer": state["assurer"],
        "big4": auditor in BIG4,
        "donation_10k": round(rng.uniform(80, 15000), 2),
        "donation_prior_10k": round(rng.uniform(80, 15000), 2),
        "tax_10k": round(rng.uniform(2e4, 6e6), 2) if rng.random() < 0.75 else None,
        "contribution_per_share": round(rng.uniform(1.2, 18), 2) if rng.random() < 0.6 else None,
        "employees": rng.randint(2000, 60000),
        "green_loans_yi": round(rng.uniform(20, 3000), 2),
    }


def _dividend(rng: random.Random, year: int, net_profit: float, total_shares: int) -> dict:
    per10 = round(rng.uniform(0.8, 6.5), rng.choice([1, 2, 2, 3]))
    record = _weekday_in(rng, year + 1, (5, 6), (7, 25))
    ex = _business_day_after(record, 1 if rng.random() < 0.85 else 2)
    return {
        "per10": per10,
        "per_share": round(per10 / 10, 6),
        "record_date": record,
        "ex_date": ex,
        "pay_date": ex,
        "dividend_total": round(total_shares * per10 / 10, 2),
        "plan_date": _weekday_in(rng, year + 1, (3, 20), (4, 28)),
        "approval_date": _weekday_in(rng, year + 1, (4, 29), (5, 5))
        if record.month > 5
        else record - dt.timedelta(days=14),
    }


def _meeting(rng: random.Random, day: dt.date, total_shares: int, kind: str) -> dict:
    ratio = round(rng.uniform(35, 88), 2)
    return {
        "date": day,
        "type": kind,
        "people": rng.randint(15, 1300),
        "ratio": ratio,
        "shares": int(round(total_shares * ratio / 100)),
        "number": 0,
    }


def _meetings(rng: random.Random, year: int, total_shares: int) -> dict:
    annual_day = _weekday_in(rng, year, (4, 15), (6, 30))
    n_extra = rng.choices([0, 1, 2, 3], weights=[2, 4, 3, 2])[0]
    months = rng.sample([m for m in range(1, 13) if m != annual_day.month], n_extra)
    extra = [
        _meeting(rng, _weekday_in(rng, year, (m, 3), (m, 26)), total_shares, "临时股东大会") for m in months
    ]
    annual = _meeting(rng, annual_day, total_shares, "年度股东大会")
    meetings = sorted([annual, *extra], key=lambda m: m["date"])
    for i, m in enumerate(x for x in meetings if x["type"] == "临时股东大会"):
        m["number"] = i + 1
    return {
        "annual_meeting": annual,
        "meetings": meetings,
        "methods": ["现场投票", "网络投票"] + (["其他方式"] if rng.random() < 0.15 else []),
        "voting": ["逐项表决"] + (["累积投票"] if rng.random() < 0.2 else []),
    }


def us_history(company: Company, years: list[int], seed: int) -> dict[int, dict]:
    rng = rng_for(seed, "history", company.symbol)
    scale = 1_000_000 if rng.random() < 0.3 else 1000
    revenue = _log_uniform(rng, 2e8, 1.2e10) / scale
    assets = revenue * rng.uniform(0.5, 1.6)
    has_inventory = company.industry not in ("Software", "Medical")
    history = {}
    for year in range(min(years) - 1, max(years) + 1):
        if year > min(years) - 1:
            revenue = _grow(revenue, rng, -0.1, 0.2)
            assets = _grow(assets, rng, -0.06, 0.18)
        yr = rng_for(seed, "year", company.symbol, year)
        rev = round(revenue)
        other = round(rev * yr.uniform(0.001, 0.08))
        cost = round(rev * yr.uniform(0.42, 0.8))
        sga, rnd = round(rev * yr.uniform(0.08, 0.2)), round(rev * yr.uniform(0.0, 0.06))
        impairment = _loss_charge(rev - cost - sga - rnd, rev, rng_for(seed, "loss", company.symbol, year))
        op = rev - cost - sga - rnd - impairment
        interest = round(rev * yr.uniform(0.002, 0.02))
        pretax = op - interest
        tax = round(max(pretax, 0) * yr.uniform(0.18, 0.26))
        total_assets = round(assets)
        current = round(total_assets * yr.uniform(0.3, 0.6))
        inventory = round(current * yr.uniform(0.08, 0.5)) if has_inventory else 0
        intangible = round(total_assets * yr.uniform(0.01, 0.25))
        liabilities = round(total_assets * yr.uniform(0.3, 0.85))
        history[year] = {
            "scale": scale,
            "revenue": rev,
            "main_revenue": rev - other,
            "other_revenue": other,
            "cost": cost,
            "gross_profit": rev - cost,
            "sga": sga,
            "rnd": rnd,
            "impairment": impairment,
            "operating_income": op,
            "interest": interest,
            "pretax": pretax,
            "tax": tax,
            "net_income": pretax - tax,
            "total_assets": total_assets,
            "current_assets": current,
            "inventory": inventory,
            "cash": round(current * yr.uniform(0.1, 0.4)),
            "goodwill": round(total_assets * yr.uniform(0.0, 0.1)),
            "intangible": intangible,
            "liabilities": liabilities,
            "current_liabilities": round(liabilities * yr.uniform(0.3, 0.7)),
            "equity": total_assets - liabilities,
            "employees": yr.randint(800, 40000),
            "fiscal_end": dt.date(year, 12, 31)
            if yr.random() < 0.7
            else dt.date(year, yr.choice([1, 6, 9]), 28),
        }
    return history


def _loss_charge(operating_before: int, revenue: int, rng: random.Random) -> int:
    """An impairment that turns about one company-year in five into an operating and net loss.

    Real filers report losses, printed in parentheses ("(1,234)"); a reader that drops the parentheses
    gets the sign wrong. Drawn from its own stream so that the other facts stay what they were.
    """
    if rng.random() >= 0.2:
        return 0
    return max(operating_before, 0) + round(revenue * rng.uniform(0.01, 0.08))


# US gold amount field -> the fact it is; facts are in the statements' unit (thousands or millions).
US_AMOUNTS = {
    "value_total_assets_usd": "total_assets",
    "value_total_liabilities_usd": "liabilities",
    "value_shareholders_equity_usd": "equity",
    "value_operating_revenue_usd": "revenue",
    "value_operating_profit_usd": "operating_income",
    "value_net_profit_usd": "net_income",
}
US_COMPONENTS = {  # the statement items the ratios are computed from (fields.COMPONENT_FIELDS)
    "value_operating_costs_usd": "cost",
    "value_intangible_assets_usd": "intangible",
    "value_inventory_usd": "inventory",
    "value_current_assets_usd": "current_assets",
    "value_main_business_revenue_usd": "main_revenue",
    "value_other_business_revenue_usd": "other_revenue",
}


def _us_dollars(facts: dict, fields: dict[str, str]) -> dict[str, float]:
    """Gold amounts in whole dollars: the statement figure times its `scale`."""
    return {field: float(facts[key] * facts["scale"]) for field, key in fields.items()}


def gold(doctype: str, facts: dict) -> dict:
    """The MuDABench `value_*` fields of one document (plus US statement components)."""
    if doctype == US:
        ratios = {
            "value_debt_to_assets_ratio": facts["liabilities"] / facts["total_assets"],
            "value_gross_profit_margin": (facts["revenue"] - facts["cost"]) / facts["revenue"],
            "value_intangible_to_total_assets_ratio": facts["intangible"] / facts["total_assets"],
            "value_inventory_to_current_assets_ratio": facts["inventory"] / facts["current_assets"],
            "value_other_business_revenue_ratio": facts["other_revenue"] / facts["revenue"],
        }
        # Row order is truth.jsonl order: MuDABench amounts, the ratios, then the statement components.
        return {**_us_dollars(facts, US_AMOUNTS), **ratios, **_us_dollars(facts, US_COMPONENTS)}
    if doctype == ANNUAL:
        return {
            "value_capital_adequacy_ratio_pct": facts["car"],
            "value_total_operating_cost_cny": facts["total_operating_cost"],
            "value_net_profit_cny": facts["net_profit"],
            "value_accounting_firm_name": facts["auditor"],
            "value_office_address": facts["office_address"],
            "value_largest_shareholder_holding_ratio_pct": facts["shareholders"][0]["pct"],
            "value_female_executive_count": sum(p["gender"] == "女" for p in facts["executives"]),
        }
    if doctype == ESG:
        return {
            **facts["esg_topics"],
            "value_uses_gri_standard": facts["gri"],
            "value_third_party_assured": facts["assured"],
            "value_assurance_org_name": facts["assurer"],
            "value_big4_auditor_client": facts["big4"],
            "value_social_donation_10k_cny": facts["donation_10k"],
            "value_tax_total_10k_cny": facts["tax_10k"],
            "value_social_contribution_per_share_cny": facts["contribution_per_share"],
        }
    if doctype == DIVIDEND:
        return {
            "value_pre_tax_dividend_per_share_cny": facts["per_share"],
            "value_record_date": facts["record_date"].isoformat(),
            "value_record_date_mmdd": facts["record_date"].strftime("%m-%d"),
            "value_ex_dividend_date": facts["ex_date"].isoformat(),
        }
    if doctype == MEETING:
        annual = facts["annual_meeting"]
        return {
            "value_attending_shareholders_and_proxies_count": annual["people"],
            "value_attending_shares_count": annual["shares"],
            "value_attendance_share_ratio_pct": annual["ratio"],
            "value_annual_meeting_methods": list(facts["methods"]),
            "value_annual_meeting_voting_methods": list(facts["voting"]),
            "value_extraordinary_shareholder_meeting_count": sum(
                m["type"] == "临时股东大会" for m in facts["meetings"]
            ),
            "value_shareholder_meeting_events": [
                {"month": m["date"].month, "meeting_type": m["type"]} for m in facts["meetings"]
            ],
        }
    raise ValueError(f"unknown doctype {doctype!r}")
