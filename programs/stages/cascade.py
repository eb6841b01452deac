"""The verified-fact cascade (issue 25): a cheap extractor first, a strong one only where code doubts it.

The extractor's own model (COLLATE_LM_EXTRACTOR, else COLLATE_LM) reads every document. A document goes
to the strong model (COLLATE_LM_EXTRACTOR_ESCALATE) when
- "check": a fact of it fails the check against its pages (quote not found, value not in the quote;
  a quote on another page is corrected, not escalated), or
- "parse": the cheap reply could not be read at all (a quality failure, like a failed check; an
  unreachable or rate-limited endpoint is not, and fails the document as without a cascade), or
- "not_disclosed": it says "not disclosed" for a field its doctype carries, by the evidence of this
  extraction (`undisclosed_suspects`): a second wave, after every first answer is in.
The strong model is asked the whole document (every field the cheap call was asked) and its facts
replace the cheap ones, so an escalated document ends exactly as a strong-only run would have it (the
same prompt, and its own repair call for what still fails); a strong fact that fails keeps its flag.
The cheap model's own repair call is skipped: the strong model's answer is what repair hoped for, and
a repair that fails would be paid for on top of the escalation.

What it saved: per asked document, what the cascade paid (cheap calls at the cheap price, strong calls at
the strong price) and what strong-only would have paid (the document's cheap tokens at the strong price;
an escalated document's strong calls, which strong-only makes too). The LMs' own prices are used
(programs/lm/prices.py via CountedLM.price); a price that is unknown makes the dollars unknown.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import dspy

from programs.lm.progress import LMWatch
from signatures.extractor import ExtractFacts
from signatures.types import Document, Fact

# The not-disclosed rule: a field counts as one the doctype carries when at least PEERS_AT_LEAST other
# documents of the same doctype in this extraction have a usable fact for it and at least
# DISCLOSED_SHARE of them disclose it. Measured with bench/cascade.py on the 40 demo questions (56
# documents, a cheap reader wrong on one fact of ~20% of documents): at 0.75 every corrupted fact was
# caught on seeds 0 and 1, and a cheap reader that never errs still sent 9 documents to the strong
# model (waste: its "not disclosed" was the strong reader's too); at 1.0 (every peer discloses) the
# waste fell to 3 but seed 1 kept one wrong "not disclosed" and its process accuracy fell below
# strong-only's (0.5931 vs 0.5935). Accuracy equal to strong-only is the point of the cascade: 0.75.
PEERS_AT_LEAST = 3
DISCLOSED_SHARE = 0.75

CHECK, PARSE, NOT_DISCLOSED = "check", "parse", "not_disclosed"


class Escalation:
    """The strong extractor: for each extraction, a predictor that asks exactly what the extractor's own
    predictor asks (its instructions and demos), answered by the strong LM.

    Held outside DSPy's parameters on purpose: a compiled program saves and loads the same predictors
    with or without a cascade, and an optimizer never tunes a copy it cannot save. A new predictor per
    extraction (like()), never one shared and rewritten: an optimizer's copies of the program share this
    object and may extract on several threads at once with different instructions and demos."""

    def __init__(self):
        self.predictor = dspy.Predict(ExtractFacts)  # carries the LM; like() copies what it asks

    def __deepcopy__(self, memo):
        return self  # one strong extractor per program, shared by an optimizer's copies (like the fact store)

    def attach(self, lm, watch=None) -> None:
        """Answer with `lm`; `watch` (an LMWatch) counts its calls under the stage "escalate"."""
        self.predictor.lm = lm
        if watch is not None:
            watch.label(self.predictor, "escalate")

    def like(self, predictor: dspy.Predict) -> dspy.Predict:
        """A strong predictor of its own, showing `predictor`'s instructions and demos."""
        if self.predictor.lm is None:
            raise RuntimeError(
                "the cascade's strong extractor has no LM: call programs.lm.settings.configure(settings, "
                "program), which builds COLLATE_LM_EXTRACTOR_ESCALATE's, or Escalation.attach(lm)"
            )
        strong = dspy.Predict(predictor.signature)
        strong.demos, strong.lm = list(predictor.demos), self.predictor.lm
        LMWatch.mark(strong, "escalate")  # not labels by id: ids of freed per-call predictors are reused
        return strong

    @property
    def model(self) -> str:
        return str(getattr(self.predictor.lm, "model", "") or "")


@dataclass
class Tokens:
    tokens_in: int = 0
    tokens_out: int = 0

    def add(self, usage: dict) -> None:
        """Add a dspy.track_usage() total ({model: {prompt_tokens, completion_tokens, ...}})."""
        for counts in usage.values():
            if isinstance(counts, dict):
                self.tokens_in += int(counts.get("prompt_tokens") or 0)
                self.tokens_out += int(counts.get("completion_tokens") or 0)


@dataclass
class DocumentSpend:
    """The tokens one document's calls took, by model: the extractor's own (cheap) and the strong one's."""

    cheap: Tokens = field(default_factory=Tokens)
    strong: Tokens = field(default_factory=Tokens)

    def usd(self, cheap_price, strong_price) -> float | None:
        """What the cascade paid for this document; None when a price it needs is unknown."""
        total = 0.0
        for tokens, price in ((self.cheap, cheap_price), (self.strong, strong_price)):
            if tokens.tokens_in or tokens.tokens_out:
                if price is None:
                    return None
                total += price.usd(tokens.tokens_in, tokens.tokens_out)
        return total

    def usd_strong_only(self, strong_price, escalated: bool) -> float | None:
        """What strong-only would have paid: the strong calls an escalated document made (strong-only
        makes them too), else the cheap calls' tokens at the strong price."""
        if strong_price is None:
            return None
        tokens = self.strong if escalated else self.cheap
        return strong_price.usd(tokens.tokens_in, tokens.tokens_out)


