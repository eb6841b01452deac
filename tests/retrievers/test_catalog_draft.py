"""The catalog draft: a filing's symbol, year, doctype and company read from its first pages by rules."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from fakes.filings import A_SHARE_ANNUAL_COVER, SEC_10K_COVER, write_filing
from retrievers.catalog import Catalog
from retrievers.catalog_draft.draft import draft_catalog, file_ids, unsettled_path, why_unsettled, write_draft
from retrievers.catalog_draft.rules_en import ANNUAL, CURRENT, EARNINGS, QUARTERLY, read_us_filing
from retrievers.catalog_draft.rules_zh import ANNUAL as A_ANNUAL
from retrievers.catalog_draft.rules_zh import DIVIDEND, ESG, HALF_YEAR, MEETING, read_a_share

REPO = Path(__file__).resolve().parents[2]


def _values(found: dict) -> dict:
    return {name: f.value for name, f in found.items()}


# ---- US rules ------------------------------------------------------------------------------------------
def test_sec_cover_gives_form_fiscal_year_registrant_and_the_common_stock_symbol():
    found = read_us_filing(SEC_10K_COVER)
    assert _values(found) == {
        "doctype": ANNUAL,
        "year": 2022,
        "symbol": "ACMW",
        "company": "Acme Widgets, Inc.",
    }
    assert all(f.sure for f in found.values())


def test_quarterly_cover_laid_out_in_two_columns_still_gives_its_period_year():
    text = (
        "FORM 10-Q\nQuarterly report pursuant to Section 13 or 15(d)\nFor the quarterly period ended Commission file\n"
        "March 31, 2021 number 1-5805\nBig Bank & Co.\n(Exact name of registrant as specified in its charter)\n"
        "Title of each class Trading Symbol(s) Name of each exchange on\nwhich registered\n"
        "Depositary Shares, each representing a share of 6.10% BB PR G The New York Stock Exchange\n"
        "Common stock BB The New York Stock Exchange\n"
        "read with our Annual Report on Form 10-K for the year ended December 31, 2020\n"
    )
    assert _values(read_us_filing(text)) == {
        "doctype": QUARTERLY,
        "year": 2021,
        "symbol": "BB",  # the common stock's, not the preferred shares' listed first
        "company": "Big Bank & Co.",
    }


def test_current_report_year_is_its_date_of_report():
    text = (
        "FORM 8-K\nCURRENT REPORT\nPursuant to Section 13 or 15(d) of the Securities Exchange Act of 1934\n"
        "Date of Report (Date of earliest event reported): May 3, 2023\nSoda Co.\n(Exact name of registrant as "
        "specified in its charter)\n"
    )
    assert _values(read_us_filing(text))["year"] == 2023
    assert _values(read_us_filing(text))["doctype"] == CURRENT


def test_earnings_release_takes_the_exchange_tag_and_its_fiscal_year_by_its_end_date_not_the_fiscal_label():
    text = (
        "March 9, 2023\nBeauty Shop Announces Fourth Quarter\nFiscal 2022 Results\n"
        "BOLINGBROOK, Ill.--(BUSINESS WIRE)-- Beauty Shop, Inc. (NASDAQ: BSHP) today\n"
        "announced financial results for the thirteen-week period (“fourth quarter”) and fifty-two-week\n"
        "period (“fiscal year”) ended January 28, 2023 compared to the same periods ended January 29, 2022.\n"
    )
    found = read_us_filing(text)
    assert _values(found) == {
        "doctype": EARNINGS,
        "year": 2023,
        "symbol": "BSHP",
        "company": "Beauty Shop, Inc.",
    }
    assert found["year"].rule == "release:fiscal-year-ended"


@pytest.mark.parametrize("name", ["eBay Inc.", "iRobot Corporation", "Acme Widgets, Inc."])
def test_a_company_name_that_starts_in_lower_case_is_kept_whole(name):
    # "eBay Inc." was drafted as "Bay Inc.": the name's words had to start with a capital
    text = f"SAN JOSE, Calif.--(BUSINESS WIRE)-- {name} (NASDAQ: ACMW) today reported results for the quarter ended March 31, 2023.\n"
    assert _values(read_us_filing(text))["company"] == name


@pytest.mark.parametrize(
    "table",
    [
        "Title of each class Trading Symbol(s) Name of each exchange\nCommon Stock ACMW The Nasdaq Stock Market LLC",
        # a ruled table, as retrievers.documents.pdf renders its cells
        "Trading Symbol(s) | 4.25% Notes due 2030 | ACMW30\nTrading Symbol(s) | Common Stock | ACMW",
        # the exchange name wrapped onto the next line
        "Title of each class Trading Symbol(s) Name of each exchange on which registered\nCommon Stock ACMW\n"
        "The Nasdaq Stock Market LLC",
    ],
)
def test_trading_symbol_table_in_its_layouts(table):
    text = f"FORM 10-K\nFor the fiscal year ended 12/31/2022\n{table}\nSecurities registered pursuant to Section 12(g)"
    assert _values(read_us_filing(text)) == {"doctype": ANNUAL, "year": 2022, "symbol": "ACMW"}


def test_a_symbol_is_capitals_even_where_the_label_is_matched_case_blind():
    assert "symbol" not in read_us_filing("FORM 10-K\nTrading symbol: none\n")


def test_a_text_that_is_no_filing_settles_nothing():
    assert read_us_filing("Minutes of the garden club.\nWe planted tulips in spring 2022.") == {}


# ---- A-share rules -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "doctype", "year"),
    [
        (A_SHARE_ANNUAL_COVER, A_ANNUAL, 2021),  # "2022年3月" is the publication date, not the year covered
        ("招商某某银行股份有限公司\n2022年半年度报告\n公司代码:600001 公司简称:某某银行", HALF_YEAR, 2022),
        ("璟丰商行 2021 年度社会责任(ESG)报告 证券代码:000803\n杭州璟丰商业银行股份有限公司", ESG, 2021),
        ("某某银行股份有限公司\n2022年度环境、社会及管治(ESG)报告\nA股代码:601111", ESG, 2022),
        (
            "证券代码:000803 证券简称:璟丰商行 公告编号:2022-006\n杭州璟丰商业银行股份有限公司\n"
            "2021年度利润分配方案公告\n详见本行2021年年度报告。",
            DIVIDEND,
            2021,
        ),
        (
            "证券代码:000803 证券简称:璟丰商行 公告编号:2021-004\n杭州璟丰商业银行股份有限公司\n"
            "2020年年度股东大会决议公告\n(一)股东大会召开的时间:2021年6月22日",
            MEETING,
            2021,  # held in 2021, though it is the meeting of fiscal 2020
        ),
        ("证券代码:000803\n某某银行股份有限公司\n2023年第一次临时股东大会决议公告", MEETING, 2023),
    ],
)
def test_a_share_title_gives_kind_and_the_year_it_covers(text, doctype, year):
    found = _values(read_a_share(text))
    assert (found["doctype"], found["year"]) == (doctype, year)
    assert len(found["symbol"]) == 6 and found["symbol"].isdigit()


def test_letter_spaced_title_reads_as_words_and_a_bond_code_is_no_symbol():
    found = _values(read_a_share("某某银行股份有限公司\n2 0 2 2 年 年 度 报 告\n债券代码:123456"))
    assert (found["doctype"], found["year"]) == (A_ANNUAL, 2022) and "symbol" not in found


def test_meeting_year_is_its_date_and_without_a_date_the_fiscal_year_plus_one_marked_for_a_check():
    title = "证券代码:000803\n某某银行股份有限公司\n2020年年度股东大会决议公告"
    dated = read_a_share(title + "\n股东大会召开的时间:2021年6月22日")["year"]
    assert (dated.value, dated.rule, dated.sure) == (2021, "text:meeting-date", True)
    undated = read_a_share(title)["year"]
    assert (undated.value, undated.sure) == (2021, False)


# ---- files ---------------------------------------------------------------------------------------------
def test_a_folder_of_filings_drafts_a_catalog_that_loads_and_lists_what_it_cannot_settle(tmp_path):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    write_filing(pdfs / "x1.pdf", [SEC_10K_COVER, "PART I\nItem 1. Business"])
    write_filing(pdfs / "x2.pdf", [A_SHARE_ANNUAL_COVER, "第一节 重要提示"])
    write_filing(pdfs / "notes.pdf", ["Minutes of the garden club, spring 2022."])
    (pdfs / "empty.pdf").write_bytes(b"")
    (pdfs / "cut.pdf").write_bytes((pdfs / "x1.pdf").read_bytes()[:300])
    write_filing(pdfs / "locked.pdf", [SEC_10K_COVER], password="secret")
    (pdfs / "readme.txt").write_text("not a PDF")

    rows = draft_catalog(pdfs)
    out = tmp_path / "catalog.jsonl"
    listing = write_draft(rows, out)

    catalog = Catalog.load(out)  # what retrievers.building.build --catalog does
    assert sorted(d.id for d in catalog.documents()) == ["x1", "x2"]
    us, zh = catalog.get("x1"), catalog.get("x2")
    assert (us.symbol, us.year, us.doctype, us.language) == ("ACMW", 2022, ANNUAL, "en")
    assert (zh.symbol, zh.year, zh.doctype, zh.language) == ("000803", 2021, A_ANNUAL, "zh")
    written = {
        json.loads(line)["id"]: json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()
    }
    assert (
        written["x1"]["confidence"] == "high" and written["x1"]["source"]["symbol"] == "cover:trading-symbol"
    )
    assert written["x2"]["company"] == "杭州璟丰商业银行股份有限公司"
    assert Path(out.parent / written["x1"]["path"]).resolve() == (pdfs / "x1.pdf").resolve()

    assert listing == unsettled_path(out)
    text = listing.read_text(encoding="utf-8")
    for name, why in [
        ("notes.pdf", "no symbol, no year, no doctype"),
        ("empty.pdf", "0 bytes"),
        ("cut.pdf", "corrupt"),
        ("locked.pdf", "encrypted"),
    ]:
        line = next(x for x in text.splitlines() if x.startswith(name))
        assert why in line, line
    assert '"symbol": "?"' in text and "readme" not in text


def test_a_redraft_with_every_file_settled_removes_the_stale_unsettled_list(tmp_path):
    pdfs = tmp_path / "pdfs"
    pdfs.mkdir()
    write_filing(pdfs / "x1.pdf", [SEC_10K_COVER])
    (pdfs / "empty.pdf").write_bytes(b"")
    out = tmp_path / "catalog.jsonl"
    assert write_draft(draft_catalog(pdfs), out).is_file()
    (pdfs / "empty.pdf").unlink()
    assert write_draft(draft_catalog(pdfs), out) is None
    assert not unsettled_path(out).exists()


def test_file_ids_stay_unique_where_names_differ_only_in_letter_case():
    ids = file_ids([Path("a/Report.pdf"), Path("a/report.PDF"), Path("a/..pdf")])
    assert ids == ["Report", "report-2", "doc"]


def test_symbol_named_only_in_item_5_prose_is_found_and_marked_for_a_check(tmp_path):
    cover = SEC_10K_COVER.split("Securities registered")[0]  # a cover from before 2019: no symbol table
    filler = ["Item 1. Business\nWe make widgets."] * 4
    item5 = "Item 5. Market for Registrant's Common Equity\nOur common stock is traded on the Nasdaq under the symbol “ACMW.”"
    write_filing(tmp_path / "old.pdf", [cover, *filler, item5])
    (row,) = draft_catalog(tmp_path)
    assert row.found["symbol"].value == "ACMW" and row.found["symbol"].rule == "text:under-the-symbol"
    assert row.settled and row.confidence == "medium"


def test_fields_printed_only_after_the_first_pages_are_found_there_and_marked_for_a_check(tmp_path):
    intro = "公司简介\n股票简称 璟丰商行 股票代码 000803"
    write_filing(
        tmp_path / "zh.pdf",
        ["杭州璟丰商业银行股份有限公司\n2021年年度报告", "重要提示", "目录", "释义", intro],
    )
    letter = "Dear shareholders,\nIt was a good year for widgets."
    write_filing(
        tmp_path / "en.pdf", ["", "", "", letter, SEC_10K_COVER]
    )  # blank pages, a letter, then the 10-K
    rows = {r.id: r for r in draft_catalog(tmp_path)}
    assert rows["zh"].found["symbol"] == ("000803", "cover:security-code@later-pages", False)
    assert rows["zh"].confidence == "medium"
    en = {k: f.value for k, f in rows["en"].found.items()}
    assert (en["symbol"], en["year"], en["doctype"]) == ("ACMW", 2022, ANNUAL)
    assert rows["en"].confidence == "medium" and rows["en"].found["language"].value == "en"


# ---- corpora -------------------------------------------------------------------------------------------
def test_synthetic_corpus_drafts_exactly_its_own_catalog(tmp_path):
    from data.synth.corpus import generate

    generate(tmp_path, companies=3, years=[2021, 2022], pages=3)
    truth = [
        json.loads(line) for line in (tmp_path / "catalog.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    drafted = {r.id: r for r in draft_catalog(tmp_path / "pdf")}
    assert len(drafted) == len(truth) and all(r.settled for r in drafted.values())
    for want in truth:
        got = {name: f.value for name, f in drafted[want["id"]].found.items()}
        assert [got[k] for k in ("symbol", "year", "doctype", "language", "company")] == [
            want[k] for k in ("symbol", "year", "doctype", "language", "company")
        ], want["id"]


def _dev() -> Path | None:
    env = os.environ.get("COLLATE_REALDOCS")
    folder = (Path(env) if env else REPO.parent / "shared" / "realdocs") / "financebench-dev"
    return folder if (folder / "catalog.jsonl").is_file() else None


@pytest.mark.skipif(_dev() is None, reason="real filings not present (../shared/realdocs)")
def test_real_filings_under_opaque_names_draft_their_ticker_year_and_form(tmp_path):
    # a pre-2019 10-K (symbol only in Item 5), a 10-Q, an 8-K (symbol table on page 2), an earnings release
    # whose fiscal label (2022) differs from its period-end year (2023, FinanceBench's)
    cases = {
        "ADOBE_2015_10K": ("ADBE", 2015, ANNUAL),
        "JPMORGAN_2022Q2_10Q": ("JPM", 2022, QUARTERLY),
        "PEPSICO_2023_8K_dated-2023-05-05": ("PEP", 2023, CURRENT),
        "ULTABEAUTY_2023Q4_EARNINGS": ("ULTA", 2023, EARNINGS),
    }
    names = {}
    for doc_id in cases:
        opaque = hashlib.sha1(doc_id.encode()).hexdigest()[:16]
        shutil.copyfile(_dev() / "pdf" / f"{doc_id}.pdf", tmp_path / f"{opaque}.pdf")
        names[opaque] = doc_id
    for row in draft_catalog(tmp_path):
        got = tuple(row.found[k].value for k in ("symbol", "year", "doctype"))
        assert got == cases[names[row.id]], names[row.id]


def test_identical_files_names_each_copy_with_the_first_and_leaves_empty_files_alone(tmp_path):
    from retrievers.catalog_draft.duplicates import identical_files

    for name, data in [("a", b"%PDF-1 x"), ("b", b"%PDF-1 y"), ("c", b"%PDF-1 x"), ("d", b"%PDF-1 x")]:
        (tmp_path / f"{name}.pdf").write_bytes(data)
    (tmp_path / "e.pdf").write_bytes(b"")
    (tmp_path / "f.pdf").write_bytes(b"")
    files = sorted(tmp_path.iterdir())
    assert identical_files(files) == {
        tmp_path / "c.pdf": tmp_path / "a.pdf",
        tmp_path / "d.pdf": tmp_path / "a.pdf",
    }


# ---- issue 29: a symbol from the company's other filings, a cover that contradicts its content ---------
_OLD_COVER = SEC_10K_COVER.split("Securities registered")[0].replace("2022", "2015")  # no symbol table


def test_a_symbol_printed_nowhere_in_a_file_comes_from_the_same_company_s_filings_in_the_folder(tmp_path):
    release = (
        "FOR IMMEDIATE RELEASE\nACME WIDGETS REPORTS FIRST QUARTER 2023 RESULTS\n"
        "DENVER - Acme Widgets, Inc. today announced results for the first quarter ended March 31, 2023."
    )
    other = _OLD_COVER.replace("001-12345", "001-99999").replace("Acme Widgets, Inc.", "Other Co.")
    write_filing(tmp_path / "a_new.pdf", [SEC_10K_COVER])
    write_filing(tmp_path / "b_old.pdf", [_OLD_COVER.replace("Commission File Number 001-", "File No. 1-")])
    write_filing(tmp_path / "c_release.pdf", [release])
    write_filing(
        tmp_path / "d_other.pdf", [other]
    )  # another company's 10-K: nothing in the folder says its symbol
    rows = {r.id: r for r in draft_catalog(tmp_path)}
    old, release_row = rows["b_old"].found["symbol"], rows["c_release"].found["symbol"]
    assert (old.value, old.rule, old.sure) == ("ACMW", "folder:same-cover-numbers", False)
    assert (release_row.value, release_row.rule) == ("ACMW", "folder:same-registrant-name")
    assert rows["b_old"].confidence == "medium" and rows["b_old"].found["year"].value == 2015
    assert rows["d_other"].missing() == ["symbol"]


def test_a_key_two_symbols_share_gives_neither(tmp_path):
    twin = SEC_10K_COVER.replace("ACMW The Nasdaq", "ACMX The Nasdaq")  # same file number, another symbol
    write_filing(tmp_path / "a.pdf", [SEC_10K_COVER])
    write_filing(tmp_path / "b.pdf", [twin])
    write_filing(tmp_path / "c.pdf", [_OLD_COVER])
    rows = {r.id: r for r in draft_catalog(tmp_path)}
    assert "symbol" not in rows["c"].found


def test_a_cover_contradicting_its_content_is_left_unsettled_with_both_readings(tmp_path):
    cover = SEC_10K_COVER.replace("FORM 10-K", "FORM 8-K").replace(
        "For the fiscal year ended December 31, 2022",
        "Date of Report (Date of earliest event reported): May 4, 2023",
    )
    exhibit = "Exhibit 99.1\nGlobex Corp. (NYSE: GLBX) today reported results for the first quarter 2023."
    write_filing(tmp_path / "x.pdf", [cover, exhibit])
    (row,) = draft_catalog(tmp_path)
    assert not row.settled and row.missing() == []
    out = tmp_path / "catalog.jsonl"
    write_draft([row], out)
    listing = unsettled_path(out).read_text(encoding="utf-8")
    assert "Acme Widgets, Inc. (ACMW)" in listing and "Globex Corp. (GLBX)" in listing
    assert out.read_text() == ""


def test_a_10q_finds_its_fiscal_year_end_past_its_first_pages(tmp_path):
    cover = (
        "FORM 10-Q\nQUARTERLY REPORT PURSUANT TO SECTION 13 OR 15(d)\nFor the quarterly period ended October 31, 2022\n"
        "Acme Widgets, Inc.\n(Exact name of registrant as specified in its charter)\n"
        "Title of each class Trading Symbol(s) Name of each exchange\nCommon Stock ACMW New York Stock Exchange\n"
    )
    note = (
        "Note 1. Read these with the Annual Report on Form 10-K for the fiscal year ended January 31, 2022."
    )
    write_filing(tmp_path / "q.pdf", [cover, "Item 1.", "Item 2.", "Item 3.", note])
    (row,) = draft_catalog(tmp_path)
    assert row.found["year"].value == 2023 and row.confidence == "medium"
    write_filing(tmp_path / "q.pdf", [cover, "Item 1.", "Item 2.", "Item 3."])  # printed nowhere
    (row,) = draft_catalog(tmp_path)
    assert "year" not in row.found and not row.settled


def _more() -> Path | None:
    env = os.environ.get("COLLATE_REALDOCS")
    folder = (Path(env) if env else REPO.parent / "shared" / "realdocs") / "financebench-more"
    return folder if (folder / "catalog.jsonl").is_file() else None


@pytest.mark.skipif(_more() is None, reason="financebench-more not present (../shared/realdocs)")
def test_filings_no_rule_was_written_on_draft_their_fiscal_year_symbol_and_form(tmp_path):
    # under opaque names: a 10-Q of a year ending in January (fiscal year from its balance sheet), a
    # release labelled "Q1 fiscal 2024", a release with no exchange tag and its company's 10-K, a pre-2019
    # 10-K whose symbol is printed nowhere and one of the same company that prints it, a glossy report, an
    # 8-K dated above its label, a symbol in small capitals
    cases = {
        "SALESFORCE_2023Q3_10Q": ("CRM", 2023, QUARTERLY),
        "SALESFORCE_2024Q1_EARNINGS": ("CRM", 2024, EARNINGS),
        "MCDONALDS_2023Q1_EARNINGS": ("MCD", 2023, EARNINGS),
        "MCDONALDS_2022_10K": ("MCD", 2022, ANNUAL),
        "PG_E_2015_10K": ("PCG", 2015, ANNUAL),
        "PG_E_2022_10K": ("PCG", 2022, ANNUAL),
        "FEDEX_2023_annualreport": ("FDX", 2023, ANNUAL),
        "SALESFORCE_2021_8K_dated-2021-07-21": ("CRM", 2021, CURRENT),
        "ORACLE_2020_10K": ("ORCL", 2020, ANNUAL),
    }
    names = {}
    for doc_id in cases:
        opaque = hashlib.sha1(doc_id.encode()).hexdigest()[:16]
        (tmp_path / f"{opaque}.pdf").symlink_to(_more() / "pdf" / f"{doc_id}.pdf")
        names[opaque] = doc_id
    for row in draft_catalog(tmp_path):
        assert row.settled, (names[row.id], why_unsettled(row))
        got = tuple(row.found[k].value for k in ("symbol", "year", "doctype"))
        assert got == cases[names[row.id]], names[row.id]


def test_a_pdf_without_pages_read_after_an_encrypted_one_is_said_empty_not_encrypted(tmp_path):
    # pdfium leaves its last error unset for a PDF with no pages: it read as the encrypted file's before it
    import pypdfium2 as pdfium

    write_filing(tmp_path / "a-locked.pdf", [SEC_10K_COVER], password="secret")
    blank = pdfium.PdfDocument.new()
    blank.save(str(tmp_path / "b-no-pages.pdf"))
    blank.close()
    locked, no_pages = draft_catalog(tmp_path)
    assert "encrypted" in locked.problem
    assert "no pages" in no_pages.problem and "encrypted" not in no_pages.problem, no_pages.problem


def test_a_release_announced_by_a_company_whose_name_starts_in_lower_case():
    text = "SAN JOSE, Calif., April 26, 2023 - eBay Inc. today reported results for its first quarter ended March 31, 2023.\n"
    assert _values(read_us_filing(text))["company"] == "eBay Inc."
