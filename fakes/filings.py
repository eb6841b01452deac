"""Tiny PDFs shaped like a filing's first pages (an SEC cover, an earnings release, an A-share title page),
for the tests of the catalog draft: each page is a block of text lines drawn top to bottom."""

from __future__ import annotations

from pathlib import Path

CJK_FONT = "/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc"


def _font(text: str) -> str:
    if not any("\u4e00" <= ch <= "\u9fff" for ch in text):
        return "Helvetica"
    from reportlab.pdfbase import pdfmetrics

    if "CatalogCJK" not in pdfmetrics.getRegisteredFontNames():
        if Path(CJK_FONT).is_file():
            from reportlab.pdfbase.ttfonts import TTFont

            pdfmetrics.registerFont(TTFont("CatalogCJK", CJK_FONT, subfontIndex=0))
        else:  # reportlab's built-in CID font: no file needed, and pdfium reads its text too
            from reportlab.pdfbase.cidfonts import UnicodeCIDFont

            pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
            return "STSong-Light"
    return "CatalogCJK"


def write_filing(path: Path, pages: list[str], password: str | None = None) -> Path:
    """One page per string, one text line per line of it; `password` encrypts the file (pdfium then asks for it)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A4, encrypt=password)
    for page in pages:
        font = _font(page)
        y = 800
        for line in page.strip("\n").splitlines():
            c.setFont(font, 9)
            c.drawString(40, y, line)
            y -= 13
        c.showPage()
    c.save()
    return path


SEC_10K_COVER = """UNITED STATES
SECURITIES AND EXCHANGE COMMISSION
Washington, D.C. 20549
FORM 10-K
ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) OF THE SECURITIES EXCHANGE ACT OF 1934
For the fiscal year ended December 31, 2022
Commission File Number 001-12345
Acme Widgets, Inc.
(Exact name of registrant as specified in its charter)
Securities registered pursuant to Section 12(b) of the Act:
Title of each class Trading Symbol(s) Name of each exchange on which registered
Common Stock, $0.01 par value per share ACMW The Nasdaq Stock Market LLC
4.25% Notes due 2030 ACMW30 New York Stock Exchange
Securities registered pursuant to Section 12(g) of the Act: None
Indicate by check mark if the registrant is a well-known seasoned issuer. Yes No
"""

A_SHARE_ANNUAL_COVER = """璟丰商行 2021年年度报告 证券代码：000803
杭州璟丰商业银行股份有限公司
2021年年度报告
股票代码：000803 股票简称：璟丰商行
2022年3月
"""
