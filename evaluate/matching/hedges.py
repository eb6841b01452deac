"""Hedged answers: several alternatives offered for one value.

"共有1家或2家或3家", "1.7935或3.2个百分点", "约1.2或1.5", "1, 2 or 3 companies", "601398或601939": an answer
that offers the gold value among others has not given it. This module finds the groups of items (numbers,
dates or company mentions) joined by an "or" word; whether a group is a hedge (its alternatives differ)
and whether it touches a gold fact is decided by the matcher (evaluate/matching/final_match.py), which knows
when two numbers are the same value ("-0.14或-14%" states one growth rate twice, not two).

"Or" is any wording that offers a second value instead of the first (issue 33: "可能是1家，也可能是5家",
"...元，也可能是12345元", "要么3家要么4家", "4, or possibly 5", "maybe 4, maybe 5", "4, though it could
also be 5" all passed): the gap between two items must be only such words, so "或有负债" or "可能是因为"
beside a number are not hedges.

An enumeration offers every value at once ("0家 1家 2家 ... 8家", a run of amounts with the gold's among
them): a bare list of values of one kind, separated only by list punctuation, holding a gold value and
many more values than the gold states (at least twice as many and three more, the rule for companies in
company_check.py) is a candidate list, not an answer. A list of as many values as the gold states ("分别
为18.02%、17.5%、16.1%") is an answer.

A range ("1至3家", "从10%到15%") is not read as alternatives: "from 10% to 15%" states a change.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evaluate.matching.answer_view import AnswerView
from evaluate.matching.company_check import stuffed
from evaluate.matching.gold_facts import GoldFacts
from evaluate.matching.number_match import same_number
from evaluate.matching.quantities import Quantity

# Words that offer the next item instead of the one before: "or", and "may also be" in its wordings.
OR_WORD = (
    r"(?:或者|或是|抑或|亦或|还是|也可能是|也可能为|也可能|可能是|可能为|也许是|也许|或许是|或许|要么|或|"
    r"\bor\b(?:\s+(?:possibly|perhaps|maybe|even|potentially|else))?|\bmaybe\b|\bperhaps\b|\bpossibly\b|"
    r"(?:\bit\s+)?\b(?:may|might|could)\s+(?:also\s+|even\s+)?be\b)"
)
# "but", "though" before it ("...元，但也可能是12345元", "4, though it could also be 5").
CONCESSION = r"(?:但是|但|不过|然而|\bbut\b|\bthough\b|\balthough\b)"
# Between two alternatives: an "or" word, maybe with "about" before the second ("1.2或约1.5").
OR_GAP = re.compile(
    rf"^\s*[,，;；]?\s*(?:{CONCESSION}\s*[,，]?\s*)?{OR_WORD}\s*(?:约为|约|大约|大概|\babout\b|\baround\b|"
    r"\bapproximately\b|\broughly\b|~)?\s*$",
    re.I,
)
# Between the earlier alternatives of "1, 2 or 3": list punctuation only.
LIST_GAP = re.compile(r"^\s*[,，、]\s*$")
# Between the values of a bare list ("0家 1家 2家", "1.2%、1.5%、1.8%"): list punctuation and "and" only.
ENUMERATION_GAP = re.compile(r"^(?:\s|[,，、;；/]|\.\.\.|…|\band\b|和|及|与)*$", re.I)
# A bare integer of these is a year ("2021, 15.1%, 2022, 15.3%" is a table by year, not a list of values).
YEARS = range(1990, 2101)


def alternatives(text: str, spans: Sequence[tuple[int, int]]) -> list[list[int]]:
    """Groups (indices into `spans`, sorted by start) of two or more items joined by "or" words: a
    chain of items whose every gap is an "or" or list punctuation, with at least one "or"."""
    groups: list[list[int]] = []
    chain: list[int] = []
    has_or = False

    def close() -> None:
        if len(chain) > 1 and has_or:
            groups.append(list(chain))

    for i, (start, _) in enumerate(spans):
        if chain:
            gap = text[spans[chain[-1]][1] : start]
            if OR_GAP.match(gap):
                chain.append(i)
                has_or = True
                continue
            if LIST_GAP.match(gap):
                chain.append(i)
                continue
            close()
        chain, has_or = [i], False
    close()
    return groups


def _same(a, b, growth_quirk: bool) -> bool:
    return same_number(a, b, growth_quirk) or same_number(b, a, growth_quirk)


def hedged_gold(facts: GoldFacts, view: AnswerView, growth_quirk: bool) -> str | None:
    """Why the answer hedges on a gold fact (offers it among different alternatives), or None."""
    quantities = view.quantities
    for group in alternatives(view.text, [(q.start, q.end) for q in quantities]):
        values = [quantities[i] for i in group]
        if all(_same(values[0], v, growth_quirk) for v in values[1:]):
            continue  # one value stated twice ("-0.14或-14%"), not alternatives
        if any(same_number(g, v, growth_quirk) for g, _ in facts.quantities for v in values):
            return "hedges between " + " / ".join(v.text.strip() for v in values) + " for one value"
    dates = view.dates
    for group in alternatives(view.text, [(d.start, d.end) for d in dates]):
        stated = {(dates[i].month, dates[i].day) for i in group}  # a gold date may have no year
        if len(stated) > 1 and stated & {(d.month, d.day) for d, _ in facts.dates}:
            return "hedges between the dates " + " / ".join(dates[i].iso() for i in group)
    mentions = view.mentions
    for group in alternatives(view.text, [(m.start, m.end) for m in mentions]):
        symbols = list(dict.fromkeys(mentions[i].symbol for i in group))
        if len(symbols) > 1 and set(symbols) & set(facts.entities):
            return "hedges between the companies " + " or ".join(symbols)
    return None


def value_lists(text: str, quantities: Sequence[Quantity]) -> list[list[Quantity]]:
    """Bare lists of values of one kind ("0家 1家 2家", "1.2%、1.5%、1.8%"): runs of quantities separated
    only by list punctuation or "and", one list per kind (a list mixing "6月、7家、7月、8家" is a list of
    months and one of counts); a bare number belongs to the list of the kind around it ("0, 1, 2, 3
    companies"), and a bare year to none ("2021, 15.1%, 2022, 15.3%" is a table by year)."""
    runs: list[list[Quantity]] = []
    for q in quantities:
        year = q.kind == "none" and q.raw == int(q.raw) and int(q.raw) in YEARS and "." not in q.text
        if year:
            runs.append([])  # a year ends a list
            continue
        if runs and runs[-1] and ENUMERATION_GAP.match(text[runs[-1][-1].end : q.start]):
            runs[-1].append(q)
        else:
            runs.append([q])
    lists = []
    for run in runs:
        kinds = list(dict.fromkeys(q.kind for q in run if q.kind != "none")) or ["none"]
        for kind in kinds:
            of_kind = (
                [q for q in run if q.kind in (kind, "none")]
                if len(kinds) == 1
                else [q for q in run if q.kind == kind]
            )
            if len(of_kind) > 1:
                lists.append(of_kind)
    return lists


def enumerated_gold(facts: GoldFacts, view: AnswerView, growth_quirk: bool) -> str | None:
    """Why the answer lists a gold value among many more values than the gold states in that place, or
    None. The place: the gold's values of the same kind, and of the same company when the list follows
    one ("600016(4次、5次、6次、3次...)" where the gold states one count for 600016)."""
    gold = [g for g, _ in facts.quantities]
    for run in value_lists(view.text, view.quantities):
        if not any(same_number(g, q, growth_quirk) for g in gold for q in run):
            continue
        distinct: list[Quantity] = []
        for q in run:
            if not any(_same(q, d, growth_quirk) for d in distinct):
                distinct.append(q)
        owners = {view.owner(q.start) for q in run}
        owner = owners.pop() if len(owners) == 1 else None
        kinds = {q.kind for q in run} - {"none"}
        slot = [
            g
            for g, of in facts.quantities
            if (owner is None or of == owner) and (not kinds or g.kind in kinds or g.kind == "none")
        ]
        if stuffed(len(distinct), len(slot)):
            shown = " ".join(q.text.strip() for q in distinct[:6]) + (" ..." if len(distinct) > 6 else "")
            where = f" for {owner}" if owner else ""
            return (
                f"lists {len(distinct)} values ({shown}){where} where the gold states {len(slot)}: "
                "a list of candidates, not an answer"
            )
    return None
