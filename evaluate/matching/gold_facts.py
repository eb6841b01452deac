"""The key facts of a gold final answer: companies (in order), numbers with the company each
belongs to, dates, the text items (firm names, quoted or listed names) a question asks for, and the
totals it states ("共审验3家公司", "a total of 4 companies": evaluate/matching/counts.py).

Numbers that only restate the question (years, 权重40%, "Top 3", a count equal to the companies
listed) are not findings and are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from evaluate.matching.counts import find_counts
from evaluate.matching.entities import find_mentions, ordered_symbols, owner_at
from evaluate.matching.quantities import DateMention, Quantity, find_dates, find_quantities, fold
from evaluate.matching.question_traits import QuestionTraits

ORDINAL_BEFORE = re.compile(r"(?:top|(?<!提)前|第|no\.|#)\s*$", re.I)  # 提前13天 is a number of days
FIRM = re.compile(r"[\u4e00-\u9fff]{2,24}?(?:会计师事务所|认证服务有限公司|有限责任公司|有限公司)")
FIRM_LEAD = re.compile(r".*[为是从到由的：:，,、；;]")
# "宋萍、卞丹娟、范新凤" or "环境保护、股东权益保护、职工权益保护": names or items a text question asks for
CJK_LIST = re.compile(r"[\u4e00-\u9fff]{2,8}(?:\s*[、,]\s*[\u4e00-\u9fff]{2,8}){2,}")
QUOTED = re.compile(r"[“\"「『]([^”\"」』]{1,60})[”\"」』]")
ITEM_SPLIT = re.compile(r"[、,，;；/]|和|及|与|\band\b")
TEXT_NOISE = re.compile(r"[\s()（）\[\]【】“”\"'‘’《》<>]|特殊普通合伙")
YEAR_MIN, YEAR_MAX = 1990, 2100


@dataclass(frozen=True)
class GoldFacts:
    entities: list[str]  # in order of first mention
    quantities: list[tuple[Quantity, str | None]]  # number and the company it belongs to
    dates: list[tuple[DateMention, str | None]]
    strings: list[str]  # firm names and quoted items, normalized
    # Totals the gold states (共有11家). Kept even when they equal the number of companies listed (and
    # so are no finding of their own): an answer that states another total contradicts the gold.
    counts: tuple[int, ...] = ()


def normalize_text(text: str) -> str:
    return TEXT_NOISE.sub("", fold(text)).lower()


def read_gold(traits: QuestionTraits, question: str, gold: str, symbols: Iterable[str] | None) -> GoldFacts:
    text = fold(gold)
    mentions = find_mentions(text, symbols)
    asked_about = set(ordered_symbols(find_mentions(fold(question), symbols)))
    entities = [s for s in ordered_symbols(mentions) if s not in asked_about]
    keep = set(entities)
    dates = find_dates(text)
    taken = [(m.start, m.end) for m in mentions] + [(d.start, d.end) for d in dates]
    quantities = []
    for q in find_quantities(text, taken):
        is_year = q.kind == "year" or (
            q.kind == "none" and q.raw.is_integer() and YEAR_MIN <= q.raw <= YEAR_MAX
        )
        ordinal = bool(ORDINAL_BEFORE.search(text[max(0, q.start - 5) : q.start])) or text[
            q.end : q.end + 1
        ] in ("名", "档", "位")
        restates_count = q.kind == "count" and entities and q.raw == len(entities)
        # the question's own numbers (权重40%, 超过7天) restated in the gold are not findings
        if is_year or ordinal or restates_count or (q.raw, q.kind) in traits.numbers:
            continue
        quantities.append((q, owner_at(q.start, mentions, keep)))
    strings = []
    for m in FIRM.finditer(text):
        name = normalize_text(FIRM_LEAD.sub("", m.group()))
        if len(name) >= 4:
            strings.append(name)
    for m in QUOTED.finditer(text):
        strings += [normalize_text(item) for item in ITEM_SPLIT.split(m.group(1)) if normalize_text(item)]
    if traits.asks_text:
        for m in CJK_LIST.finditer(text):
            strings += [
                normalize_text(item) for item in re.split(r"\s*[、,]\s*", m.group()) if normalize_text(item)
            ]
    asked = normalize_text(question)  # "四大会计师事务所" restated from the question is no finding
    strings = [item for item in strings if item not in asked]
    return GoldFacts(
        entities=entities,
        quantities=quantities,
        dates=[(d, owner_at(d.start, mentions, keep)) for d in dates],
        strings=list(dict.fromkeys(strings)),
        counts=tuple(dict.fromkeys(c.value for c in find_counts(text, taken) if c.total)),
    )
