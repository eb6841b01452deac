"""Deterministic final-answer matcher: decide what can be decided with confidence, leave the rest.

The gold answer's key facts are the companies it names (in order when the question ranks them),
its numbers (unit-aware: 14.3% == 0.143, 10600万元 == 1.06亿元, $4.85 billion == $4,851,882,000),
its dates (2022年6月15日 == 2022-06-15 == 06-15) and, for questions asking for names of firms or
methods, its quoted strings, and the totals it states (共有11家: an answer stating 22 beside the
right codes is wrong). A wrong or missing key fact decides "incorrect"; every key fact found
where it belongs decides "correct"; anything in between is undecided, for a judge if one is named.

Some answers are wrong whatever key facts they hold, because they do not commit to one answer or
contradict themselves: one that hedges on a gold fact ("共有1家或2家或3家", "1.7935或3.2个百分点":
evaluate/matching/hedges.py), one naming no company where companies are asked for, one stuffed with
candidates (8 named where 3 are asked: evaluate/matching/company_check.py), and one whose count contradicts
the companies it lists ("公司有15家，股票代码为" and seven codes: evaluate/matching/count_claims.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from evaluate.matching.answer_view import AnswerView
from evaluate.matching.company_check import check_companies
from evaluate.matching.count_claims import contradicted_claim
from evaluate.matching.gold_facts import GoldFacts, normalize_text, read_gold
from evaluate.matching.hedges import enumerated_gold, hedged_gold
from evaluate.matching.number_match import same_digits, same_number
from evaluate.matching.quantities import fold
from evaluate.matching.question_traits import QuestionTraits, read_question

__all__ = ["GoldFacts", "MatchResult", "final_match", "read_gold"]

NO_COMPANY = re.compile(
    r"没有(?:任何)?(?:一家)?公司|无公司|均未|都没有|\bno compan|\bnone of the compan", re.I
)
NOTHING = re.compile(r"没有|无|\bno\b|\bnone\b|\bzero\b|零")


@dataclass(frozen=True)
class MatchResult:
    decided: bool
    correct: bool | None  # None when undecided
    reason: str

    @classmethod
    def right(cls, reason: str) -> MatchResult:
        return cls(True, True, reason)

    @classmethod
    def wrong(cls, reason: str) -> MatchResult:
        return cls(True, False, reason)

    @classmethod
    def undecided(cls, reason: str) -> MatchResult:
        return cls(False, None, reason)


def _check_counts(facts: GoldFacts, view: AnswerView) -> tuple[str | None, str | None]:
    """(wrong reason, unclear reason) about the totals the answer states against the gold's.

    Fine when the answer states every gold total as a total (or their sum: 12 for "组合A共有8家…
    组合B共有4家"); other totals beside them count something else ("共审验3家公司（知识库共有15家）").
    A stray total is wrong when a gold total is nowhere among the answer's counts ("共审验8家公司" for
    3); beside the gold's count stated another way ("共有5家审验机构，普华永道审验了3家"): unclear."""
    if not facts.counts:
        return None, None
    whole = sum(facts.counts)
    agreeing = set(facts.counts) | {whole}
    totals = {c.value for c in view.counts if c.total}
    stray = [c for c in view.counts if c.total and c.value not in agreeing]
    if not stray or whole in totals or set(facts.counts) <= totals:
        return None, None
    gold = "/".join(str(n) for n in facts.counts)
    stated = f"a total of {stray[0].value} ({stray[0].text.strip()})"
    values = {c.value for c in view.counts}
    if any(n not in values for n in facts.counts) and whole not in values:
        return f"the answer states {stated}; the gold states {gold}", None
    return None, f"the answer states {stated} beside the gold's {gold}"


def _assign(edges: list[list[int]]) -> list[int | None]:
    """One answer number per gold number (max bipartite matching): a value the answer states once
    cannot stand for two gold numbers that happen to be equal."""
    taken: dict[int, int] = {}

    def augment(g: int, seen: set[int]) -> bool:
        for a in edges[g]:
            if a in seen:
                continue
            seen.add(a)
            if a not in taken or augment(taken[a], seen):
                taken[a] = g
                return True
        return False

    for g in range(len(edges)):
        augment(g, set())
    assigned: list[int | None] = [None] * len(edges)
    for a, g in taken.items():
        assigned[g] = a
    return assigned


