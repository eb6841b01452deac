"""The ways record dates, meeting attendance and GRI adoption are printed (issue 23), each forced on one
document and read back from the PDF; the held-out family prints them only in ways dev never uses.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import astuple, replace

import pytest

from data.synth import generate
from data.synth.fields import DIVIDEND, ESG, MEETING
from data.synth.seeding import rng_for
from data.synth.style import (
    ATTENDANCE_WAYS,
    BOX_FORMS,
    FAMILIES,
    GRI_WAYS,
    RECORD_DATE_WAYS,
    Style,
    draw_style,
)
from tests.synth.rendering import PLAIN, render, squash

POOLS = {
    "record_date": RECORD_DATE_WAYS,
    "attendance": ATTENDANCE_WAYS,
    "gri": GRI_WAYS,
    "box_form": BOX_FORMS,
}
DATE = re.compile(r"(\d{4})\s*[年/-]\s*(\d{1,2})\s*[月/-]\s*(\d{1,2})")
GROUPED = re.compile(r"\d{1,3}(?:,\d{3})+")


def _dates(text: str) -> set[dt.date]:
    return {dt.date(int(y), int(m), int(d)) for y, m, d in DATE.findall(text)}


def _ways(family: str) -> list[tuple[str, str]]:
    return [(name, way) for name, pool in POOLS.items() for way in pool[family]]


# ---- families -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", POOLS)
def test_the_heldout_family_shares_no_way_with_dev(name):
    pool = POOLS[name]
    assert set(pool) == set(FAMILIES) and pool["dev"] and pool["heldout"]
    assert not set(pool["dev"]) & set(pool["heldout"])


@pytest.mark.parametrize("family", FAMILIES)
def test_a_family_draws_each_of_its_ways_and_nothing_else(family):
    styles = [draw_style(rng_for(0, "style", i), english=False, family=family) for i in range(300)]
    for name, pool in POOLS.items():
        assert {getattr(s, name) for s in styles} == set(pool[family]), name


def test_the_family_changes_only_the_ways_of_the_same_stream():
    ways = set(POOLS)
    for i in range(50):
        dev = draw_style(rng_for(0, "style", i), english=False)
        held = draw_style(rng_for(0, "style", i), english=False, family="heldout")
        fixed = [f for f in Style.__dataclass_fields__ if f not in ways]
        assert [getattr(dev, f) for f in fixed] == [getattr(held, f) for f in fixed]
        assert astuple(dev) != astuple(held)


def test_an_unknown_family_is_refused_with_the_choices(tmp_path):
    with pytest.raises(ValueError, match="dev, heldout"):
        draw_style(rng_for(0, "style"), english=False, family="test")
    with pytest.raises(ValueError, match="dev, heldout"):
        generate(tmp_path / "x", companies=2, years=[2022], pages=3, styles="test")


# ---- record dates -------------------------------------------------------------------------------------------
LABELS = {  # the label each way prints the record date under
    "sse_table": "股权登记日",
    "szse_prose": "股权登记日为：",
    "event_list": "股权登记日",
    "ah_share_table": "股权登记日",
    "equity_section": "本次权益分派权益登记日为：",
    "a_share_bullets": "●A股股权登记日：",
    "schedule_table": "权益登记日",
}


@pytest.mark.parametrize("way", [w for f in FAMILIES for w in RECORD_DATE_WAYS[f]])
def test_each_record_date_way_prints_its_label_and_truth_names_the_record_date(tmp_path, way):
    doc = render(tmp_path, DIVIDEND, replace(PLAIN, record_date=way), pages=4)
    record, mmdd, ex = (
        doc.row(f) for f in ("value_record_date", "value_record_date_mmdd", "value_ex_dividend_date")
    )
    page = squash(doc.page("value_record_date"))
    assert record["page"] == ex["page"] and LABELS[way] in page
    assert _dates(record["strings"][0]) == {dt.date.fromisoformat(record["value"])}
    assert mmdd["strings"] == record["strings"] and mmdd["value"] == record["value"][5:]
    assert _dates(ex["strings"][0]) == {dt.date.fromisoformat(ex["value"])} and record["value"] != ex["value"]
    # neighbours a reader must tell apart: at least one more date than the two asked
    assert len(_dates(page) - {doc.facts["record_date"], doc.facts["ex_date"]}) >= 1
    if way in ("ah_share_table", "a_share_bullets"):  # an H-share record date, not the asked one
        assert re.search(r"H股股权登记日[：为]", page)
    if way in ("equity_section", "schedule_table"):  # the held-out label only, on the page that states it
        assert "股权登记日" not in page


def test_heldout_dates_come_padded_with_weekdays_or_in_iso_form(tmp_path):
    bullets = render(tmp_path / "b", DIVIDEND, replace(PLAIN, record_date="a_share_bullets"), pages=4)
    (text,) = bullets.row("value_record_date")["strings"]
    assert re.fullmatch(r"\d{4}年\d\d月\d\d日", text)
    assert re.search(
        re.escape(squash(text)) + r"（星期[一二三四五]）", squash(bullets.page("value_record_date"))
    )
    table = render(tmp_path / "t", DIVIDEND, replace(PLAIN, record_date="schedule_table"), pages=4)
    assert table.row("value_record_date")["strings"] == [table.row("value_record_date")["value"]]


# ---- attendance -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("way", [w for f in FAMILIES for w in ATTENDANCE_WAYS[f]])
def test_each_attendance_way_prints_the_totals_truth_names(tmp_path, way):
    doc = render(tmp_path, MEETING, replace(PLAIN, attendance=way), pages=5)
    people, shares, ratio = (
        doc.row(f)
        for f in (
            "value_attending_shareholders_and_proxies_count",
            "value_attending_shares_count",
            "value_attendance_share_ratio_pct",
        )
    )
    assert people["strings"] == [str(people["value"])]
    assert shares["strings"] == [f"{shares['value']:,}"]
    assert float(ratio["strings"][0]) == ratio["value"]
    page = squash(doc.page("value_attending_shares_count"))
    dev_label = "出席会议的股东和代理人人数" in page
    assert dev_label == (way in ATTENDANCE_WAYS["dev"])
    if way != "sse_table":  # the total's parts: two share counts that add up to it
        printed = GROUPED.findall(doc.page("value_attending_shares_count"))  # not squashed: cells stay apart
        amounts = {int(x.replace(",", "")) for x in printed} - {shares["value"]}
        assert any(shares["value"] - a in amounts for a in amounts), way


def test_the_szse_way_adds_the_minority_holders_a_reader_must_not_take(tmp_path):
    doc = render(tmp_path, MEETING, replace(PLAIN, attendance="szse_overall"), pages=5)
    page = squash(doc.page("value_attending_shareholders_and_proxies_count"))
    people = doc.row("value_attending_shareholders_and_proxies_count")["value"]
    minority = int(re.search(r"通过现场和网络投票的中小股东(\d+)人", page).group(1))
    assert f"通过现场和网络投票的股东{people}人" in page and 0 < minority < people


# ---- GRI adoption ----------------------------------------------------------------------------------------
def _esg(tmp_path, style: Style, gri: bool):
    for seed in range(40):
        doc = render(tmp_path / str(seed), ESG, style, seed=seed, pages=5)
        if doc.row("value_uses_gri_standard")["value"] is gri:
            return doc
    raise AssertionError(f"no report with gri={gri} in 40 seeds")


@pytest.mark.parametrize("gri", [True, False])
@pytest.mark.parametrize("way", [w for f in FAMILIES for w in GRI_WAYS[f]])
def test_each_gri_way_names_the_standard_or_stays_silent(tmp_path, way, gri):
    doc = _esg(tmp_path, replace(PLAIN, gri=way), gri)
    row = doc.row("value_uses_gri_standard")
    if gri:
        (text,) = row["strings"]
        assert "GRI" in text and row["page"] == 2  # in the notes on compilation, after the cover
        index = "附录：GRI内容索引" in squash("".join(doc.texts))
        assert index == (way == "gssb_prose")
    else:
        assert row["strings"] == [] and "GRI" not in "".join(doc.texts)


@pytest.mark.parametrize("gri", [True, False])
@pytest.mark.parametrize("form", [f for fam in FAMILIES for f in BOX_FORMS[fam]])
def test_each_checkbox_form_is_cited_whole_whichever_box_is_ticked(tmp_path, form, gri):
    doc = _esg(tmp_path, replace(PLAIN, checkboxes=True, box_form=form), gri)
    boxes = [s for s in doc.row("value_uses_gri_standard")["strings"] if "□" in s]
    assert len(boxes) == 1
    if form == "multi_choice":
        assert (
            boxes[0].startswith("报告编制参照（可多选）：")
            and ("■GRI标准" if gri else "□GRI标准") in boxes[0]
        )
    else:
        assert boxes[0].endswith("√是 □否" if gri else "□是 √否")
        assert ("：" in boxes[0]) == (form == "colon")
    assured = doc.row("value_third_party_assured")
    assert any("□" in s and "鉴证" in s for s in assured["strings"])


# ---- a held-out corpus ------------------------------------------------------------------------------------
def test_a_heldout_corpus_has_the_same_facts_printed_other_ways(corpus, build_corpus, tmp_path, truth):
    held = build_corpus(tmp_path / "heldout", "--styles", "heldout")

    def rows(folder, name):
        return [json.loads(x) for x in (folder / name).read_text(encoding="utf-8").splitlines()]

    held_truth = rows(held, "truth.jsonl")
    assert [(r["doc_id"], r["field"], r["value"]) for r in held_truth] == [
        (r["doc_id"], r["field"], r["value"]) for r in truth
    ]
    for folder, family in ((corpus, "dev"), (held, "heldout")):
        for layout in rows(folder, "styles.jsonl"):
            assert layout["family"] == family
            for name, pool in POOLS.items():
                assert layout[name] in pool[family], (name, layout)
    dates = {
        (r["doc_id"], tuple(r["strings"]))
        for t in (truth, held_truth)
        for r in t
        if r["field"] == "value_record_date"
    }
    assert len(dates) == 2 * len({d for d, _ in dates})  # every notice prints its record date another way
