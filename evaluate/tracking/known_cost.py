"""The dollar figures a run logs to MLflow: only those that are known, and a note saying why the others are not.

Why: `cost/usd` showed 0 for a model with no price and for a run answered from the cache, so the
comparison view ranked an unpriced or cached variant as free (issue 31). An unknown price is no number:
the metric is left out (MLflow shows an empty cell, which sorts apart from every real figure) and the
run's `cost_note` tag says why and which setting prices it. What was paid is still a figure of its own.
"""

from __future__ import annotations

import re

STAGE_NAME = re.compile(r"[^A-Za-z0-9_.-]")  # lm_progress.stage_metrics: a stage's name in a metric name


def known_cost(metrics: dict, stages: dict, cost: dict | None) -> tuple[dict, str]:
    """(metrics without the dollar figures that are not known, the note saying why; '' when all are)."""
    unpriced = [stage for stage, c in stages.items() if c.get("unpriced_calls")]
    cached = {stage: int(c.get("cache_hits", 0) or 0) for stage, c in stages.items()}
    unknown = {*unpriced, *(stage for stage, hits in cached.items() if hits)}
    if not unknown:
        return metrics, ""
    dropped = {"cost_usd", *(f"cost_usd_{STAGE_NAME.sub('_', stage)}" for stage in unknown)}
    kept = {k: v for k, v in metrics.items() if k not in dropped}
    reasons = []
    if unpriced:
        models = (cost or {}).get("unpriced_models") or {}
        named = "; ".join(
            f"{model} is in no price table (set {setting})" for setting, model in models.items()
        )
        reasons.append(named or f"no price for the model of {', '.join(unpriced)}")
    hits = sum(cached.values())
    if hits:
        calls = sum(int(c.get("calls", 0) or 0) for c in stages.values())
        reasons.append(f"{hits} of {calls} LM calls came from the cache (what they would cost is not known)")
    priced = {stage: c for stage, c in stages.items() if stage not in unpriced}
    if any(int(c.get("calls", 0) or 0) > int(c.get("cache_hits", 0) or 0) for c in priced.values()):
        # cost/paid_usd: what this run did pay for its priced calls (a number only where one was paid for)
        kept["cost_paid_usd"] = round(sum(float(c.get("usd", 0.0) or 0.0) for c in priced.values()), 8)
    return kept, "price unknown: " + "; ".join(reasons)
