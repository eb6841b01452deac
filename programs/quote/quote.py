"""A quote: calls, tokens and dollars per stage, priced before anything is sent, and how it prints.

Dollars come from programs.lm.prices (COLLATE_PRICE_IN/_OUT, per stage, or DSPy's offline table);
a stage whose model has no known price says "price unknown", never $0, and with no model set at all the
quote still gives the tokens and says "price unknown (no model set)".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from programs.lm.prices import Price, price_for


@dataclass
class StageQuote:
    calls: float = 0.0
    tokens_in: float = 0.0
    tokens_out: float = 0.0
    price: Price | None = None
    why_unpriced: str = ""

    def add(self, calls: float, tokens_in: float, tokens_out: float) -> None:
        self.calls += calls
        self.tokens_in += calls * tokens_in
        self.tokens_out += calls * tokens_out

    @property
    def usd(self) -> float | None:
        return None if self.price is None else self.price.usd(self.tokens_in, self.tokens_out)

    def as_record(self) -> dict:
        return {
            "calls": round(self.calls, 1),
            "tokens_in": round(self.tokens_in),
            "tokens_out": round(self.tokens_out),
            "usd": None if self.usd is None else round(self.usd, 6),
            "price": self.price.describe() if self.price else self.why_unpriced,
        }


@dataclass
class Quote:
    what: str  # "collate run: 10 questions"
    documents: int  # documents in scope (extracted at most once each)
    tokenizer: str
    stages: dict[str, StageQuote] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # What only the plan and the replies decide, as tokens in + out: (lowest, highest) total without fact
    # repairs, and the most the repairs add (one more call for every extracted document). None: not quoted.
    span: tuple[float, float] | None = None
    repairs: float = 0.0
    # The repairs the total counts (tokens in + out), from the model's history in the fact store; 0 without.
    expected_repairs: float = 0.0
    # An ask over the whole catalog: (documents, how the question names them, their totals()) as the plan
    # likely reads them (programs/quote/scope.py); None otherwise.
    likely: tuple[int, str, dict] | None = None

    def stage(self, name: str) -> StageQuote:
        return self.stages.setdefault(name, StageQuote())

    def priced(self, settings) -> Quote:
        """Attach each stage's price; an unknown one gets the reason, and a note names the fix once."""
        from programs.lm.stages import STAGES

        missing: list[str] = []
        for name, stage in self.stages.items():
            own = name if name in STAGES else None  # "proposer": the optimizer's calls on the default LM
            model = settings.model_for(own)
            if not model:
                stage.why_unpriced = "price unknown (no model set)"
                continue
            stage.price = price_for(settings, own)
            if stage.price is None:
                stage.why_unpriced = "price unknown"
                missing += [] if model in missing else [model]
        if any(s.why_unpriced == "price unknown (no model set)" for s in self.stages.values()):
            self.notes.insert(0, "dollars: no model set (COLLATE_LM or --lm), so no price; the tokens stand")
        if missing:
            self.notes.insert(
                0,
                f"dollars: no price known for {', '.join(missing)}: set COLLATE_PRICE_IN/_OUT ($ per M "
                "tokens; COLLATE_PRICE_IN_<STAGE>/_OUT_<STAGE> for a stage's own model)",
            )
        return self

    def totals(self) -> dict:
        stages = list(self.stages.values())
        priced = [s.usd for s in stages if s.usd is not None and s.calls]
        return {
            "calls": round(sum(s.calls for s in stages), 1),
            "tokens_in": round(sum(s.tokens_in for s in stages)),
            "tokens_out": round(sum(s.tokens_out for s in stages)),
            "usd": round(sum(priced), 6) if priced else None,
            "unpriced_stages": [n for n, s in self.stages.items() if s.usd is None and s.calls],
        }

    def as_record(self) -> dict:
        return {
            "what": self.what,
            "documents": self.documents,
            "tokenizer": self.tokenizer,
            "stages": {name: s.as_record() for name, s in self.stages.items()},
            "total": self.totals(),
            "range": None if self.span is None else [round(self.span[0]), round(self.span[1])],
            "fact_repairs_at_most": round(self.repairs),
            "fact_repairs_expected": round(self.expected_repairs),
            "likely": None
            if self.likely is None
            else {"documents": self.likely[0], "named": self.likely[1], **self.likely[2]},
            "notes": self.notes,
        }

    def lines(self) -> list[str]:
        """The quote as printed: one line per stage, a total, then what it does not count."""
        out = [
            f"estimate for {self.what}: {self.documents} document(s) in scope; no LM was called",
            f"  {'stage':<11}{'calls':>8}{'tokens in':>12}{'tokens out':>12}  dollars",
        ]
        for name, s in self.stages.items():
            out.append(
                f"  {name:<11}{s.calls:>8,.0f}{s.tokens_in:>12,.0f}{s.tokens_out:>12,.0f}  {dollars(s.usd, s.why_unpriced)}"
            )
        t = self.totals()
        usd = dollars(t["usd"], "price unknown")
        if t["usd"] is not None and t["unpriced_stages"]:
            usd += f" + unpriced stages ({', '.join(t['unpriced_stages'])})"
        out.append(f"  {'total':<11}{t['calls']:>8,.0f}{t['tokens_in']:>12,}{t['tokens_out']:>12,}  {usd}")
        if self.likely is not None:
            n, how, lt = self.likely
            out.append(
                f"  {'likely':<11}{lt['calls']:>8,.0f}{lt['tokens_in']:>12,}{lt['tokens_out']:>12,}  "
                f"{dollars(lt['usd'], 'price unknown')}  if the plan reads the {n} document(s) the question "
                f"names ({how}); the total is the whole catalog"
            )
        if self.span is not None:
            low, high = self.span
            out.append(
                f"  range: {low:,.0f} to {high:,.0f} tokens in + out without fact repairs, as the plan's field "
                f"searches add nothing or k passages each to what its questions retrieve; fact repairs add at most "
                f"{self.repairs:,.0f}"
                + (f" (the total expects {self.expected_repairs:,.0f})" if self.expected_repairs else "")
            )
        out.append(f"tokens counted with {self.tokenizer}")
        out += [f"note: {n}" for n in self.notes]
        return out


def dollars(usd: float | None, unknown: str) -> str:
    if usd is None:
        return unknown
    return f"${usd:,.4f}" if usd < 1 else f"${usd:,.2f}"
