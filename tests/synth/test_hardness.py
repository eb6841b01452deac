"""The difficulties real filings have (issue 10), each forced on one document and checked in the PDF itself.

Every test renders a document with one `Style` flag set, reads the PDF back with pypdfium2 and checks the
difficulty is there and that truth.jsonl still tells the truth about it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import pytest

from data.synth import fmt
from data.synth.companies import make_companies
from data.synth.fields import ANNUAL, DIVIDEND, ESG, MEETING, US
from data.synth.seeding import rng_for
from data.synth.style import RULES, draw_style
from data.synth.values import us_history
from tests.synth.rendering import PLAIN, YEAR, render, squash


# ---- styles ---------------------------------------------------------------------------------------------
def test_every_difficulty_is_drawn_both_ways_and_only_where_it_belongs():
    en = [draw_style(rng_for(0, "style", i), english=True) for i in range(200)]
    zh = [draw_style(rng_for(0, "style", i), english=False) for i in range(200)]
    assert {s.rules for s in en + zh} == set(RULES)
    for flag in ("shade", "split", "notes_before_values", "paired"):
        assert {getattr(s, flag) for s in en} == {getattr(s, flag) for s in zh} == {True, False}, flag
    assert {s.dollar_signs for s in en} == {True, False} and not any(s.dollar_signs for s in zh)
    assert {s.spaced_years for s in zh} == {s.checkboxes for s in zh} == {True, False}
    assert not any(s.spaced_years or s.checkboxes for s in en)


def _lines(path: Path, page: int) -> tuple[list, list, list]:
    """(horizontal rules, vertical rules, filled bands) drawn on a page, as pdfium sees its path objects."""
    pdf = pdfium.PdfDocument(str(path))
    flat, upright, bands = [], [], []
    try:
        for obj in pdf[page - 1].get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH]):
            left, bottom, right, top = obj.get_bounds()
            if right - left > 20 and top - bottom > 5:
                bands.append((left, bottom, right, top))
            elif top - bottom < 2 and right - left > 2:
                flat.append((left, right, round(top)))
            elif right - left < 2 and top - bottom > 2:
                upright.append(round(left))
    finally:
        pdf.close()
    return flat, upright, bands


@pytest.mark.parametrize("rules", RULES)
def test_tables_are_ruled_the_four_ways_real_filings_rule_them(tmp_path, rules):
    doc = render(tmp_path, US, replace(PLAIN, rules=rules, shade=rules == "frame"), pages=4)
    page = doc.row("value_total_assets_usd")["page"]
    flat, upright, bands = _lines(doc.path, page)
    body = [f for f in flat if f[2] < 780]  # below the running header's rule
    width = max((r - left for left, r, _ in body), default=0)
    if rules == "none":
        assert not body and not upright
    elif rules == "rows":  # a full-width rule over every row, nothing vertical
        assert len(body) >= 15 and width > 400 and not upright
    elif rules == "grid":  # ruled both ways: column boundaries too
        assert len(body) >= 15 and len(set(upright)) >= 4
    else:  # frame: under the header and over the totals only, short rules over the figures, on grey bands
        assert 3 <= len(body) < 15 and not upright
        assert any(r - left < 300 for left, r, _ in body)  # total rules span the figure columns only
        assert len(bands) >= 5


# ---- statements over two pages, unit lines ---------------------------------------------------------------
def test_a_us_statement_runs_onto_a_second_page_without_its_header(tmp_path):
    doc = render(tmp_path, US, replace(PLAIN, split=True, unit_place="header"))
    unit = (
        "(In thousands, except per share data)"
        if doc.facts["scale"] == 1000
        else "(In millions, except per share data)"
    )
    head = next(i for i, t in enumerate(doc.texts) if "Cost of sales" in t)
    tail = next(i for i, t in enumerate(doc.texts) if "Basic earnings" in t)
    assert tail == head + 1
    assert squash(unit) in squash(doc.texts[head])  # the unit sits in the header row, on the first page
    assert squash(unit) not in squash(doc.texts[tail]) and "Cost of sales" not in doc.texts[tail]
    assert f"Fiscal {YEAR}" not in doc.texts[tail].split("Basic earnings")[0].rsplit("Net income", 1)[-1]
    assert doc.row("value_net_profit_usd")["page"] == tail + 1  # the asked row is on the page without header


def test_an_a_share_income_statement_runs_onto_a_second_page_without_its_header(tmp_path):
    doc = render(tmp_path, ANNUAL, replace(PLAIN, split=True, unit_place="header"))
    head = next(i for i, t in enumerate(doc.texts) if "二、营业总成本" in t)
    tail = next(i for i, t in enumerate(doc.texts) if "稀释每股收益" in t)
    assert tail == head + 1
    assert "货币单位：人民币元" in squash(doc.texts[head]) and "货币单位：人民币元" not in squash(
        doc.texts[tail]
    )
    assert f"{YEAR}年度" not in squash(doc.texts[tail]) and "项目" not in doc.texts[tail]


@pytest.mark.parametrize(
    "place, en, zh",
    [
        ("title", "(in millions, except per share data)", "合并利润表（单位：人民币元）"),
        ("line", "(In millions, except per share data)", None),
        ("header", "(In millions, except per share data)", "（货币单位：人民币元）"),
    ],
)
def test_unit_lines_sit_where_the_style_puts_them(tmp_path, place, en, zh):
    us = render(tmp_path / "us", US, replace(PLAIN, unit_place=place), firm_index=1)
    if us.facts["scale"] == 1000:
        en = en.replace("millions", "thousands")
    assert squash(en) in squash(us.page("value_net_profit_usd")) or squash(en) in squash(
        us.texts[us.row("value_net_profit_usd")["page"] - 2]
    )
    annual = render(tmp_path / "zh", ANNUAL, replace(PLAIN, unit_place=place))
    text = squash("".join(annual.texts))
    if zh:
        assert squash(zh) in text
    else:
        assert "货币单位：人民币元" in text or "单位：元币种：人民币" in text


# ---- negatives in parentheses ----------------------------------------------------------------------------
def _loss_company(years=(YEAR,)):
    for seed in range(60):
        firms = make_companies(3, 2, rng_for(seed, "companies"))
        for i, firm in enumerate(f for f in firms if f.market == "US"):
            if us_history(firm, list(years), seed)[YEAR]["net_income"] < 0:
                return seed, i
    raise AssertionError("no loss year in 60 seeds: the loss model is gone")


def test_a_loss_prints_in_parentheses_and_its_truth_value_is_negative(tmp_path):
    seed, index = _loss_company()
    doc = render(tmp_path, US, PLAIN, seed=seed, firm_index=index)
    for field in ("value_net_profit_usd", "value_operating_profit_usd"):
        row = doc.row(field)
        if row["value"] >= 0:
            continue
        (text,) = row["strings"]
        assert re.fullmatch(r"\([\d,]+\)", text), text
        assert -float(text.strip("()").replace(",", "")) * doc.facts["scale"] == row["value"]
    assert doc.row("value_net_profit_usd")["value"] < 0
    assert "Net loss was" in "".join(doc.texts) and "Goodwill and asset impairment" in "".join(doc.texts)


def test_decreases_in_the_mdna_table_print_in_parentheses(tmp_path):
    seed, index = _loss_company()
    doc = render(tmp_path, US, PLAIN, seed=seed, firm_index=index)
    text = "".join(doc.texts)
    decreased = [
        k
        for k in ("revenue", "gross_profit", "operating_income", "net_income")
        if doc.facts[k] < doc.prior[k]
    ]
    assert decreased
    assert len(re.findall(r"\(\d+\.\d%\)|\(\d+\.\d\)%", text)) >= len(decreased)


# ---- values with something printed before them -------------------------------------------------------------
def test_thresholds_and_note_markers_stand_between_a_ratio_and_its_value(tmp_path):
    doc = render(tmp_path, ANNUAL, replace(PLAIN, notes_before_values=True))
    row = doc.row("value_capital_adequacy_ratio_pct")
    page = doc.page("value_capital_adequacy_ratio_pct")
    threshold = re.search(r"≥(\d+\.\d\d)（注 ?(\d)）", page)
    assert threshold, page
    assert float(threshold.group(1)) != row["value"] and row["strings"] == [fmt.pct(row["value"])]
    assert f"注 {threshold.group(2)}：" in page  # the note itself, with the threshold again
    statement = doc.page("value_net_profit_cny")
    assert "附注" in "".join(doc.texts) and re.search(r"七、\d\d", statement)


def test_the_threshold_table_is_a_style_choice(tmp_path):
    doc = render(tmp_path, ANNUAL, PLAIN)
    assert "≥" not in "".join(doc.texts) and "附注" not in "".join(doc.texts)


# ---- two metrics on a line, several counts and dates ---------------------------------------------------------
def test_kpi_pairs_put_two_metrics_on_one_line(tmp_path):
    doc = render(tmp_path, ESG, replace(PLAIN, paired=True))
    lines = [ln for t in doc.texts for ln in t.splitlines()]
    assert any(
        "对外捐赠总额（万元）" in ln and ln.count("（") >= 2 and len(re.findall(r"[\d,]+\.\d\d", ln)) >= 2
        for ln in lines
    ), [ln for ln in lines if "捐赠" in ln]


def test_attendance_states_the_total_beside_its_on_site_and_online_parts(tmp_path):
    doc = render(tmp_path, MEETING, replace(PLAIN, attendance="sentence"))
    people = doc.row("value_attending_shareholders_and_proxies_count")
    page = squash(doc.page("value_attending_shareholders_and_proxies_count"))
    on_site = int(re.search(r"现场出席的股东及股东代理人(\d+)人", page).group(1))
    online = int(re.search(r"通过网络投票的股东(\d+)人", page).group(1))
    assert people["strings"] == [str(people["value"])] and on_site + online == people["value"]
    assert on_site != people["value"] != online
    shares = doc.row("value_attending_shares_count")
    parts = [int(x.replace(",", "")) for x in re.findall(r"代表股份([\d,]+)股", page)]
    assert len(parts) == 2 and sum(parts) == shares["value"]


def test_years_can_be_set_apart_from_nian_and_truth_strings_follow(tmp_path):
    doc = render(tmp_path, DIVIDEND, replace(PLAIN, spaced_years=True, record_date="szse_prose"))
    (text,) = doc.row("value_record_date")["strings"]
    assert re.fullmatch(r"\d{4} 年\d{1,2} 月\d{1,2} 日", text), text
    assert re.search(r"\d{4} 年", "".join(doc.texts))
    assert re.search(r"\d{4}年", "".join(doc.texts)) is None  # every year in the document, headings included


@pytest.mark.parametrize("assured_wanted", [True, False])
def test_checkboxes_answer_the_compilation_questions(tmp_path, assured_wanted):
    for seed in range(40):
        doc = render(tmp_path / str(seed), ESG, replace(PLAIN, checkboxes=True), seed=seed, pages=4)
        if doc.row("value_third_party_assured")["value"] is assured_wanted:
            break
    else:
        raise AssertionError("no such report in 40 seeds")
    row = doc.row("value_third_party_assured")
    boxes = [s for s in row["strings"] if "□" in s]
    assert boxes == ["本报告是否经第三方机构鉴证：" + ("√是 □否" if assured_wanted else "□是 √否")]
    gri = doc.row("value_uses_gri_standard")
    assert any(s.endswith("√是 □否" if gri["value"] else "□是 √否") for s in gri["strings"])
