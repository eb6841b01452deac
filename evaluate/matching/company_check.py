"""The companies an answer names, held against the gold's: missing, extra, out of order, none at all,
or stuffed (many candidates listed where a few are asked).

An answer may first tabulate every company and then conclude, so extra companies are judged by the
lists the answer gives (evaluate/matching/entities.py enumerations) and the companies each sentence names: a
list or sentence naming exactly the gold set is the answer; a list holding the gold set and more is
wrong. Where nothing singles out the gold set:

- an answer naming many more companies than the gold (at least twice as many and three more: 8 named
  where 3 are asked) is stuffed, and wrong: a candidate list is not an answer;
- a few extra companies ("ARAY leads, then BBY, SAIC and AMCR") are left undecided.

A single gold company is singled out only by being named more than once (a table, then "最高的是A")
when the answer is stuffed: a table of every company with the right one on top names it once.
"""

from __future__ import annotations

import re

from evaluate.matching.answer_view import AnswerView
from evaluate.matching.gold_facts import GoldFacts
from evaluate.matching.question_traits import QuestionTraits

REFUSAL = re.compile(
    r"无法|不能确定|没有足够|未找到|找不到|cannot|can't|unable to|insufficient|no data", re.I
)
STUFFED_RATIO = 2  # named at least twice as many companies as the gold holds...
STUFFED_EXTRA = 3  # ...and at least three more


def stuffed(named: int, gold: int) -> bool:
    return named >= STUFFED_RATIO * gold and named - gold >= STUFFED_EXTRA


def check_companies(
    traits: QuestionTraits, facts: GoldFacts, view: AnswerView
) -> tuple[str | None, str | None]:
    """(wrong reason, unclear reason) about the companies named."""
    gold, named = facts.entities, view.entities
    if not gold:
        return None, None
    if not named:
        if REFUSAL.search(view.text):
            return "the answer declines to name companies", None
        if traits.asks_companies:
            return "the question asks for companies and the answer names no code or ticker", None
        return None, "the answer names no codes or tickers (names only?)"
    missing = [s for s in gold if s not in named]
    if missing:
        return f"missing {', '.join(missing)}", None
    ranked = traits.ranking and not traits.ties and len(gold) > 1
    extra = [s for s in named if s not in gold]
    if not extra:
        order = [s for s in named if s in gold]
        if ranked and order != gold:
            return f"order {order} differs from gold {gold}", None
        return None, None
    gold_set = set(gold)
    too_many = stuffed(len(named), len(gold))
    # a list, or a sentence ("股票代码601398，18.02%；股票代码002142，…。"), naming just the gold's companies
    exact = [run for run in view.runs + view.sentences if set(run) == gold_set]
    if exact and too_many and len(gold) == 1 and sum(m.symbol == gold[0] for m in view.mentions) < 2:
        exact = []  # one row of a table of every company, not a conclusion
    if exact:
        if ranked and not any(list(dict.fromkeys(run)) == gold for run in exact):
            return f"order {list(dict.fromkeys(exact[0]))} differs from gold {gold}", None
        return None, None
    wider = [run for run in view.runs if gold_set < set(run)]
    if wider:
        return f"lists {', '.join(sorted(set(wider[0]) - gold_set))} beside the gold companies", None
    if too_many:
        return (
            f"names {len(named)} companies where the gold has {len(gold)}, with no list of just the "
            "gold's: a list of candidates, not an answer"
        ), None
    return None, f"also names {', '.join(extra)}"
