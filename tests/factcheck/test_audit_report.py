"""The audit report: one offline HTML file; in headless Chromium the answer and the highlighted quotes show.

Facts come from a synthetic filing (the quote is the line that prints the truth value, checked by
factcheck.check), plus one fabricated value and one wrong page so every badge kind appears.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from factcheck.check import check_fact
from programs.audit_report import as_printed, render_report, table_cells, token_spans
from tests.factcheck.conftest import load_bench

QUESTION = "资本充足率和净利润是多少？"
ANSWER = "资本充足率为13.96%，净利润为135,362,304,525.01元。"


def _annual_report(synth_corpus, synth_pages) -> str:
    bench = load_bench()
    rows = bench.printed_rows(synth_corpus)
    return next(r["doc_id"] for r in rows if r["field"] == "value_capital_adequacy_ratio_pct")


@pytest.fixture(scope="module")
def report(synth_corpus, synth_pages, tmp_path_factory) -> dict:
    bench = load_bench()
    doc_id = _annual_report(synth_corpus, synth_pages)
    pages = synth_pages[doc_id]
    facts = []
    for row in bench.printed_rows(synth_corpus):
        if row["doc_id"] != doc_id or isinstance(row["value"], list):
            continue
        line, _ = bench.quote_line(pages[row["page"]], row["strings"][0])
        facts.append(
            {
                "doc_id": doc_id,
                "field": row["field"],
                "value": row["strings"][0],
                "unit": None,
                "quote": line,
                "page": row["page"],
            }
        )
    facts[1]["value"] = "1,234,567.89"  # fabricated: not in its quote
    facts[2]["page"] = facts[2]["page"] - 1  # right value, wrong page
    for fact in facts:
        fact["verdict"] = check_fact(
            fact["value"], fact["unit"], fact["quote"], fact["page"], pages
        ).to_dict()
    record = {"id": doc_id, "symbol": "601536", "year": 2022, **{f["field"]: f["value"] for f in facts}}
    path = tmp_path_factory.mktemp("report") / "audit.html"
    render_report(
        path,
        QUESTION,
        ANSWER,
        code="result = df['value_capital_adequacy_ratio_pct'].max()",
        code_output="13.96",
        records=[record],
        facts=facts,
        pdf_lookup=lambda d: synth_corpus / "pdf" / f"{d}.pdf",
        coverage="基于 1 份文件中的 1 份",
    )
    return {"path": path, "facts": facts, "doc_id": doc_id}


class _Dom(HTMLParser):
    """Element ids, the text inside them, highlight boxes and links, from a (browser-dumped) document."""

    def __init__(self):
        super().__init__()
        self.text_by_id: dict[str, str] = {}
        self.open: list[str | None] = []
        self.highlights: list[dict] = []
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.marks: list[str] = []
        self._in_mark = False

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
            self.text_by_id.setdefault(attrs["id"], "")
        if "hl" in (attrs.get("class") or "").split():
            self.highlights.append(attrs)
        if tag == "a" and (attrs.get("href") or "").startswith("#"):
            self.links.append(attrs["href"][1:])
        if tag == "mark":
            self._in_mark = True
            self.marks.append("")
        if tag not in ("img", "meta", "br"):
            self.open.append(attrs.get("id"))

    def handle_endtag(self, tag):
        if tag == "mark":
            self._in_mark = False
        if tag not in ("img", "meta", "br") and self.open:
            self.open.pop()

    def handle_data(self, data):
        for element in self.open:
            if element:
                self.text_by_id[element] += data
        if self._in_mark:
            self.marks[-1] += data


def _parse(html: str) -> _Dom:
    dom = _Dom()
    dom.feed(html)
    return dom


def test_report_is_one_offline_file_with_every_part(report):
    html = Path(report["path"]).read_text(encoding="utf-8")
    assert not re.search(r"""(src|href)=["'](https?:|//|file:)""", html)  # nothing loaded from elsewhere
    assert "<script" not in html
    dom = _parse(html)
    assert dom.text_by_id["question"] == QUESTION and dom.text_by_id["answer"] == ANSWER
    assert "df['value_capital_adequacy_ratio_pct']" in dom.text_by_id["code"]
    assert dom.text_by_id["code-output"] == "13.96"
    facts = report["facts"]
    assert (
        set(dom.links) == {f"q-{i}" for i in range(1, len(facts) + 1)} <= dom.ids
    )  # every value links to its quote
    assert html.count("data:image/png;base64,") == len(facts)
    assert dom.marks == [f["quote"] for f in facts]
    boxed = {h["data-quote"] for h in dom.highlights}
    assert boxed == {f["quote"] for f in facts}  # every quote is boxed on its page
    statuses = [f["verdict"]["status"] for f in facts]
    assert {"verified", "value_not_in_quote", "page_corrected"} <= set(statuses)
    assert all(f'class="badge {s}"' in html for s in statuses)


