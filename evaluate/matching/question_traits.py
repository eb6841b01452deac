"""What a MuDABench question asks for, read from its wording: a ranking, ties, values, free text.

The matcher needs this to know whether order matters, whether an extra company breaks the answer,
and whether a number of the gold answer is a key fact or an aside (a simple question asking for
codes whose gold adds "（各11人）").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evaluate.matching.quantities import find_dates, find_quantities, fold

RANKING = re.compile(
    r"最高|最多|最快|最大|最优|最低|最少|最早|最晚|最差|前[一二三四五六七八九十\d]|排名|\btop\b|highest|largest|"
    r"\bmost\b|lowest|\bbest\b|biggest|ranked|fastest",
    re.I,
)
TIES = re.compile(r"并列|\bties?\b|\btied\b", re.I)
ASKS_VALUES = re.compile(
    r"多少|几家|几天|几个|及其|和具体|以及|和它们|和这些|具体|得分|金额|比例是|增长率是|(?:代码|symbols?)\s*(?:和|及|、|and)|"
    r"exact|how many|how much|amounts?\b|percentages?\b|\bvalues?\b",
    re.I,
)
ASKS_TEXT = re.compile(
    r"审验机构(?:是|名称|及)|哪家(?!公司)|名称|名字|姓名|地址(?!在|发生|变更|变化|的公司)|从哪里|哪些方面|内容|方式|\bnames?\b|address",
    re.I,
)
# Asks which companies: codes, tickers, "哪些公司", "最高的三家公司", "which companies", "identify the top three".
ASKS_COMPANIES = re.compile(
    r"代码|哪些公司|哪家公司|哪几家|是哪些|有哪些|[几一二两三四五六七八九十\d]+家(?:上市)?公司|找出.{0,40}公司|"
    r"symbols?|tickers?|which\s+(?:\w+\s+)?compan|identify\s+the",
    re.I,
)
GROWTH = re.compile(r"增长|变化|增速")
ASKS_MONTH = re.compile(r"哪个月|哪一个月|which month", re.I)
ASKS_DATE = re.compile(r"哪个日期|哪一天|什么日期|哪天|which (?:date|day)|what date", re.I)


@dataclass(frozen=True)
class QuestionTraits:
    ranking: bool  # the order of the named companies matters
    ties: bool  # the question allows ties: companies within a tier may come in any order
    asks_values: bool  # numbers in the gold answer are key facts, not asides
    asks_month: bool  # "哪个月份": the month is the answer even when nothing else is asked
    asks_date: bool
    asks_text: bool  # names, addresses, firms or methods: text the matcher cannot fully check
    asks_companies: bool  # which companies (codes, tickers): an answer naming none is wrong
    growth_quirk: bool  # A-share growth: the gold prints fractions with "%" ("-0.14%" means -14%)
    numbers: frozenset[
        tuple[float, str]
    ]  # (number, kind) written in the question: years, weights, thresholds


def read_question(question: str) -> QuestionTraits:
    text = fold(question)
    chinese = bool(re.search(r"[\u4e00-\u9fff]", text))
    dates = [(d.start, d.end) for d in find_dates(text)]
    numbers = frozenset((q.raw, q.kind) for q in find_quantities(text, dates))
    return QuestionTraits(
        ranking=bool(RANKING.search(text)),
        ties=bool(TIES.search(text)),
        asks_values=bool(ASKS_VALUES.search(text)),
        asks_month=bool(ASKS_MONTH.search(text)),
        asks_date=bool(ASKS_DATE.search(text)),
        asks_text=bool(ASKS_TEXT.search(text)),
        asks_companies=bool(ASKS_COMPANIES.search(text)),
        growth_quirk=chinese and bool(GROWTH.search(text)),
        numbers=numbers,
    )