def undisclosed_suspects(
    docs: list[Document], facts: dict[str, list[Fact]], asked: set[str]
) -> dict[str, list[str]]:
    """Document id -> the fields it says are not disclosed while its doctype carries them.

    docs: every document of this extraction; facts: each one's facts after the first wave (asked or
    reused); asked: the documents the cheap model answered in this run (only those can escalate: a
    reused fact was judged by the run that made it). Evidence: the other documents of the same doctype
    here, each with a usable fact for the field; the field is carried when at least PEERS_AT_LEAST of
    them have one and at least DISCLOSED_SHARE of those disclose it. No field list is written down: a
    doctype where the field is often missing (a dividend some companies never pay) never triggers it."""
    doctype = {d.id: d.doctype for d in docs}
    seen: dict[tuple[str, str], dict[str, bool]] = defaultdict(dict)  # (doctype, field) -> doc -> disclosed
    for doc_id, doc_facts in facts.items():
        for f in doc_facts:
            if f.usable:  # a fact that failed the check is evidence of nothing
                seen[(doctype[doc_id], f.field)][doc_id] = f.disclosed
    suspects: dict[str, list[str]] = {}
    for doc_id in sorted(asked):
        for f in facts.get(doc_id, []):
            if f.disclosed or not f.usable:
                continue
            peers = [v for d, v in seen[(doctype[doc_id], f.field)].items() if d != doc_id]
            if len(peers) >= PEERS_AT_LEAST and sum(peers) >= DISCLOSED_SHARE * len(peers):
                suspects.setdefault(doc_id, []).append(f.field)
    return suspects


def cascade_log(documents: int, escalated: dict[str, str], usd: dict, usd_strong_only: dict) -> dict:
    """What a question's run log and trace keep of the cascade: the documents it asked, the escalated
    ones (id -> why), and per asked document the dollars paid and the dollars strong-only would have
    paid (None: price unknown). Per document, so a run's figures add documents, not questions."""
    return {
        "documents": documents,
        "escalated": dict(escalated),
        "usd": dict(usd),
        "usd_strong_only": dict(usd_strong_only),
    }


def cascade_summary(run_logs: list[dict]) -> dict:
    """A run's cascade figures from its questions' run logs ({} when no question ran a cascade):
    cascade_documents, cascade_escalated, cascade_share, cascade_usd, cascade_usd_strong_only,
    cascade_saved_usd (dollars None when a price was unknown). A document several questions share
    is counted once."""
    logs = [log["cascade"] for log in run_logs if isinstance(log, dict) and log.get("cascade")]
    if not logs:
        return {}
    usd: dict[str, float | None] = {}
    strong_only: dict[str, float | None] = {}
    escalated: dict[str, str] = {}
    for log in logs:
        usd.update(log.get("usd") or {})
        strong_only.update(log.get("usd_strong_only") or {})
        escalated.update(log.get("escalated") or {})
    documents = len(usd)
    paid = None if None in usd.values() else round(sum(v or 0.0 for v in usd.values()), 8)
    alone = None if None in strong_only.values() else round(sum(v or 0.0 for v in strong_only.values()), 8)
    return {
        "cascade_documents": documents,
        "cascade_escalated": len(escalated),
        "cascade_share": round(len(escalated) / documents, 4) if documents else 0.0,
        "cascade_usd": paid,
        "cascade_usd_strong_only": alone,
        "cascade_saved_usd": None if paid is None or alone is None else round(alone - paid, 8),
    }


def cascade_line(summary: dict) -> str:
    """'cascade: 4 of 31 documents escalated (12.9%), $0.40 spent vs $0.96 strong-only', or ''."""
    if "cascade_documents" not in summary:
        return ""
    if not summary["cascade_documents"]:
        return "cascade: no document asked (every fact came from the fact store)"
    line = (
        f"cascade: {summary['cascade_escalated']} of {summary['cascade_documents']} documents escalated "
        f"({100 * summary['cascade_share']:.1f}%)"
    )
    paid, alone = summary.get("cascade_usd"), summary.get("cascade_usd_strong_only")
    if paid is None or alone is None:
        return line + (
            ", dollars unknown: set COLLATE_PRICE_IN_EXTRACTOR/_OUT_EXTRACTOR and "
            "COLLATE_PRICE_IN_ESCALATE/_OUT_ESCALATE (dollars per million tokens)"
        )
    return line + f", ${paid:.4g} spent vs ${alone:.4g} strong-only"


def cascade_part(logs: list[dict | None], doc_ids: list[str]) -> dict | None:
    """One question's share of the cascade logs of the extraction rounds it used: its documents only
    (a document asked in two rounds adds its dollars). None when no round ran a cascade."""
    ran = [log for log in logs if log is not None]
    if not ran:
        return None
    wanted = set(doc_ids)
    usd: dict[str, float | None] = {}
    strong_only: dict[str, float | None] = {}
    escalated: dict[str, str] = {}
    for log in ran:
        escalated.update({d: why for d, why in log["escalated"].items() if d in wanted})
        for mine, theirs in ((usd, log["usd"]), (strong_only, log["usd_strong_only"])):
            for d, value in theirs.items():
                if d in wanted:
                    before = mine.get(d, 0.0)
                    mine[d] = None if value is None or before is None else before + value
    return cascade_log(len(usd), escalated, usd, strong_only)