@pytest.fixture(scope="module")
def chromium() -> str:
    """The Debian chromium binary; installed here when missing and possible (root with apt-get), else skip."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None and shutil.which("apt-get") and os.geteuid() == 0:
        try:
            subprocess.run(
                ["apt-get", "install", "-y", "-qq", "chromium"], capture_output=True, timeout=900, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            pass
        found = shutil.which("chromium")
    if found is None:
        pytest.skip("no chromium (apt-get install -y chromium) to open the report in")
    return found


def _headless(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    command = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        f"--user-data-dir={profile}",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.slow
def test_report_renders_in_headless_chromium(report, chromium, tmp_path):
    url = Path(report["path"]).resolve().as_uri()
    shot = tmp_path / "report.png"
    done = _headless(chromium, tmp_path / "profile", "--window-size=1200,2400", f"--screenshot={shot}", url)
    if not shot.is_file():
        pytest.skip(f"chromium cannot run here: {done.stderr.strip().splitlines()[-1:]}")
    dumped = _headless(chromium, tmp_path / "profile", "--dump-dom", url)
    assert dumped.returncode == 0, dumped.stderr[-500:]
    dom = _parse(dumped.stdout)
    assert dom.text_by_id["answer"] == ANSWER
    first = report["facts"][0]
    assert first["quote"] in dom.marks
    assert any(h["data-quote"] == first["quote"] for h in dom.highlights)
    # The boxes show: the page images are grey, so orange pixels come from the highlight outlines alone.
    image = Image.open(shot).convert("RGB")
    orange = sum(1 for r, g, b in image.getdata() if r > 200 and 120 < g < 185 and b < 90)
    assert image.size == (1200, 2400) and orange > 100, orange


def test_headers_name_the_company_and_values_read_as_printed(synth_corpus, synth_pages, tmp_path):
    """Not the document's UUID and not 496571000.0: the company as its cover prints it, its symbol and
    year, and numbers with their thousands separators."""
    rows = [json.loads(x) for x in (synth_corpus / "catalog.jsonl").read_text(encoding="utf-8").splitlines()]
    filing = rows[0]
    fact = {
        "doc_id": filing["id"],
        "field": "total_assets",
        "value": "496571000.0",
        "quote": "x",
        "page": 1,
        "verdict": {"status": "verified", "page": 1, "reason": ""},
    }
    record = {"id": filing["id"], "symbol": filing["symbol"], "year": 2022, "total_assets": 496571000.0}
    path = render_report(
        tmp_path / "a.html",
        "Total assets?",
        "496,571,000",
        records=[record],
        facts=[fact],
        pdf_lookup=lambda d: synth_corpus / "pdf" / f"{d}.pdf",
    )
    html = path.read_text(encoding="utf-8")
    header = re.search(r"<h3 title=[^>]*>(.*?)<span", html).group(1)
    assert header.startswith(f"{filing['company']} ({filing['symbol']}, 2022) · total_assets = 496,571,000")
    assert filing["id"] not in header  # the id stays in the header's title attribute only
    assert "496571000" not in html and ">2022<" in html  # the year is not written 2,022


def test_values_as_printed():
    values = (496571000.0, "496571000.0", 15.88, "15.880", 7, "abc", None, 55783534981.8)
    assert [as_printed(v) for v in values] == [
        "496,571,000",
        "496,571,000",
        "15.88",
        "15.88",
        "7",
        "abc",
        "",
        "55,783,534,981.8",
    ]


def test_a_number_is_boxed_only_where_it_stands_whole():
    text = "Total assets 323,916 and goodwill 3,916; 3,916,000 shares; 13,916."
    assert token_spans("3,916", text) == [(34, 39)]
    assert token_spans("3,916", "323,916 3,916,000") == []
    assert token_spans("Note 3", "Note 31 and Note 3.") == [(12, 18)]


def test_a_table_line_s_cells_are_boxed_where_they_stand_together():
    # as pdfium gives a synthetic annual report's income statement: the prose, then column by column
    prose = (
        "债表，2021年度的合并利润表。我们认为，后附的财务报表在所有重大方面按照企业会计准则的规定编制。\r\n"
    )
    labels = (
        "合并利润表（单位：人民币元）\r\n项目\r\n一、营业总收入\r\n二、营业总成本\r\n" + "其他项目\r\n" * 30
    )
    column = "2021年度\r\n9,646,362,076.85\r\n6,596,884,403.29\r\n"
    text = prose + labels + column
    cells = table_cells("2021年度 | 二、营业总成本 | 6,596,884,403.29", text)
    assert [text[a:b] for a, b in cells] == ["2021年度", "二、营业总成本", "6,596,884,403.29"]
    assert cells[0][0] > len(prose)  # the column's header, not the year in the prose above


def test_a_record_read_in_other_units_is_marked_in_the_records_table(tmp_path):
    from programs.audit_report import write_program_report
    from programs.stages.coverage import unit_mismatches

    records = [
        {"id": "d1", "symbol": "DUNM", "year": 2021, "doctype": "US", "total_assets": 496571000.0},
        {"id": "d2", "symbol": "FARR", "year": 2021, "doctype": "US", "total_assets": 667444000.0},
        {"id": "d3", "symbol": "GLEN", "year": 2021, "doctype": "US", "total_assets": 923928.0},
    ]
    outputs = {
        "answer": "FARR",
        "records": records,
        "coverage": {"unit_mismatches": unit_mismatches(records)},
    }
    html = write_program_report(tmp_path / "a.html", "Total assets?", outputs, None).read_text(
        encoding="utf-8"
    )
    (row,) = [r for r in html.split("<tr>") if "GLEN" in r]
    assert 'class="badge unit_mismatch"' in row and "below the other 2" in row
    assert html.count('unit_mismatch"') == 1  # only that cell


def test_the_box_sits_on_the_quoted_line_of_a_cropped_page(synth_corpus, synth_pages):
    # Verizon's 2022 10-K crops 9 pt off every side of its pages: the image shows the crop box, so the
    # boxes must be measured from its corner, not from the page's height (they sat a row too high)
    import pypdfium2 as pdfium

    from programs.audit_report import RENDER_SCALE, quote_boxes

    bench = load_bench()
    row = next(
        r
        for r in bench.printed_rows(synth_corpus)
        if r["doc_id"] == _annual_report(synth_corpus, synth_pages)
    )
    line, _ = bench.quote_line(synth_pages[row["doc_id"]][row["page"]], row["strings"][0])
    pdf = pdfium.PdfDocument(str(synth_corpus / "pdf" / f"{row['doc_id']}.pdf"))
    page = pdf[row["page"] - 1]
    before = quote_boxes(page, line)
    left, bottom, right, top = page.get_mediabox()
    page.set_cropbox(left + 9, bottom + 9, right - 9, top - 9)
    after = quote_boxes(page, line)
    shift = 9 * RENDER_SCALE
    assert before and len(after) == len(before)
    for (x0, y0, w0, h0), (x1, y1, w1, h1) in zip(before, after, strict=True):
        assert abs(x1 - (x0 - shift)) < 0.01 and abs(y1 - (y0 - shift)) < 0.01 and (w0, h0) == (w1, h1)
    page.close()
    pdf.close()


def test_each_amount_says_its_scale_and_where_it_was_read(tmp_path):
    facts = [
        {
            "doc_id": "P",
            "field": "revenue",
            "value": "86,392",
            "quote": "Net Revenue $ 86,392",
            "page": 62,
            "scale": 1e6,
            "scale_source": 'page 62: "(in millions except per share amounts)"',
        },
        {
            "doc_id": "P",
            "field": "assets",
            "value": "92,187",
            "quote": "Total Assets $ 92,187",
            "page": 66,
            "scale": None,
            "scale_source": "unread: no scale is stated above the quote on page 66",
        },
    ]
    html = render_report(tmp_path / "r.html", "q", "a", facts=facts).read_text(encoding="utf-8")
    assert 'scale x1,000,000: page 62: "(in millions except per share amounts)"' in html.replace(
        "&#34;",
        '"',  # Jinja2's (markupsafe's) spelling of an escaped quote
    )
    assert "scale: unread: no scale is stated above the quote on page 66" in html


def test_page_images_are_sixteen_even_grays_white_and_black_kept():
    """The page image's grays are a fixed table (fast, and the same for every page), not a per-page palette."""
    from programs.audit_report import GRAYS, in_grays

    ramp = Image.frombytes("L", (256, 1), bytes(range(256)))
    image = in_grays(ramp)
    assert image.mode == "P"
    used = sorted(set(image.tobytes()))
    assert len(used) == GRAYS
    grays = [image.getpalette()[3 * i] for i in used]
    assert grays[0] == 0 and grays[-1] == 255  # black ink and the white page as printed
    assert grays == sorted(grays) and len(set(grays)) == GRAYS
    assert list(image.tobytes()) == sorted(image.tobytes())  # darker stays darker
