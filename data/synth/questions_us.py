"""Gold questions over US annual reports (English): top-k of items and of ratios, growth, std."""

from __future__ import annotations

from .fields import US
from .qkit import EN_K, EN_PREFIX, Doc, en_list, growth, item, pair_docs, pstdev, tie_note_en, top, year_pairs

# Asked as top-3 questions (the corpus still records every field in truth.jsonl).
METRICS = {
    "value_total_assets_usd": "total assets",
}
RATIOS = {
    "value_debt_to_assets_ratio": "debt-to-assets ratio",
    "value_gross_profit_margin": "gross profit margin",
    "value_inventory_to_current_assets_ratio": "inventory-to-current-assets ratio",
    "value_other_business_revenue_ratio": "share of other business revenue in total revenue",
}


def _money(v: float) -> str:
    return f"${v:,.2f}"


def us_questions(groups: dict, years: list[int]) -> list[dict]:
    y = years[0]
    docs = groups.get((US, y), [])
    out: list[dict] = []
    if len(docs) >= 2:
        out += [_top_metric(docs, y, f, noun) for f, noun in METRICS.items()]
        out += [_top_ratio(docs, y, f, noun) for f, noun in RATIOS.items()]
        out.append(_margin_std(docs, y))
    pairs = year_pairs(groups, US, years)
    if len(pairs) >= 2:
        out.append(_growth(pairs, y, years[1]))
    return out


def _top_metric(docs: list[Doc], y: int, field: str, noun: str) -> dict:
    k = min(3, len(docs))
    winners = top({d.symbol: d.gold[field] for d in docs}, k)
    sa = [f"Company [{d.symbol}] had {noun} of {_money(d.gold[field])} in {y}" for d in docs]
    final = (
        f"Based on {y} data, the top {k} companies by {noun} are: {en_list(winners)}{tie_note_en(winners, k)}"
    )
    return item(
        f"{EN_PREFIX}What are the stock symbols (tickers) of the top {EN_K[k]} companies ranked by {noun} in {y}?",
        docs,
        [field],
        sa,
        final,
    )


def _top_ratio(docs: list[Doc], y: int, field: str, noun: str) -> dict:
    k = min(3, len(docs))
    winners = top({d.symbol: d.gold[field] for d in docs}, k)
    sa = [f"Company [{d.symbol}] had a {noun} of {d.gold[field]:.4f} in {y}" for d in docs]
    final = f"Based on {y} data, the companies with the highest {noun} are: {en_list(winners)}{tie_note_en(winners, k)}"
    return item(
        f"{EN_PREFIX}Which {EN_K[k]} companies had the highest {noun} in {y}? Provide their stock symbols.",
        docs,
        [field],
        sa,
        final,
    )


def _margin_std(docs: list[Doc], y: int) -> dict:
    field = "value_gross_profit_margin"
    std = pstdev([d.gold[field] for d in docs])
    sa = [
        f"Company [{d.symbol}] had a gross profit margin of {d.gold[field] * 100:.2f}% in {y}" for d in docs
    ]
    final = (
        f"Based on {y} data, the population standard deviation of gross profit margins across the companies is "
        f"{std:.4f} ({std * 100:.2f} percentage points)"
    )
    return item(
        f"{EN_PREFIX}What is the population standard deviation of the gross profit margin across the companies "
        f"in {y}?",
        docs,
        [field],
        sa,
        final,
    )


def _growth(pairs, y1: int, y2: int) -> dict:
    field = "value_total_liabilities_usd"
    k = min(3, len(pairs))
    scores = {a.symbol: growth(b.gold[field], a.gold[field]) for a, b in pairs}
    winners = top(scores, k)
    sa = [
        f"Company [{a.symbol}] had total liabilities of {_money(a.gold[field])} in {y1} and {_money(b.gold[field])} "
        f"in {y2}, with a liabilities growth of {scores[a.symbol] * 100:.2f}%"
        for a, b in pairs
    ]
    final = (
        f"From {y1} to {y2}, the companies with the highest total liabilities growth are: {en_list(winners)}"
    )
    docs = pair_docs(pairs)
    return item(
        f"{EN_PREFIX}Which {EN_K[k]} companies achieved the highest total liabilities growth from {y1} to {y2}? "
        f"Provide their stock symbols.",
        docs,
        [field],
        sa,
        final,
    )
