"""truth.jsonl tells the truth: every string is on its page, states its value, and every field is covered."""

from __future__ import annotations

import json
import re
from collections import Counter

import pypdfium2 as pdfium

from data.synth.fields import COMPONENT_FIELDS, FIELDS, US


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _page_texts(path) -> list[str]:
    pdf = pdfium.PdfDocument(str(path))
    try:
        return [_squash(pdf[i].get_textpage().get_text_range()) for i in range(len(pdf))]
    finally:
        pdf.close()


def test_every_truth_string_is_on_its_page(corpus, truth):
    texts: dict[str, list[str]] = {}
    checked, missing = 0, []
    for row in truth:
        if not row["strings"]:
            continue
        pages = texts.setdefault(row["doc_id"], _page_texts(corpus / "pdf" / f"{row['doc_id']}.pdf"))
        for s in row["strings"]:
            checked += 1
            if _squash(s) not in pages[row["page"] - 1]:
                missing.append((row["doc_id"], row["field"], s, row["page"]))
    assert checked > 200
    assert not missing, missing[:5]


def test_catalog_pages_match_the_pdfs_and_the_page_knob(corpus, catalog):
    for doc in catalog:
        pdf = pdfium.PdfDocument(str(corpus / "pdf" / f"{doc['id']}.pdf"))
        assert len(pdf) == doc["pages"]
        assert doc["pages"] >= 4  # --pages 4: filler tops every document up to the target
        pdf.close()


def test_every_document_has_a_row_for_every_field_of_its_doctype(catalog, truth):
    fields = Counter()
    for row in truth:
        fields[(row["doc_id"], row["field"])] += 1
    assert max(fields.values()) == 1
    for doc in catalog:
        expected = set(FIELDS[doc["doctype"]]) | (set(COMPONENT_FIELDS) if doc["doctype"] == US else set())
        assert {f for d, f in fields if d == doc["id"]} == expected


def test_stated_values_have_strings_and_missing_ones_have_none(truth):
    for row in truth:
        value = row["value"]
        if value is None:
            assert row["strings"] == [] and row["page"] is None
        elif (
            isinstance(value, (int, float, str, list))
            and not isinstance(value, bool)
            and value not in (0, [])
        ):
            assert row["strings"], row  # every number, name, date and list is written somewhere
            assert row["page"] >= 1


def _number(text: str) -> float:
    return float(re.sub(r"[^0-9.]", "", text))


def test_strings_state_the_value_in_the_filing_units(truth):
    """Parse the cited strings back and compare with the canonical value (units as the filings write them)."""
    checked = Counter()
    for row in truth:
        field, value, strings = row["field"], row["value"], row["strings"]
        if not strings or value is None:
            continue
        s = strings[0]
        if field.endswith("_pct"):
            assert _number(s) == value, row
        elif field in ("value_total_operating_cost_cny", "value_net_profit_cny"):
            assert abs(float(s.replace(",", "")) - value) < 0.005, row  # 元 with cents
        elif field == "value_social_donation_10k_cny":
            assert _number(s) == value, row  # 万元
        elif field == "value_pre_tax_dividend_per_share_cny":
            assert abs(float(re.search(r"每10股派发现金红利([0-9.]+)元", s).group(1)) / 10 - value) < 1e-9, (
                row
            )
        elif field in ("value_record_date", "value_ex_dividend_date"):
            y, m, d = (int(x) for x in re.findall(r"\d+", s))
            assert f"{y:04d}-{m:02d}-{d:02d}" == value, row
        elif field.endswith("_usd"):
            units = float(s.strip("()").replace(",", ""))
            assert value in (units * 1000, units * 1e6, -units * 1000, -units * 1e6), row
        else:
            continue
        checked[field] += 1
    assert len(checked) >= 10, checked


def test_layouts_vary_fonts_and_table_order(corpus, catalog):
    fonts = Counter()
    by_column = 0
    for doc in catalog:
        raw = (corpus / "pdf" / f"{doc['id']}.pdf").read_bytes()
        if doc["language"] == "zh":
            fonts["ttf"] += b"WenQuanYi" in raw
            fonts["cid"] += b"STSong-Light" in raw
        # A table drawn column by column extracts as its row labels back to back, numbers after.
        text = "".join(_page_texts(corpus / "pdf" / f"{doc['id']}.pdf"))
        by_column += (
            "一、营业总收入二、营业总成本" in text
            or "CashandcashequivalentsAccountsreceivable" in text
            or "股东名称" in text
            and re.search(r"股东名称持股比例\(%\)持股总数", text) is None
        )
    assert fonts["ttf"] and fonts["cid"], fonts
    assert by_column >= 1


def test_without_the_truetype_font_everything_uses_the_builtin_cid_font(tmp_path, monkeypatch):
    from data.synth import generate, render

    monkeypatch.setattr(render, "CJK_TTF", str(tmp_path / "no-such-font.ttc"))
    monkeypatch.setattr(render, "_registered", set())
    generate(tmp_path / "c", companies=2, years=[2021], seed=3, pages=3)
    pdfs = sorted((tmp_path / "c" / "pdf").glob("*.pdf"))
    assert len(pdfs) == 5
    assert not any(b"WenQuanYi" in p.read_bytes() for p in pdfs)
    assert sum(b"STSong-Light" in p.read_bytes() for p in pdfs) == 4
    rows = [json.loads(x) for x in (tmp_path / "c" / "truth.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        if row["strings"]:
            page = _page_texts(tmp_path / "c" / "pdf" / f"{row['doc_id']}.pdf")[row["page"] - 1]
            assert all(_squash(s) in page for s in row["strings"])
