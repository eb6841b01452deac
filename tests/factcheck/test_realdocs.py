"""On real filings (FinanceBench): a question's evidence text, checked as a quote, is on its evidence page
and not on a far page. Skips when the real filings are absent (see tests/factcheck/conftest.realdocs).

The annotators' evidence is a page's text in another tool's reading order with its own line breaks,
often a whole statement (up to 6,000 characters), so this measures the folding and the fuzzy match
on real layouts. The default run reads the short filings; the slow one reads all 22 (3,482 pages).
"""

from __future__ import annotations

import json

import pypdfium2 as pdfium
import pytest

from factcheck.check import PAGE_CORRECTED, check_fact
from factcheck.quotes import FUZZY_THRESHOLD, score
from retrievers.documents.page_text import raw_page_texts
from tests.factcheck.conftest import realdocs

SHORT = 20  # pages: the 8-Ks and earnings releases


def _cases(max_pages: int | None):
    folder = realdocs()
    if folder is None:
        pytest.skip("real filings absent: set COLLATE_REALDOCS or put them in <repo>/../shared/realdocs")
    catalog = {
        d["id"]: d
        for d in (
            json.loads(x) for x in (folder / "catalog.jsonl").read_text(encoding="utf-8").splitlines() if x
        )
    }
    questions = [
        json.loads(x) for x in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines() if x
    ]
    pages_of: dict[str, dict[int, str]] = {}
    cases = []
    for q in questions:
        doc = catalog[q["doc_id"]]
        if max_pages is not None and _page_count(folder / doc["path"]) > max_pages:
            continue
        if q["doc_id"] not in pages_of:
            pages_of[q["doc_id"]] = raw_page_texts(folder / doc["path"])
        pages = pages_of[q["doc_id"]]
        if len(pages) < 2:
            continue
        for text in q["evidence_text"]:
            far = max(pages, key=lambda p, e=q["evidence_pages"]: (min(abs(p - x) for x in e), -p))
            cases.append((q["doc_id"], q["evidence_pages"], text, far, pages))
    return cases


def _page_count(path) -> int:
    pdf = pdfium.PdfDocument(str(path))
    try:
        return len(pdf)
    finally:
        pdf.close()


def _assert_found_on_own_page_only(cases):
    assert cases
    for doc_id, evidence, text, far, pages in cases:
        own = max(score(text, pages[p]) for p in evidence)
        assert own >= FUZZY_THRESHOLD, f"{doc_id} evidence not found on its page(s) {evidence}: {own}"
        assert score(text, pages[far]) < FUZZY_THRESHOLD, f"{doc_id} evidence found on far page {far}"
        # as a fact citing the far page (no value to check: a yes/no), the check moves it back
        verdict = check_fact("yes", None, text, far, pages)
        assert verdict.status == PAGE_CORRECTED and verdict.page in evidence, (doc_id, verdict.reason)


def test_evidence_is_on_its_page_and_not_on_a_far_page_short_filings():
    _assert_found_on_own_page_only(_cases(SHORT))


@pytest.mark.slow
def test_evidence_is_on_its_page_and_not_on_a_far_page_all_filings():
    _assert_found_on_own_page_only(_cases(None))
