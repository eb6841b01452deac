"""Small PDFs written with reportlab, one per parsing case the retrievers must handle."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

CJK_FONT = "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc"


def _canvas(path: Path, **kwargs):
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    return canvas.Canvas(str(path), pagesize=A4, **kwargs)


def _cjk_font() -> str:
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    if "WQY" not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont("WQY", CJK_FONT, subfontIndex=0))
    return "WQY"


def write_cjk_report(path: Path) -> Path:
    """Two pages of a Chinese annual report: headed sections, prose, and a ruled table."""
    font = _cjk_font()
    c = _canvas(path)
    c.setFont(font, 14)
    c.drawString(72, 780, "第三节 管理层讨论与分析")
    c.setFont(font, 10)
    c.drawString(72, 750, "报告期内，本行营业收入稳步增长，资产质量保持稳定。")
    c.drawString(72, 735, "本行坚持稳健经营，持续优化资产负债结构。")
    # A ruled table: header row, two data rows, grid lines.
    xs, ys = [72, 252, 362, 472], [700, 680, 660, 640]
    for x in xs:
        c.line(x, ys[0], x, ys[-1])
    for y in ys:
        c.line(xs[0], y, xs[-1], y)
    rows = [
        ["项目", "2022年", "2021年"],
        ["资本充足率", "15.44%", "14.12%"],
        ["不良贷款率", "1.02%", "1.10%"],
    ]
    for r, row in enumerate(rows):
        for col, cell in enumerate(row):
            c.drawString(xs[col] + 4, ys[r] - 14, cell)
    c.showPage()
    c.setFont(font, 14)
    c.drawString(72, 780, "第四节 公司治理")
    c.setFont(font, 10)
    c.drawString(72, 750, "本公司聘任的会计师事务所为毕马威华振会计师事务所。")
    c.save()
    return path


def write_column_table(path: Path) -> Path:
    """An English page whose table is drawn column by column (no ruling), as some generators do."""
    c = _canvas(path)
    c.setFont("Helvetica-Bold", 14)
    c.drawString(72, 780, "Item 8. Financial Statements")
    c.setFont("Helvetica", 10)
    labels = ["Total assets", "Total liabilities", "Net income"]
    values = ["$ 1,234,567", "$ 765,432", "$ 98,765"]
    for i, label in enumerate(labels):  # first the whole label column...
        c.drawString(72, 740 - 16 * i, label)
    for i, value in enumerate(values):  # ...then the whole value column
        c.drawString(300, 740 - 16 * i, value)
    c.save()
    return path


def write_encrypted(path: Path) -> Path:
    from reportlab.lib import pdfencrypt

    c = _canvas(path, encrypt=pdfencrypt.StandardEncryption("secret", ownerPassword="owner"))
    c.drawString(72, 780, "Secret text")
    c.save()
    return path


def write_corrupt(path: Path) -> Path:
    path.write_bytes(b"%PDF-1.4\nthis is not a pdf body at all\n%%EOF\n")
    return path


def write_blank(path: Path) -> Path:
    """A valid PDF whose only page has nothing on it."""
    c = _canvas(path)
    c.showPage()
    c.save()
    return path


def write_scanned(path: Path) -> Path:
    """A page that is only an image (a scan): no text layer."""
    from PIL import Image

    image_path = path.with_suffix(".png")
    Image.new("RGB", (200, 100), (200, 200, 200)).save(image_path)
    c = _canvas(path)
    c.drawImage(str(image_path), 72, 600, width=400, height=200)
    c.save()
    return path


@pytest.fixture
def writers() -> SimpleNamespace:
    """The PDF writers above, for tests (importlib mode cannot import conftest directly)."""
    return SimpleNamespace(
        cjk=write_cjk_report,
        column=write_column_table,
        encrypted=write_encrypted,
        corrupt=write_corrupt,
        blank=write_blank,
        scanned=write_scanned,
    )


@pytest.fixture
def cjk_pdf(tmp_path) -> Path:
    return write_cjk_report(tmp_path / "cjk.pdf")


@pytest.fixture
def column_pdf(tmp_path) -> Path:
    return write_column_table(tmp_path / "column.pdf")


@pytest.fixture
def tiny_collection(tmp_path) -> dict:
    """A catalog + pdf folder with two good documents and every kind of bad one."""
    pdf_dir = tmp_path / "pdf"
    pdf_dir.mkdir()
    write_cjk_report(pdf_dir / "zh1.pdf")
    write_column_table(pdf_dir / "en1.pdf")
    write_encrypted(pdf_dir / "enc.pdf")
    write_corrupt(pdf_dir / "bad.pdf")
    write_blank(pdf_dir / "blank.pdf")
    write_scanned(pdf_dir / "scan.pdf")
    rows = [
        {"id": "zh1", "symbol": "600000", "year": 2022, "doctype": "A股年报", "language": "zh"},
        {"id": "en1", "symbol": "AAPL", "year": 2022, "doctype": "US Stock Annual Report", "language": "en"},
        {"id": "enc", "symbol": "600001", "year": 2022, "doctype": "A股年报", "language": "zh"},
        {"id": "bad", "symbol": "600002", "year": 2021, "doctype": "A股年报", "language": "zh"},
        {"id": "blank", "symbol": "600003", "year": 2021, "doctype": "A股ESG报告", "language": "zh"},
        {"id": "scan", "symbol": "600004", "year": 2021, "doctype": "A股ESG报告", "language": "zh"},
        {"id": "missing", "symbol": "600005", "year": 2023, "doctype": "A股年报", "language": "zh"},
    ]
    catalog = tmp_path / "catalog.jsonl"
    catalog.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return {"catalog": catalog, "pdf_dir": pdf_dir, "index": tmp_path / "index", "rows": rows}