def _check_numbers(
    traits: QuestionTraits, facts: GoldFacts, view: AnswerView
) -> tuple[str | None, str | None]:
    unclear = None
    per_company = len(facts.entities) > 1 and not traits.ties  # within a tie, any order is right
    strong = [
        [i for i, a in enumerate(view.quantities) if same_number(g, a, traits.growth_quirk)]
        for g, _ in facts.quantities
    ]
    placed = [
        [i for i in hits if owner is None or not per_company or view.owner(view.quantities[i].start) == owner]
        for hits, (_, owner) in zip(strong, facts.quantities, strict=True)
    ]
    assigned = _assign(placed)
    for (g, owner), hits, slot in zip(facts.quantities, strong, assigned, strict=True):
        if slot is not None:
            continue
        if hits:
            unclear = unclear or f"{g.text} found but not next to {owner}, or used for another number"
            continue
        weak = any(
            same_digits(g, a) or same_number(g, a, traits.growth_quirk, absolute=True)
            for a in view.quantities
        )
        if g.value == 0 and NOTHING.search(view.text):
            weak = True
        if g.kind == "count" and g.raw > 0 and not facts.entities and len(view.entities) == g.raw:
            weak = True  # "how many" answered by listing that many companies
        if weak:
            unclear = unclear or f"{g.text} found only with another unit or sign"
        elif traits.asks_values or (g.kind == "month" and traits.asks_month):
            return f"gold number {g.text} not found", None
        else:
            unclear = unclear or f"gold aside {g.text} not found"
    for d, owner in facts.dates:
        date_hits = [
            a
            for a in view.dates
            if (a.month, a.day) == (d.month, d.day) and (None in (a.year, d.year) or a.year == d.year)
        ]
        if not date_hits:
            if traits.asks_values or traits.asks_date:
                return f"gold date {d.iso()} not found", None
            unclear = unclear or f"gold date {d.iso()} not found"
        elif owner and len(facts.entities) > 1 and not any(view.owner(a.start) == owner for a in date_hits):
            unclear = unclear or f"date {d.iso()} found but not next to {owner}"
    return None, unclear


def final_match(
    question: str, gold_answer: str, model_answer: str, symbols: Iterable[str] | None = None
) -> MatchResult:
    """Compare a model answer with the gold answer. `symbols`: the question's document symbols."""
    symbols = list(symbols or [])
    if not str(model_answer or "").strip():
        return MatchResult.wrong("empty answer")
    traits = read_question(question)
    facts = read_gold(traits, question, gold_answer, symbols)
    view = AnswerView(model_answer, symbols, facts.entities)
    if not (facts.entities or facts.quantities or facts.dates or facts.strings):
        if NO_COMPANY.search(fold(gold_answer)):  # "没有公司更换会计事务所": the answer is the empty list
            if view.entities:
                return MatchResult.wrong(
                    f"the gold names no company; the answer names {', '.join(view.entities)}"
                )
            if NO_COMPANY.search(view.text):
                return MatchResult.right("both say no company qualifies")
        return MatchResult.undecided("the gold answer has no codes, numbers or dates to check")
    hedge = hedged_gold(facts, view, traits.growth_quirk) or enumerated_gold(facts, view, traits.growth_quirk)
    if hedge:
        return MatchResult.wrong(hedge)
    wrong_e, unclear_e = check_companies(traits, facts, view)
    if wrong_e:
        return MatchResult.wrong(wrong_e)
    claim = contradicted_claim(
        view.text, view.counts, view.mentions, view.runs, traits.asks_companies and bool(facts.entities)
    )
    if claim:
        return MatchResult.wrong(claim)
    wrong_c, unclear_c = _check_counts(facts, view)
    if wrong_c:
        return MatchResult.wrong(wrong_c)
    wrong_n, unclear_n = _check_numbers(traits, facts, view)
    if wrong_n:
        return MatchResult.wrong(wrong_n)
    unclear = unclear_e or unclear_c or unclear_n
    answer_text = normalize_text(view.text)
    missing = [s for s in facts.strings if s not in answer_text]
    if missing:
        unclear = unclear or f"text not found verbatim: {missing[0]}"
    elif traits.asks_text and not facts.strings:
        unclear = unclear or "the question asks for text (names, addresses) the matcher cannot check"
    if unclear:
        return MatchResult.undecided(unclear)
    parts = [
        f"{len(facts.entities)} companies",
        f"{len(facts.quantities)} numbers",
        f"{len(facts.dates)} dates",
    ]
    return MatchResult.right("all key facts found: " + ", ".join(parts))
