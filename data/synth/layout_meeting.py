"""A股股东大会类公告: every shareholder meeting resolution announcement of calendar year Y, merged.

The annual meeting's attendance (people, shares, share ratio) is the truth; the extraordinary meetings
carry the same table with their own numbers, a distractor a careless reader takes instead. Meeting and
voting methods are stated in prose; each announcement title names the meeting and its date.
Beside each total stand its parts (A- and H-share holders, on-site and online voters, minority holders),
printed the way the document's style says (meeting_attendance.py): several counts of the same kind in
one notice, of which only the total is asked.
"""

from __future__ import annotations

from . import fmt, meeting_attendance
from .meeting_attendance import attendance
from .page import Page
from .writer import mark

EVENTS = "value_shareholder_meeting_events"
EXTRA_COUNT = "value_extraordinary_shareholder_meeting_count"


def _methods_text(methods: list[str]) -> str:
    if "其他方式" in methods:
        return "现场投票、网络投票及其他方式相结合"
    return "现场投票和网络投票相结合"


def _voting_text(voting: list[str]) -> str:
    return "逐项表决，其中选举董事的议案采用累积投票制" if "累积投票" in voting else "逐项表决"


def write_meeting(p: Page) -> None:
    w, s, rng = p.w, p.spec, p.spec.rng
    f, c, year = s.facts, s.company, s.year
    meetings = f["meetings"]
    ratio_decimals = rng.choice([2, 4])
    dual_listed = (
        rng.random() < 0.5
    )  # an A+H bank: every attendance total followed by its A- and H-share parts
    for i, meeting in enumerate(meetings):
        annual = meeting["type"] == "年度股东大会"
        title = (
            f"{year - 1}年年度股东大会决议公告"
            if annual
            else f"{year}年第{fmt.zh_numeral(meeting['number'])}次临时股东大会决议公告"
        )
        if i:
            w.new_page()
        w.heading(
            f"证券代码：{c.symbol}    证券简称：{c.short_name}    公告编号：{year}-{10 * i + rng.randint(1, 9):03d}",
            size=10,
        )
        w.centered(c.name, 15)
        fields = (EVENTS,) if annual else (EVENTS, EXTRA_COUNT)
        w.heading(mark(title, *fields), size=14)
        w.paragraph("重要内容提示：● 本次会议是否有否决议案：无", indent=False)
        w.paragraph("一、会议召开和出席情况", indent=False)
        w.paragraph(
            [
                "（一）股东大会召开的时间：",
                mark(fmt.date_cn(meeting["date"]), EVENTS) if i == 0 else fmt.date_cn(meeting["date"]),
            ],
            indent=False,
        )
        w.paragraph(f"（二）股东大会召开的地点：{c.city[1]}本行总行大楼会议室", indent=False)
        counts = attendance(meeting, annual, ratio_decimals, rng)
        meeting_attendance.WAYS[p.style.attendance](p, counts, meeting, ratio_decimals, dual_listed)
        methods = _methods_text(f["methods"]) if annual else "现场投票和网络投票相结合"
        voting = _voting_text(f["voting"]) if annual else "逐项表决"
        w.paragraph(
            [
                "（四）表决方式是否符合《公司法》及《公司章程》的规定，大会主持情况等。本次会议由董事会召集，采用",
                mark(methods, "value_annual_meeting_methods") if annual else methods,
                "的方式召开，会议议案采用",
                mark(voting, "value_annual_meeting_voting_methods") if annual else voting,
                "方式审议表决。",
            ]
        )
        directors = rng.randint(9, 15)
        supervisors = rng.randint(3, 7)
        w.paragraph(  # more attendance counts, of the board: real notices print them after the holders'
            f"（五）公司董事、监事和董事会秘书的出席情况：1、公司在任董事{directors}人，出席"
            f"{directors - rng.randint(0, 3)}人；2、公司在任监事{supervisors}人，出席{supervisors - rng.randint(0, 2)}人；"
            "3、董事会秘书出席了本次会议，其他高级管理人员列席了本次会议。",
            indent=False,
        )
        w.paragraph("二、议案审议情况", indent=False)
        for k in range(rng.randint(3, 7)):
            agree = rng.uniform(97, 99.99)
            w.paragraph(
                f"{k + 1}、议案名称：关于{rng.choice(['年度财务决算', '聘请会计师事务所', '发行金融债券', '董事会工作报告', '关联交易'])}"
                f"的议案。审议结果：通过。同意票数{int(meeting['shares'] * agree / 100):,}股，占比{agree:.4f}%。",
                indent=False,
            )
        w.paragraph(
            f"三、律师见证情况：本次股东大会经{rng.choice(['北京市金杜', '上海市锦天城', '北京市中伦'])}律师事务所律师见证，"
            f"会议的召集、召开程序及表决结果合法有效。特此公告。{c.name}董事会 {fmt.date_cn(meeting['date'])}"
        )
        p.section_done(i, len(meetings))
