"""How a meeting resolution notice prints who attended: one function per way (style.ATTENDANCE_WAYS).

Asked (for the annual meeting only): the number of shareholders and proxies present, the voting shares
they hold and that holding's share of all voting shares. Every way prints each total beside parts of
the same kind (on-site and online voters, A and H shares, minority holders), of which only the total
is asked; every meeting of the document is printed the same way, with its own numbers.

dev ways: the SSE table "1、出席会议的股东和代理人人数 | 154" (an A+H bank adds A- and H-share rows); one
sentence, "出席会议的股东和代理人人数为154人，所持有表决权的股份总数为...股"; a table whose columns are
出席会议的股东和代理人人数 / 所持有表决权股份总数（股） / 比例 over 现场出席, 网络投票 and 合计 rows.
heldout ways (never in the default corpus): the SZSE "股东出席的总体情况：通过现场和网络投票的股东154人，
代表股份...股，占上市公司总股份的...%" with the 中小股东 line after it; "出席本次股东大会的股东及股东授权
委托代表共154名"; a transposed table, one row per measure and 现场出席 | 网络投票 | 合计 columns.
"""

from __future__ import annotations

from dataclasses import dataclass

from .page import Page
from .writer import Part, mark

PEOPLE = "value_attending_shareholders_and_proxies_count"
SHARES = "value_attending_shares_count"
RATIO = "value_attendance_share_ratio_pct"
DEV_INTRO = "（三）出席会议的普通股股东及其持有股份情况："


@dataclass(frozen=True)
class Attendance:
    """One meeting's totals as printed (marked when the meeting is the annual one) and their parts."""

    people: Part
    shares: Part
    ratio: Part
    on_site: int  # on-site people and shares; the rest voted online
    on_site_shares: int
    on_site_ratio: str
    online: int
    online_shares: int
    online_ratio: str
    minority: int  # holders of under 5% (中小股东), counted in the total too
    minority_shares: int
    minority_ratio: str


