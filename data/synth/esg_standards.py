"""How an ESG report states the standards it follows and answers its compilation questions.

GRI adoption is asked (value_uses_gri_standard): a report that follows GRI names it where the style says
(style.GRI_WAYS), and the name is the truth string; a report that does not is silent about GRI unless it
answers the compilation questions with checkboxes (style.checkboxes), whose line is then cited whichever
box is ticked (style.BOX_FORMS). Third-party assurance is answered by the same checkboxes.

dev ways: "编制依据：本报告参照全球报告倡议组织（GRI）《可持续发展报告标准》...编制" in prose; a numbered
list of the standards consulted. Checkboxes: "是否参照GRI标准编制：√是 □否".
heldout ways (never in the default corpus): a report-information table whose 参考标准 row reads
"《GRI可持续发展报告标准》（2021版）"; "参照全球可持续发展标准委员会（GSSB）发布的《GRI可持续发展报告标准》"
in prose with a GRI content index closing the report. Checkboxes: "是否参照GRI标准 √是 □否", or one
multi-choice line, "报告编制参照（可多选）：■GRI标准 □ISO 26000 ■上交所指引 □其他".
"""

from __future__ import annotations

from .page import Page
from .writer import mark

GRI = "value_uses_gri_standard"
ASSURED = "value_third_party_assured"
SSE_GUIDE = "上海证券交易所《上市公司自律监管指引第1号——规范运作》"
NO_GRI = "编制依据：本报告依据《上市公司自律监管指引》及本行社会责任管理办法编制。"


# ---- dev ------------------------------------------------------------------------------------------------
def basis_prose(p: Page, gri: bool) -> None:
    if not gri:
        p.w.paragraph(NO_GRI)
        return
    p.w.paragraph(
        [
            "编制依据：本报告参照",
            mark("全球报告倡议组织（GRI）《可持续发展报告标准》", GRI),
            "以及上海证券交易所相关指引编制。",
        ]
    )


def standards_list(p: Page, gri: bool) -> None:
    p.w.paragraph("编制依据：本报告参考以下标准编制：")
    items = [SSE_GUIDE, "国际标准化组织《ISO 26000：2010社会责任指南》"]
    if gri:
        items.insert(1, mark("全球报告倡议组织（GRI）《可持续发展报告标准》（GRI Standards）", GRI))
    else:
        items.append("中国社会科学院《中国企业社会责任报告指南》")
    for i, item in enumerate(items):
        p.w.paragraph([f"{i + 1}. ", item, "。" if i == len(items) - 1 else "；"], indent=False)


# ---- heldout --------------------------------------------------------------------------------------------
def info_table(p: Page, gri: bool) -> None:
    s = p.spec
    rows = [
        ["报告信息", "说明"],
        ["报告周期", f"{s.year}年1月1日至{s.year}年12月31日"],
        ["报告范围", f"{s.company.name}总行及各分支机构"],
        ["参考标准", mark("《GRI可持续发展报告标准》（2021版）", GRI) if gri else SSE_GUIDE],
        ["发布形式", "中文印刷版及电子版"],
    ]
    if gri:
        rows.insert(4, ["其他依据", SSE_GUIDE])
    p.w.table(rows, [0.24, 0.76], align_right_from=9)


def gssb_prose(p: Page, gri: bool) -> None:
    if not gri:
        p.w.paragraph(NO_GRI)
        return
    p.w.paragraph(
        [
            "编制依据：本报告参照",
            mark("全球可持续发展标准委员会（GSSB）发布的《GRI可持续发展报告标准》", GRI),
            "（GRI Standards）编制，并遵循上海证券交易所相关指引，GRI内容索引见本报告附录。",
        ]
    )


WAYS = {
    "basis_prose": basis_prose,
    "standards_list": standards_list,
    "info_table": info_table,
    "gssb_prose": gssb_prose,
}


def gri_index(p: Page) -> None:
    """The content index a GSSB-style report closes with (not cited: GRI is stated in the notes already)."""
    p.w.heading("附录：GRI内容索引")
    rows = [
        ["GRI标准", "披露项", "报告章节"],
        ["GRI 2-1", "组织详细情况", "关于本报告"],
        ["GRI 2-9", "治理架构和组成", "公司治理"],
        ["GRI 201-1", "直接产生和分配的经济价值", "关键绩效表"],
        ["GRI 203-1", "基础设施投资和支持性服务", "公共关系与社会公益事业"],
        ["GRI 401-1", "新进员工和员工流动率", "职工权益保护"],
    ]
    p.w.table(rows, [0.22, 0.46, 0.32], align_right_from=9)


# ---- checkboxes ------------------------------------------------------------------------------------------
def _ticked(yes: bool, tick: str = "√") -> str:
    return f"{tick}是 □否" if yes else f"□是 {tick}否"


def boxes(p: Page, gri: bool, assured: bool) -> None:
    """The compilation questions answered with ticked boxes; each answer's whole line is its truth string."""
    form = p.style.box_form
    if form == "colon":
        gri_line = f"是否参照GRI标准编制：{_ticked(gri)}"
        assured_line = f"本报告是否经第三方机构鉴证：{_ticked(assured)}"
    elif form == "spaced":
        gri_line = f"是否参照GRI标准 {_ticked(gri)}"
        assured_line = f"是否经第三方机构鉴证 {_ticked(assured)}"
    else:  # multi_choice: several standards on one line, the consulted ones ticked
        iso = p.spec.rng.random() < 0.4

        def box(on: bool) -> str:
            return "■" if on else "□"

        gri_line = f"报告编制参照（可多选）：{box(gri)}GRI标准 {box(iso)}ISO 26000 ■上交所指引 □其他"
        assured_line = f"第三方鉴证（单选）：{_ticked(assured, '■')}"
    p.w.paragraph([mark(gri_line, GRI)], indent=False)
    p.w.paragraph([mark(assured_line, ASSURED)], indent=False)
