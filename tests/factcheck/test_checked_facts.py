"""The hand-checked facts of real filings (bench/data/checked_facts.jsonl): every true one verifies, no
corruption of one does (a wrong column, a wrong row, a year as the value, a wrong scale).

Only the cited page and its neighbours are read (pdfium's text layer), so it stays fast; the bench
(python -m bench.fact_check --checked) searches whole documents. Skips where the real filings are absent.
"""

from __future__ import annotations

import pypdfium2 as pdfium
import pytest

from bench.checked_facts import DATA, TRUE_KINDS, load, variants
from factcheck.check import PAGE_CORRECTED, VERIFIED, check_fact
from tests.factcheck.conftest import realdocs

FACTS = load(DATA)


def near_pages(path, page: int) -> dict[int, str]:
    pdf = pdfium.PdfDocument(str(path))
    try:
        texts = {}
        for number in range(max(1, page - 2), min(len(pdf), page + 2) + 1):
            p = pdf[number - 1]
            tp = p.get_textpage()
            texts[number] = tp.get_text_range()
            tp.close()
            p.close()
        return texts
    finally:
        pdf.close()


def test_the_set_is_big_enough():
    assert len(FACTS) >= 40 and len({f["doc_id"] for f in FACTS}) >= 10
    assert {f["set"] for f in FACTS} == {"financebench-dev", "financebench-more"}


@pytest.mark.skipif(realdocs() is None, reason="the real filings (../shared/realdocs) are not here")
def test_true_facts_verify_and_corrupted_ones_do_not():
    root = realdocs().parent
    wrong = []
    for fact in FACTS:
        pages = near_pages(root / fact["set"] / "pdf" / f"{fact['doc_id']}.pdf", fact["page"])
        for v in variants(fact, pages[fact["page"]]):
            verdict = check_fact(
                v["value"],
                v["unit"],
                v["quote"],
                v["page"],
                pages,
                amount=True,
                field=v["field"],
                period=v["period"],
            )
            if (verdict.status in (VERIFIED, PAGE_CORRECTED)) != (v["kind"] in TRUE_KINDS):
                wrong.append((fact["doc_id"], v["kind"], v["value"], verdict.reason))
    assert not wrong, wrong[:5]
