"""Counts of companies stated in a text: "共审验3家公司", "共有十家", "合计3只股票", "a total of 4
companies", "5 banks", "(4 in total)".

A count is a whole number followed by a classifier or noun for companies (家, 只, 个公司, companies,
banks, firms, stocks). It is a *total* when the text states it as the size of the answer: after
共/共有/合计/总计/累计 in Chinese, "a total of" or "in total" in English, or as a plain "N companies"
in English (not "of the 15 companies", "among 12 companies", "top 3 companies"), and never in a
clause about the knowledge base ("知识库中共有15家公司": the whole set, not the answer). The matcher holds
an answer's totals against the gold's (evaluate/matching/final_match.py); every other count of the answer
may still be the one that agrees ("知识库共有15家公司，其中7家...").

Not counts: years (2021年), percents, amounts (1000万元), ranks (前3家, top 3, 第3名), counts of
other things (8个信息项, 5次).

Beside `total`, a count says whether it is the size of the whole set (`whole`: "知识库中共有15家公司",
"of the 15 companies"), whether it is stated as the answer's size in so many words (`explicit`: 共有,
仅返回, 只有, "a total of", "in total"; a plain English "5 companies" is not) and whether it counts
firms that are not companies (`other`: "5家审验机构", "3家会计师事务所"). The count-claim check
(evaluate/matching/count_claims.py) reads these.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evaluate.matching.quantities import find_quantities

# Right after the number: what is counted. 个 counts companies only with a company noun (8个信息项 does not).
COMPANY_UNIT = re.compile(
    r"\s*(?:家|只|个(?=(?:上市)?公司|企业|银行|股票|机构)|(?:compan(?:y|ies)|banks?|firms?|stocks?|tickers?|issuers?)\b)",
    re.I,
)
# The digits (or small Chinese numeral) at the start of a quantity's text, sign and currency excluded.
NUMBER_PART = re.compile(r"[\d,]+(?:\.\d+)?|[零〇一二两三四五六七八九十]{1,3}")
# Before the number: 共/共有/共审验/合计/总计/累计 with at most a short verb between (公共, 共同 are not totals).
ZH_TOTAL_BEFORE = re.compile(r"(?:(?<!公)共(?!同)|合计|总计|累计)[^\d\s，,。；;：:、()（）]{0,6}$")
EN_TOTAL_BEFORE = re.compile(r"\b(?:a\s+)?total\s+of\s+$|\bin\s+total\s*,?\s+$|\baltogether\s*,?\s+$", re.I)
EN_TOTAL_AFTER = re.compile(
    r"\s*(?:compan(?:y|ies)|banks?|firms?|stocks?)?\s+in\s+total\b|\s*(?:compan(?:y|ies)|banks?|firms?|stocks?)?\s+altogether\b",
    re.I,
)
# "of the 15 companies", "among 12 firms", "out of 20 banks": the whole set, not the answer's size.
EN_WHOLE_BEFORE = re.compile(
    r"\b(?:of|among|amongst|out\s+of|across|from|between|in)\s+(?:the\s+|all\s+|these\s+)?$", re.I
)
# A count in a clause about the knowledge base ("知识库中共有15家公司", "12 companies in the dataset",
# "15家公司中") is the size of the whole set the question is over, not the answer's total.
WHOLE_SET = re.compile(
    r"知识库|数据库|数据集|样本|knowledge\s*base|data\s*set|database|\bsample\b|analy[sz]ed|reviewed", re.I
)
CLAUSE_END = re.compile(r"[，,。；;：:!?！？()（）\n]|\.(?:\s|$)")
WHOLE_AFTER = re.compile(r"\s*(?:公司)?(?:中|之中|里)")
NOUN_ONLY = re.compile(
    r"\s*(?:[\u4e00-\u9fff]{0,4}(?:公司|企业|银行|机构|事务所))?\s*$"
)  # 家(上市公司|审验机构)
RANK_BEFORE = re.compile(r"(?:top|(?<!提)前|第|no\.|#|first|last)\s*$", re.I)
# Before the number: words that state it as the answer's size ("仅返回5家", "只有1家", "only 2 companies").
# Right before it, so "仅审验的有1家" (only audited: a category) is not one.
SIZE_BEFORE = re.compile(
    r"(?:返回|仅有|只有|仅|只|筛选出|找到|找出|得到)(?:了|有|出)?\s*$|\b(?:only|returns?|returned|found)\s+$",
    re.I,
)
# After 家: firms that are not the companies of the answer (审验机构, 会计师事务所).
OTHER_NOUN = re.compile(
    r"\s*[\u4e00-\u9fff]{0,6}?(?:机构|事务所|单位|协会|子公司|分公司|分行|支行|门店|网点|营业部|工厂)"
)
BARE_TOTAL_END = re.compile(r"\s*(?:[.,;:)(（）。，；：]|$)")


@dataclass(frozen=True)
class CountMention:
    value: int
    total: bool  # stated as the size of the answer (共有N家, a total of N), not a part of it
    start: int
    end: int
    text: str
    whole: bool = False  # the size of the whole set the question is over, not of the answer
    explicit: bool = False  # stated as the answer's size in so many words (共有, 仅返回, a total of)
    other: bool = False  # counts firms that are not companies (审验机构, 事务所)


def _number_end(text: str, start: int, end: int) -> int | None:
    m = NUMBER_PART.search(text, start, end)
    return m.end() if m else None


def find_counts(text: str, skip: list[tuple[int, int]] | None = None) -> list[CountMention]:
    """Counts of companies in an NFKC-folded text, in order; `skip` spans (codes, dates) are not numbers."""
    found = []
    for q in find_quantities(text, skip):
        if q.kind in ("money", "percent") or q.value < 0 or not float(q.raw).is_integer():
            continue
        digits_end = _number_end(text, q.start, q.end)
        if digits_end is None:
            continue
        before = text[max(0, q.start - 12) : q.start]
        if RANK_BEFORE.search(before):
            continue
        unit = COMPANY_UNIT.match(text, digits_end)
        chinese_unit = unit is not None and unit.group().strip()[:1] in "家只个"
        spelled_total = bool(EN_TOTAL_BEFORE.search(before))
        whole_before = False
        if unit:
            end = unit.end()
            if chinese_unit:
                total = spelled_total = bool(ZH_TOTAL_BEFORE.search(before))
            else:
                whole_before = bool(EN_WHOLE_BEFORE.search(before)) and not spelled_total
                total = not whole_before
        elif spelled_total and BARE_TOTAL_END.match(text, digits_end):
            end, total = digits_end, True  # "a total of 4."
        elif after := EN_TOTAL_AFTER.match(text, digits_end):
            end, total = after.end(), True  # "4 in total"
            spelled_total = True
        else:
            continue
        whole = whole_before or bool(WHOLE_AFTER.match(text, end) or _about_the_whole_set(text, q.start, end))
        total = total and not whole
        explicit = not whole and (spelled_total or bool(SIZE_BEFORE.search(before)))
        other = chinese_unit and bool(OTHER_NOUN.match(text, end))
        found.append(
            CountMention(int(q.raw), total, q.start, end, text[q.start : end], whole, explicit, other)
        )
    return found


def _about_the_whole_set(text: str, start: int, end: int) -> bool:
    """ "知识库中共有15家公司，..." or "12 companies in the knowledge base": the clause names the
    knowledge base and says nothing more of the count. "知识库中共有8家公司参照了GRI" is a total."""
    before = [m.end() for m in CLAUSE_END.finditer(text, 0, start)]
    after = CLAUSE_END.search(text, end)
    clause_start, clause_end = before[-1] if before else 0, after.start() if after else len(text)
    rest = text[end:clause_end]
    return bool(WHOLE_SET.search(text[clause_start:clause_end])) and bool(
        NOUN_ONLY.match(rest) or WHOLE_SET.search(rest)
    )
