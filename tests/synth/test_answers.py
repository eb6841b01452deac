"""Growth, date and frequency answers recomputed from each question's metadata, independently of the generator.

test_dataset.py covers top-k, range, std, counts and changes; these are the two-year and date operations.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter


def _symbols(answer: str) -> list[str]:
    return re.findall(r"\b(\d{6}|[A-Z]{2,4})\b", answer)


def _by_year(rows: list[dict], field: str) -> tuple[dict, dict]:
    first, last = sorted({r["year"] for r in rows})
    return (
        {r["symbol"]: r[field] for r in rows if r["year"] == first},
        {r["symbol"]: r[field] for r in rows if r["year"] == last},
    )


def _growth(before: dict, after: dict) -> dict:
    return {s: (after[s] - before[s]) / abs(before[s]) for s in before}


def _top(scores: dict, k: int) -> list[str]:
    ranked = sorted(scores, key=lambda s: (-scores[s], s))
    return [s for s in ranked if scores[s] >= scores[ranked[min(k, len(ranked)) - 1]]]


def _find(dataset: list[dict], needle: str) -> dict:
    hits = [q for q in dataset if needle in q["question"]]
    assert len(hits) == 1, (needle, len(hits))
    return hits[0]


def test_growth_answers_follow_from_both_years(dataset):
    q = _find(dataset, "净利润增长率最高")
    net = _growth(*_by_year(q["metadata"], "value_net_profit_cny"))
    assert _symbols(q["final_answer"]) == _top(net, 3)
    for s in _top(net, 3):
        assert f"{s}（{net[s] * 100:.2f}%）" in q["final_answer"]

    q = _find(dataset, "都实现正向增长")
    cost = _growth(*_by_year(q["metadata"], "value_total_operating_cost_cny"))
    net = _growth(*_by_year(q["metadata"], "value_net_profit_cny"))
    assert sorted(_symbols(q["final_answer"])) == sorted(s for s in net if net[s] > 0 and cost[s] > 0)

    q = _find(dataset, "total liabilities growth")
    liabilities = _growth(*_by_year(q["metadata"], "value_total_liabilities_usd"))
    assert _symbols(q["final_answer"].split(": ", 1)[1]) == _top(liabilities, 3)


def test_record_date_answers_follow_from_the_dates(dataset):
    q = _find(dataset, "股权登记日最早")
    dates = {r["symbol"]: r["value_record_date"] for r in q["metadata"]}
    first = min(dates.values())
    assert sorted(_symbols(q["final_answer"])) == sorted(s for s, d in dates.items() if d == first)
    assert q["final_answer"].endswith(first)

    q = _find(dataset, "7月1日的公司有多少家")
    early = sorted(s for s, d in dates.items() if dt.date.fromisoformat(d).month < 7)
    assert f"共有{len(early)}家" in q["final_answer"] and sorted(_symbols(q["final_answer"])) == early

    q = _find(dataset, "变化天数最大")
    before, after = _by_year(q["metadata"], "value_record_date_mmdd")
    day = {s: dt.date.fromisoformat(f"2000-{v}").toordinal() for s, v in before.items()}
    shift = {s: abs(dt.date.fromisoformat(f"2000-{after[s]}").toordinal() - day[s]) for s in before}
    assert _symbols(q["final_answer"].split("：", 1)[1]) == _top(shift, 3)


def test_meeting_frequency_answers_follow_from_the_events(dataset):
    q = _find(dataset, "哪个月份召开股东大会的公司最多")
    companies = Counter()
    for r in q["metadata"]:
        for month in {e["month"] for e in r["value_shareholder_meeting_events"]}:
            companies[month] += 1
    best = max(companies.values())
    months = sorted(m for m, n in companies.items() if n == best)
    assert "、".join(f"{m}月" for m in months) + "召开" in q["final_answer"]
    assert q["final_answer"].endswith(f"共有{best}家公司")

    q = _find(dataset, "最常见的召开方式组合")
    combos = Counter("、".join(r["value_annual_meeting_methods"]) for r in q["metadata"])
    top_n = max(combos.values())
    assert f"共有{top_n}家公司采用" in q["final_answer"]
    assert all(f"“{c}”" in q["final_answer"] for c, n in combos.items() if n == top_n)