def attendance(meeting: dict, annual: bool, decimals: int, rng) -> Attendance:
    people, shares = meeting["people"], meeting["shares"]
    on_site = rng.randint(2, min(40, people - 1))
    on_site_shares = round(shares * rng.uniform(0.55, 0.95))
    on_site_ratio = round(meeting["ratio"] * on_site_shares / shares, decimals)
    minority = rng.randint(max(1, people // 2), people - 1)
    minority_shares = round(shares * rng.uniform(0.01, 0.08))
    ratio = f"{meeting['ratio']:.{decimals}f}"
    printed = [str(people), f"{shares:,}", ratio]
    if annual:
        printed = [mark(printed[0], PEOPLE), mark(printed[1], SHARES), mark(printed[2], RATIO)]
    return Attendance(
        *printed,
        on_site,
        on_site_shares,
        f"{on_site_ratio:.{decimals}f}",
        people - on_site,
        shares - on_site_shares,
        f"{meeting['ratio'] - on_site_ratio:.{decimals}f}",
        minority,
        minority_shares,
        f"{meeting['ratio'] * minority_shares / shares:.{decimals}f}",
    )


def _with_share_classes(rows: list[list], meeting: dict, decimals: int, rng) -> list[list]:
    h_people = rng.randint(1, 3)
    a_shares = round(meeting["shares"] * rng.uniform(0.7, 0.95))
    a_ratio = round(meeting["ratio"] * a_shares / meeting["shares"], decimals)
    return [
        rows[0],
        ["其中：A股股东人数", str(meeting["people"] - h_people)],
        ["境外上市外资股股东人数（H股）", str(h_people)],
        rows[1],
        ["其中：A股股东持有股份总数", f"{a_shares:,}"],
        ["境外上市外资股股东持有股份总数", f"{meeting['shares'] - a_shares:,}"],
        rows[2],
        ["其中：A股股东持股占股份总数的比例（%）", f"{a_ratio:.{decimals}f}"],
        ["境外上市外资股股东持股占股份总数的比例（%）", f"{meeting['ratio'] - a_ratio:.{decimals}f}"],
    ]


# ---- dev ------------------------------------------------------------------------------------------------
def sse_table(p: Page, a: Attendance, meeting: dict, decimals: int, dual_listed: bool) -> None:
    p.w.paragraph(DEV_INTRO, indent=False)
    rows = [
        ["1、出席会议的股东和代理人人数", a.people],
        ["2、出席会议的股东所持有表决权的股份总数（股）", a.shares],
        ["3、出席会议的股东所持有表决权股份数占公司有表决权股份总数的比例（%）", a.ratio],
    ]
    if dual_listed:
        rows = _with_share_classes(rows, meeting, decimals, p.spec.rng)
    p.w.table(rows, [0.72, 0.28], header_rows=0, by_column=p.spec.rng.random() < 0.3)


def sentence(p: Page, a: Attendance, meeting: dict, decimals: int, dual_listed: bool) -> None:
    p.w.paragraph(DEV_INTRO, indent=False)
    p.w.paragraph(
        [
            "出席会议的股东和代理人人数为",
            a.people,
            "人，所持有表决权的股份总数为",
            a.shares,
            "股，占公司有表决权股份总数的",
            a.ratio,
            f"%。其中，现场出席的股东及股东代理人{a.on_site}人，代表股份{a.on_site_shares:,}股；"
            f"通过网络投票的股东{a.online}人，代表股份{a.online_shares:,}股。",
        ]
    )


def column_table(p: Page, a: Attendance, meeting: dict, decimals: int, dual_listed: bool) -> None:
    p.w.paragraph(DEV_INTRO, indent=False)
    rows = [
        [
            "出席方式",
            "出席会议的股东和代理人人数",
            "所持有表决权股份总数（股）",
            "占公司有表决权股份总数的比例（%）",
        ],
        ["现场出席", str(a.on_site), f"{a.on_site_shares:,}", a.on_site_ratio],
        ["网络投票", str(a.online), f"{a.online_shares:,}", a.online_ratio],
        ["合计", a.people, a.shares, a.ratio],
    ]
    p.w.table(rows, [0.12, 0.3, 0.3, 0.28], totals=(3,), by_column=p.spec.rng.random() < 0.3)


# ---- heldout --------------------------------------------------------------------------------------------
def szse_overall(p: Page, a: Attendance, meeting: dict, decimals: int, dual_listed: bool) -> None:
    w = p.w
    w.paragraph("（三）会议出席情况", indent=False)
    w.paragraph("1、股东出席的总体情况：", indent=False)
    w.paragraph(
        [
            "通过现场和网络投票的股东",
            a.people,
            "人，代表股份",
            a.shares,
            "股，占上市公司总股份的",
            a.ratio,
            "%。",
        ]
    )
    w.paragraph(
        f"其中：通过现场投票的股东{a.on_site}人，代表股份{a.on_site_shares:,}股，占上市公司总股份的"
        f"{a.on_site_ratio}%。通过网络投票的股东{a.online}人，代表股份{a.online_shares:,}股，占上市公司总股份的"
        f"{a.online_ratio}%。"
    )
    w.paragraph("2、中小股东出席的总体情况：", indent=False)
    w.paragraph(
        f"通过现场和网络投票的中小股东{a.minority}人，代表股份{a.minority_shares:,}股，占上市公司总股份的"
        f"{a.minority_ratio}%。"
    )


def proxies_sentence(p: Page, a: Attendance, meeting: dict, decimals: int, dual_listed: bool) -> None:
    p.w.paragraph("（三）会议出席情况", indent=False)
    p.w.paragraph(
        [
            "出席本次股东大会的股东及股东授权委托代表共",
            a.people,
            "名，代表股份",
            a.shares,
            "股，占公司有表决权股份总数的",
            a.ratio,
            f"%。其中：出席现场会议的股东及股东授权委托代表{a.on_site}名，代表股份{a.on_site_shares:,}股；"
            f"参加网络投票的股东{a.online}名，代表股份{a.online_shares:,}股。",
        ]
    )


def transposed_table(p: Page, a: Attendance, meeting: dict, decimals: int, dual_listed: bool) -> None:
    p.w.paragraph("（三）股东出席情况", indent=False)
    rows = [
        ["项目", "现场出席", "网络投票", "合计"],
        ["股东及股东代理人人数（人）", str(a.on_site), str(a.online), a.people],
        ["代表有表决权的股份数（股）", f"{a.on_site_shares:,}", f"{a.online_shares:,}", a.shares],
        ["占公司有表决权股份总数的比例（%）", a.on_site_ratio, a.online_ratio, a.ratio],
    ]
    p.w.table(rows, [0.34, 0.2, 0.2, 0.26], by_column=p.spec.rng.random() < 0.3)


WAYS = {
    "sse_table": sse_table,
    "sentence": sentence,
    "column_table": column_table,
    "szse_overall": szse_overall,
    "proxies_sentence": proxies_sentence,
    "transposed_table": transposed_table,
}
