"""What a model's tokens cost: the user's price where they gave one, else DSPy's offline price table.

Why two sources: DSPy ships LiteLLM's price list (dspy.clients.model_metadata; read offline, the
project sets LITELLM_LOCAL_MODEL_COST_MAP) and prices hosted models from it, but a local server's model
(openai/qwen2.5-7b-instruct on vLLM) or a negotiated rate is not in it. COLLATE_PRICE_IN/_OUT (dollars
per million tokens) price COLLATE_LM's model, COLLATE_PRICE_IN_<STAGE>/_OUT_<STAGE> a stage's own model.
A model with neither is "price unknown", never $0: an unknown price is not a free one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# `settings` below is a programs.lm.settings.Settings (not imported: settings.py imports this module)
Settings = Any

PER_MILLION = 1_000_000


@dataclass(frozen=True)
class Price:
    """Dollars per million prompt (in) and completion (out) tokens, and where the figures came from."""

    usd_in: float
    usd_out: float
    source: str

    def usd(self, tokens_in: float, tokens_out: float) -> float:
        return (tokens_in * self.usd_in + tokens_out * self.usd_out) / PER_MILLION

    def describe(self) -> str:
        return f"${self.usd_in:g}/${self.usd_out:g} per M tokens in/out ({self.source})"


def table_price(model: str) -> Price | None:
    """The price DSPy's offline table gives `model` ("openai/gpt-4.1-mini"), or None when it has none."""
    from dspy.clients.model_metadata import model_info, rate

    provider, _, name = model.partition("/")
    if not name:
        provider, name = "openai", model
    try:
        info = model_info(provider, name) or model_info(provider, model)
    except Exception:  # advisory metadata: a lookup that fails is an unknown price, never a failed run
        return None
    usd_in, usd_out = rate(info, "input_cost_per_token"), rate(info, "output_cost_per_token")
    if usd_in is None or usd_out is None:
        return None
    return Price(usd_in * PER_MILLION, usd_out * PER_MILLION, "DSPy's price table")


def set_price(settings: Settings, suffix: str) -> Price | None:
    """The price the settings give under price_in<suffix>/price_out<suffix>; one without the other is an error."""
    usd_in, usd_out = getattr(settings, f"price_in{suffix}"), getattr(settings, f"price_out{suffix}")
    if usd_in is None and usd_out is None:
        return None
    if usd_in is None or usd_out is None:
        given, missing = ("in", "out") if usd_out is None else ("out", "in")
        raise ValueError(
            f"COLLATE_PRICE_{given.upper()}{suffix.upper()} is set without COLLATE_PRICE_{missing.upper()}"
            f"{suffix.upper()}: set both (dollars per million tokens) or neither"
        )
    return Price(usd_in, usd_out, f"COLLATE_PRICE_IN{suffix.upper()}/_OUT{suffix.upper()}")


def price_for(settings: Settings, stage: str | None, model: str | None = None) -> Price | None:
    """The price of a stage's calls (None: the default LM; "escalate": the cascade's strong extractor).

    A stage's own price, else COLLATE_PRICE_IN/_OUT when the stage runs COLLATE_LM's model, else the
    table's price for the model, else None (price unknown)."""
    if model is None:
        model = settings.model_for(stage)
    own = set_price(settings, f"_{stage}") if stage else None
    if own is not None:
        return own
    if model and model == settings.lm:
        default = set_price(settings, "")
        if default is not None:
            return default
    return table_price(model) if model else None


def check_prices(settings: Settings) -> None:
    """Refuse half-set prices at start (before any call), not at the first priced response."""
    from programs.lm.stages import STAGES

    for suffix in ("", *(f"_{stage}" for stage in STAGES)):
        set_price(settings, suffix)


def unpriced(settings: Settings, stages: list[str | None]) -> dict[str, list[str]]:
    """The models these stages call that have no known price: {model: [setting that prices it, ...stages]}.
    With the extractor, the cascade's strong model too (a stage that runs beside one: programs/lm/stages.py)."""
    from programs.lm.stages import STAGES

    stages = list(stages)
    stages += [row.name for row in STAGES.values() if row.runs_with in stages and row.name not in stages]
    found: dict[str, list[str]] = {}
    for stage in stages:
        model = settings.model_for(stage)
        if not model or price_for(settings, stage, model) is not None:
            continue
        # COLLATE_LM's model is priced by COLLATE_PRICE_IN/_OUT, except in a stage that runs beside another
        # (the cascade's strong extractor), which is named by its own setting
        beside = stage is not None and STAGES[stage].runs_with is not None
        suffix = "" if model == settings.lm and not beside else f"_{(stage or '').upper()}"
        setting = f"COLLATE_PRICE_IN{suffix}/_OUT{suffix}"
        named = found.setdefault(model, [])
        named += [setting] if setting not in named else []
    return found


def check_usd_cap(settings: Settings, stages: list[str | None], max_usd: float | None) -> None:
    """A dollar cap that cannot be priced is refused at the start, naming the settings that price it.

    Why (issue 33): `--max-usd 0.0001` with a model of unknown price capped nothing (its calls count $0
    toward it) and said nothing; the run spent whatever the questions needed."""
    if max_usd is None:
        return
    from signatures.errors import BadInput

    missing = unpriced(settings, stages)
    if not missing:
        return
    models = "; ".join(f"{model} (set {', '.join(fix)})" for model, fix in missing.items())
    raise BadInput(
        f"--max-usd {max_usd:g} cannot be enforced: no price is known for {models}, so its calls would count "
        "$0 toward the cap. Set the price in dollars per million prompt/completion tokens "
        "(COLLATE_PRICE_IN and COLLATE_PRICE_OUT for COLLATE_LM's model, COLLATE_PRICE_IN_<STAGE>/_OUT_<STAGE> "
        "for a stage's own model), or cap with --max-tokens / --max-calls instead"
    )
