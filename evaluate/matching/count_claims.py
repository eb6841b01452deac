"""Count claims held against the companies an answer lists: "既采用GRI又审验的公司有15家，股票代码为" followed
by seven codes, or "仅返回5家公司" beside one, contradicts itself and is wrong whatever else it gets right.

Two kinds of claim are checked (counts found by evaluate/matching/counts.py; sizes of the whole set such as
"知识库中共有15家公司" or "of the 15 companies", and counts of firms that are not companies such as
"5家审验机构", are never claims about the list):

1. A count that introduces or closes a list in its own sentence ("共有7家：A、B…", "公司有15家，股票代码为
   A…", "A、B、C，共3家", "[A], [B] (2 companies in total)") must equal the number of companies listed.
   "共有15家公司，其中A最高" introduces no list: "其中" (among them) names a part.
2. Where the question asks for companies, a count stated as the answer's size in so many words (共有,
   仅返回, 只有, "a total of") must be the number of companies the answer names, the length of one of
   its lists, or the number named in its own sentence; an answer that tabulates every company and
   then concludes "共3家：A、B、C" keeps its conclusion.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evaluate.matching.counts import CountMention
from evaluate.matching.entities import Mention, sentence_spans

# Between a count and its list: no word that makes the list a part ("其中" among them) or an aside.
PART_OR_ASIDE = re.compile(
    r"其中|其余|此外|另外|包括|包含|例如|比如|除了?|以外|之外|among|including|such as|e\.g\.|of which|"
    r"except|besides|other than",
    re.I,
)
LEAD_MAX = 40  # characters between a count and the first company of its list ("公司有15家，股票代码为")
# Between the last company of a list and the count that closes it: "，共3家", "（共", " (", "这".
CLOSING_GAP = re.compile(
    r"^[\s,，、;；:：)）\]】]*[（(]?\s*(?:共计|一共|合计|总计|共有|共|即|这些|这|以上|上述|"
    r"(?:in\s+)?(?:a\s+)?total\s+of|these|the\s+above|i\.e\.,?)?\s*$",
    re.I,
)


def _claims(counts: Sequence[CountMention]) -> list[CountMention]:
    return [c for c in counts if not c.whole and not c.other]


def _sentence(text: str, pos: int, mentions: Sequence[Mention]) -> tuple[int, int]:
    """(start, end) of the sentence holding `pos` (evaluate/matching/entities.py sentence_spans)."""
    for start, end in sentence_spans(text, list(mentions)):
        if start <= pos < end:
            return start, end
    return pos, pos


def _sentence_end(text: str, pos: int, mentions: Sequence[Mention]) -> int:
    return _sentence(text, pos, mentions)[1]


def _sentence_start(text: str, pos: int, mentions: Sequence[Mention]) -> int:
    return _sentence(text, pos, mentions)[0]


def _listed_after(text: str, c: CountMention, claims, mentions) -> list[str] | None:
    """The companies a count introduces, or None when it introduces no list."""
    end = _sentence_end(text, c.end, mentions)
    end = min([end] + [o.start for o in claims if c.end <= o.start < end])
    aside = PART_OR_ASIDE.search(text, c.end, end)
    after = [m for m in mentions if c.end <= m.start and m.end <= end]
    if not after:
        return None
    if (aside and aside.start() < after[0].start) or after[0].start - c.end > LEAD_MAX:
        return None
    if aside:
        after = [m for m in after if m.start < aside.start()]
    return list(dict.fromkeys(m.symbol for m in after))


def _listed_before(text: str, c: CountMention, claims, mentions) -> list[str] | None:
    """The companies a count closes ("A、B、C，共3家"), or None."""
    start = max([_sentence_start(text, c.start, mentions)] + [o.end for o in claims if o.end <= c.start])
    before = [m for m in mentions if start <= m.start and m.end <= c.start]
    if not before or not CLOSING_GAP.match(text[before[-1].end : c.start]):
        return None
    return list(dict.fromkeys(m.symbol for m in before))


def _in_sentence(text: str, c: CountMention, mentions) -> int:
    start, end = _sentence_start(text, c.start, mentions), _sentence_end(text, c.end, mentions)
    return len({m.symbol for m in mentions if start <= m.start and m.end <= end})


def contradicted_claim(
    text: str,
    counts: Sequence[CountMention],
    mentions: Sequence[Mention],
    runs: Sequence[Sequence[str]],
    asks_companies: bool,
) -> str | None:
    """Why a count the answer states contradicts the companies it lists, or None."""
    claims = _claims(counts)
    named = len({m.symbol for m in mentions})
    for c in claims:
        listed = _listed_after(text, c, claims, mentions)
        if listed is None:
            listed = _listed_before(text, c, claims, mentions)
        if listed is not None:
            if c.value != len(listed):
                return (
                    f"the answer says {c.value} companies ({c.text.strip()}) but lists {len(listed)}: "
                    f"{', '.join(listed)}"
                )
            continue
        if not (asks_companies and c.explicit and named):
            continue
        aside = PART_OR_ASIDE.search(text, c.end, _sentence_end(text, c.end, mentions))
        if aside is not None:  # "共有15家公司，其中…": the set the answer picks from
            continue
        sizes = {named, _in_sentence(text, c, mentions)} | {len(set(run)) for run in runs}
        if c.value not in sizes:
            return f"the answer says {c.value} companies ({c.text.strip()}) but names {named}"
    return None
