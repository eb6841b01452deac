"""Rules that read an A-share filing's identity from its first pages: code, company, report kind, year.

The text is NFKC-normalized first (full-width "：（）" and digits become ASCII). A filing names
its kind and year in its title ("2022年年度报告", "2021 年度社会责任(ESG)报告", "2021年度利润分配方案公告"),
and its code beside 证券代码/股票代码/公司代码. The title is the kind's earliest mention: a dividend
notice may cite "2021年年度报告" further down, never above its own title.

The year a document covers: a report's or a distribution's fiscal year as its title writes it. A
shareholder-meeting announcement's year is the year the meeting is held: "2020年年度股东大会" is held in
2021 (as the synthetic corpus, after MuDABench, files it), so its date is read first, and the title's
fiscal year plus one is a fallback that asks for a check.
"""

from __future__ import annotations

import re
import unicodedata

from retrievers.catalog_draft.finding import Finding, first

# MuDABench's names (data.synth uses them); the half-year and quarterly reports and other announcements,
# which MuDABench has none for, are named after them.
ANNUAL, HALF_YEAR, QUARTERLY = "A股年报", "A股半年报", "A股季报"
ESG, DIVIDEND, MEETING, OTHER = "A股ESG报告", "A股利润分配权益类公告", "A股股东大会类公告", "A股其他公告"
DOCTYPES = (ANNUAL, HALF_YEAR, QUARTERLY, ESG, DIVIDEND, MEETING, OTHER)

_YEAR = r"((?:19|20)\d{2})"
_KINDS = [  # (doctype, title pattern); a pattern's group 1, when it has one, is the year
    (HALF_YEAR, re.compile(rf"{_YEAR}\s*年\s*半年度报告")),
    (QUARTERLY, re.compile(rf"{_YEAR}\s*年\s*(?:第[一二三1-3]季度|[一三]季度)报告")),
    (ANNUAL, re.compile(rf"{_YEAR}\s*年\s*(?:年度)?报告|{_YEAR}\s*年度报告")),
    (
        ESG,
        re.compile(
            r"(?:社会责任|可持续发展|ESG|环境、社会及(?:公司)?管治|环境、社会和(?:公司)?治理)[^\n。]{0,20}?报告"
        ),
    ),
    (DIVIDEND, re.compile(r"(?:利润分配|权益分派|分红派息|现金分红)[^\n。]{0,20}?公告")),
    (MEETING, re.compile(r"股东大会")),
]
_YEAR_BEFORE = re.compile(rf"{_YEAR}\s*年?\s*(?:年度|半年度|度)?\s*[^\d\n]{{0,6}}$")
_MEETING_DATE = re.compile(rf"(?:召开的?|会议)(?:日期|时间)(?:和地点)?\s*:?\s*{_YEAR}\s*年")
_MEETING_TITLE = re.compile(rf"{_YEAR}\s*年\s*(?:第[一二三四五六七八九十\d]+次临时)?股东大会")
_ANNUAL_MEETING = re.compile(rf"{_YEAR}\s*年\s*年度股东大会")
_NOTICE_NUMBER = re.compile(rf"公告编号\s*:?\s*[^\d\s]{{0,3}}{_YEAR}\s*-\s*\d+")
_CODE = re.compile(
    r"(?:(?:A股)?(?:证券|股票|公司)代码|A股代码)\s*:?\s*(\d{6})(?!\d)"
)  # not 债券代码: a bond's
_SHORT_NAME = re.compile(r"(?:证券|股票|公司)简称\s*:?\s*([^\s:]{2,12})")
_FULL_NAME = r"[\u4e00-\u9fff()]{2,40}?(?:股份有限公司|有限责任公司|有限公司)"
_NAME_LINE = re.compile(rf"^\s*({_FULL_NAME})\s*$", re.M)
_NAME_ANYWHERE = re.compile(rf"({_FULL_NAME})")


def read_a_share(text: str) -> dict[str, Finding]:
    """The identity fields the first pages state: doctype, year, symbol, company (each when found)."""
    text = _close_gaps(unicodedata.normalize("NFKC", text))
    found: dict[str, Finding] = {}
    code = _CODE.search(text)
    if code:
        found["symbol"] = Finding(code.group(1), "cover:security-code", sure=True)
    company = _company(text)
    if company:
        found["company"] = company
    kind = _kind(text)
    if kind is None:
        return found
    doctype, match = kind
    found["doctype"] = Finding(doctype, "title:report-kind", sure=doctype != OTHER)
    year = _meeting_year(text) if doctype == MEETING else _title_year(text, match)
    year = year or _notice_year(text)
    if year:
        found["year"] = year
    return found


def _close_gaps(text: str) -> str:
    """A letter-spaced title ("2 0 2 2 年 年 度 报 告", as text extraction gives a heading set with wide
    tracking) read as words: spaces dropped beside a Chinese character and between single digits."""
    text = re.sub(
        r"(?<=[\u4e00-\u9fff])[ \t]+(?=[\u4e00-\u9fff\d(])|(?<=[\d)])[ \t]+(?=[\u4e00-\u9fff])", "", text
    )
    return re.sub(r"(?<![\d,.])\d(?: \d){3}(?![\d,.])", lambda m: m.group(0).replace(" ", ""), text)


def _kind(text: str) -> tuple[str, re.Match] | None:
    """The doctype whose title words come first; an announcement of no known kind when only 公告 says so."""
    hits = [(m.start(), doctype, m) for doctype, pattern in _KINDS for m in [pattern.search(text)] if m]
    if hits:
        _, doctype, match = min(hits, key=lambda hit: hit[0])
        return doctype, match
    notice = _NOTICE_NUMBER.search(text)
    return (OTHER, notice) if notice else None


def _title_year(text: str, match: re.Match) -> Finding | None:
    inside = next((g for g in match.groups() if g), None)  # the pattern read the year with the kind
    if inside:
        return Finding(int(inside), "title:year", sure=True)
    line_start = text.rfind("\n", 0, match.start()) + 1
    before = _YEAR_BEFORE.search(text[max(line_start, match.start() - 20) : match.start()])
    return Finding(int(before.group(1)), "title:year", sure=True) if before else None


def _meeting_year(text: str) -> Finding | None:
    date = _MEETING_DATE.search(text)
    title = _MEETING_TITLE.search(text)
    annual = _ANNUAL_MEETING.search(text)
    return first(
        Finding(int(date.group(1)), "text:meeting-date", sure=True) if date else None,
        Finding(int(title.group(1)), "title:meeting-year", sure=True) if title else None,
        Finding(int(annual.group(1)) + 1, "title:annual-meeting-fiscal-year+1", sure=False)
        if annual
        else None,
    )


def _notice_year(text: str) -> Finding | None:
    notice = _NOTICE_NUMBER.search(text)
    return Finding(int(notice.group(1)), "text:notice-number-year", sure=False) if notice else None


def _company(text: str) -> Finding | None:
    line = _NAME_LINE.search(text)
    if line:
        return Finding(line.group(1), "cover:company-name", sure=True)
    anywhere = _NAME_ANYWHERE.search(text)
    if anywhere:
        return Finding(anywhere.group(1), "text:company-name", sure=False)
    short = _SHORT_NAME.search(text)
    return Finding(short.group(1), "cover:short-name", sure=False) if short else None
