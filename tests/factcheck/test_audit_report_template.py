"""The audit report's markup is a Jinja2 template (programs/templates/audit_report.html.j2) with autoescape on.

tests/factcheck/data/string_built_report.html is the report the string-built renderer wrote for
the inputs below (page images replaced by "PNG"): the template's report reads the same to a browser (tags,
attributes, text; entities decoded, whitespace between tags aside).
"""

from __future__ import annotations

import re
import tomllib
from fnmatch import fnmatch
from html.parser import HTMLParser
from pathlib import Path

import pytest
from reportlab.lib.pagesizes import letter
from reportlab.pdfgen import canvas

from programs.audit_report import render_report

ROOT = Path(__file__).resolve().parents[2]
BEFORE = Path(__file__).with_name("data") / "string_built_report.html"
SCRIPT = "<script>alert(1)</script>"


class _Events(HTMLParser):
    """What a browser builds from a document: tags with their attributes and the text between them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.events: list[tuple] = []
        self.pre = 0

    def handle_starttag(self, tag, attrs):
        self.pre += tag == "pre"
        self.events.append(("start", tag, tuple(attrs)))

    def handle_endtag(self, tag):
        self.pre -= tag == "pre"
        self.events.append(("end", tag))

    def handle_data(self, data):
        if self.pre or data.strip():  # whitespace between tags is not rendered (inside <pre> it is)
            if self.events and self.events[-1][0] == "data":
                self.events[-1] = ("data", self.events[-1][1] + data)
            else:
                self.events.append(("data", data))

    def handle_decl(self, decl):
        self.events.append(("decl", decl.lower()))


def _read(html: str) -> list[tuple]:
    parsed = _Events()
    parsed.feed(re.sub(r"base64,[^\"]*", "base64,PNG", html))
    return parsed.events


def _pdf(path: Path) -> Path:
    sheet = canvas.Canvas(str(path), pagesize=letter)
    sheet.drawString(72, 720, "ACME Corporation Annual Report 2022")
    sheet.drawString(72, 700, "Net income was 1,234,567 thousand in fiscal 2022.")
    sheet.showPage()
    sheet.drawString(72, 720, "Revenue    2022    5,432,100")
    sheet.drawString(72, 700, "Total assets were 9,876,543 <dollars> & \"more\" 'quoted'.")
    sheet.showPage()
    sheet.save()
    return path


FACTS = [
    {"doc_id": "acme", "field": "net_income", "value": 1234567.0, "unit": "thousand USD",
     "quote": "Net income was 1,234,567 thousand in fiscal 2022.", "page": 1,
     "verdict": {"status": "verified", "page": 1, "reason": ""}, "scale": 1000.0,
     "scale_source": "'in thousands' on page 1"},
    {"doc_id": "acme", "field": "revenue", "value": "5432100", "unit": None,
     "quote": "Revenue | 2022 | 5,432,100", "page": 1,
     "verdict": {"status": "page_corrected", "page": 2, "reason": "found on page 2, not 1"}},
    {"doc_id": "acme", "field": "total_assets", "value": 9876543, "unit": "USD",
     "quote": "Total assets were 9,876,543 <dollars> & \"more\" 'quoted'.", "page": 2, "verdict": "verified",
     "scale_source": "no scale printed"},
    {"doc_id": "acme", "field": "equity", "value": "1,111", "unit": None, "quote": "equity 1,111", "page": 7},
    {"doc_id": "beta<x>", "field": "net_income", "value": 55783534981.8, "unit": "CNY",
     "quote": "净利润 55,783,534,981.80", "page": 3, "verdict": {"status": "value_not_in_quote", "page": 3,
     "reason": "the value <b>is not</b> in the quote"}},
    {"doc_id": "beta<x>", "field": "employees", "value": None, "unit": None, "quote": "", "page": None},
]  # fmt: skip
RECORDS = [
    {"id": "acme", "company": "ACME & Sons", "symbol": "ACM", "year": 2022, "net_income": 1234567.0,
     "revenue": "5432100", "total_assets": 9876543, "equity": "1,111", "flag": True},
    {"id": "beta<x>", "symbol": "600000", "year": 2021, "net_income": 55783534981.8, "employees": None,
     "note": SCRIPT},
]  # fmt: skip
MISMATCH = [
    {"field": "net_income", "ratio": 1000.4, "side": "above", "others": "values", "doc_ids": ["beta<x>"]}
]


def test_the_template_s_report_reads_as_the_string_built_one_did(tmp_path):
    """Every badge, a table line's quote, a missing PDF, a page outside the document, a scale line, a unit
    mismatch and markup characters in every kind of value."""
    path = render_report(
        tmp_path / "audit.html",
        "What was ACME's net income & revenue in 2022?",
        "Net income <b>1.23 bn</b>",
        code="result = df['net_income'].sum()\nif a > b < c: pass",
        code_output="1234567\n<none>",
        records=RECORDS,
        facts=FACTS,
        pdf_lookup={"acme": _pdf(tmp_path / "acme.pdf")},
        coverage="based on 2 of 2 documents",
        title="ACME <audit>",
        unit_mismatches=MISMATCH,
    )
    now, before = _read(path.read_text(encoding="utf-8")), _read(BEFORE.read_text(encoding="utf-8"))
    assert len(now) == len(before) and now == before
    assert sum(e[0] == "start" and dict(e[2]).get("class") == "hl" for e in now) >= 3  # quotes boxed


@pytest.mark.parametrize(
    "where", ["question", "answer", "code", "record", "quote", "doc_id", "reason", "title"]
)
def test_a_value_holding_markup_is_text_never_markup(tmp_path, where):
    fact = {"doc_id": "d", "field": "net_income", "value": 5, "unit": None, "quote": "net income 5", "page": 1,
            "verdict": {"status": "verified", "page": 1, "reason": ""}}  # fmt: skip
    if where in ("quote", "doc_id"):
        fact[where] = SCRIPT
    if where == "reason":
        fact["verdict"]["reason"] = SCRIPT
    record = {"id": fact["doc_id"], "net_income": 5, **({"note": SCRIPT} if where == "record" else {})}
    text = {k: SCRIPT if where == k else "x" for k in ("question", "answer", "code", "title")}
    html = render_report(
        tmp_path / "audit.html",
        text["question"],
        text["answer"],
        code=text["code"],
        records=[record],
        facts=[fact],
        title=text["title"],
    ).read_text(encoding="utf-8")
    assert "<script" not in html.lower() and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert any(SCRIPT in str(event) for event in _read(html))  # shown, as text


def test_the_templates_are_package_data():
    """A wheel (a fresh install, not this checkout) carries every template the renderer loads."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    for template in (ROOT / "programs" / "templates").iterdir():
        relative = template.relative_to(ROOT / "programs").as_posix()
        assert any(fnmatch(relative, p) for p in patterns.get("programs", [])), relative
