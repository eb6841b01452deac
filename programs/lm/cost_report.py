"""What a run cost, in words: tokens and dollars per stage, and what the fact store saved.

The figures are the LM watch's per-stage counts of one run (lm_progress.RunCounts.stages()); this
module only words them, for the console (collate ask, evaluate.run, optimize.compile) and keeps the
same figures as plain data for summary.json and answer.json. A stage with calls of unknown price says
"price unknown" and the setting that prices it, never $0: an unknown price is not a free one.
"""

from __future__ import annotations

from programs.lm.stages import STAGES


def price_setting(stage: str, own_model: bool) -> str:
    """The variables that price a stage's model (its own, or COLLATE_LM's)."""
    suffix = f"_{stage.upper()}" if own_model and stage in STAGES else ""
    return f"COLLATE_PRICE_IN{suffix}/_OUT{suffix}"


def model_of(settings, stage: str) -> str | None:
    """The model a stage ran (None when the settings are not at hand or the stage is not one of ours)."""
    if settings is None:
        return None
    return settings.model_for(stage) if stage in STAGES else settings.lm


def cost_figures(stages: dict, facts_saved_calls: int = 0, settings=None) -> dict:
    """The run's cost as plain data: tokens in/out, dollars of the priced calls, whether every call was
    priced (and, for those that were not, the setting that prices them -> the model), and what the fact
    store saved (calls, and tokens at this run's mean extraction call)."""
    tokens_in = sum(int(c.get("tokens_in", 0)) for c in stages.values())
    tokens_out = sum(int(c.get("tokens_out", 0)) for c in stages.values())
    unpriced = [stage for stage, c in stages.items() if c.get("unpriced_calls")]
    extraction = stages.get("extractor") or {}
    paid = int(extraction.get("calls", 0)) - int(extraction.get("cache_hits", 0))
    per_call = (
        (int(extraction.get("tokens_in", 0)) + int(extraction.get("tokens_out", 0))) / paid
        if paid > 0
        else None
    )
    return {
        "tokens_in": tokens_in,
        "tokens_out": tokens_out,
        "usd": round(sum(float(c.get("usd", 0.0)) for c in stages.values()), 8),
        "price_known": not unpriced,
        "unpriced_stages": unpriced,
        "unpriced_models": {
            price_setting(stage, stage in own_models(settings)): model_of(settings, stage) or "the model"
            for stage in unpriced
        },
        "facts_saved_calls": facts_saved_calls,
        "facts_saved_tokens": round(facts_saved_calls * per_call) if per_call is not None else None,
    }


def own_models(settings) -> set[str]:
    """The stages that run a model of their own, whose price setting has the stage's name."""
    return {
        row.name
        for row in STAGES.values()
        if not row.fallback or (settings is not None and getattr(settings, row.model))
    }


def cost_lines(
    stages: dict, facts_saved_calls: int = 0, settings=None, figures: dict | None = None
) -> list[str]:
    """'cost: 52,130 tokens in / 3,210 out, $0.0312' and one line per stage. `settings` (a Settings) or
    `figures` (cost_figures made with them, e.g. a summary's) name the models of unknown price."""
    if not stages:
        return []
    figures = figures or cost_figures(stages, facts_saved_calls, settings)
    fix = "; ".join(
        f"{model} is in no price table: set {setting}, dollars per million tokens"
        for setting, model in figures.get("unpriced_models", {}).items()
    )
    if figures["price_known"]:
        dollars = f"${figures['usd']:.4f}"
    elif figures["usd"]:
        dollars = f"${figures['usd']:.4f} for the priced stages, price unknown for the others ({fix})"
    else:
        dollars = f"price unknown ({fix})"
    lines = [f"cost: {figures['tokens_in']:,} tokens in / {figures['tokens_out']:,} out, {dollars}"]
    width = max(len(stage) for stage in stages)
    for stage, c in stages.items():
        calls = int(c.get("calls", 0))
        cached = int(c.get("cache_hits", 0))
        price = "price unknown" if c.get("unpriced_calls") else f"${float(c.get('usd', 0.0)):.4f}"
        lines.append(
            f"  {stage:<{width}} {calls:>4} call{' ' if calls == 1 else 's'}"
            + (f" ({cached} cached)" if cached else "")
            + f" {int(c.get('tokens_in', 0)):>9,} in {int(c.get('tokens_out', 0)):>7,} out  {price}"
        )
    facts_saved_calls = int(figures.get("facts_saved_calls") or 0)
    if facts_saved_calls:
        tokens = figures["facts_saved_tokens"]
        lines.append(
            f"  fact store: {facts_saved_calls} document{'' if facts_saved_calls == 1 else 's'} answered from "
            f"stored facts, {facts_saved_calls} extraction call{'' if facts_saved_calls == 1 else 's'} saved"
            + (f" (~{tokens:,} tokens at this run's mean call)" if tokens is not None else "")
        )
    return lines
