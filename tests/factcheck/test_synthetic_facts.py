"""On a synthetic corpus: every fabricated fact is flagged, every true one verified, wrong pages corrected.

The facts are the ones bench/fact_check.py builds from truth.jsonl (true values with the line that
prints them as quote; invented values, last year's cell, paraphrased quotes, wrong pages).
"""

from __future__ import annotations

from factcheck.check import PAGE_CORRECTED, VALUE_NOT_IN_QUOTE, VERIFIED, check_fact
from retrievers.building.build import build_index
from retrievers.catalog import Catalog
from retrievers.documents.page_text import page_texts_from_chunks, raw_page_texts
from retrievers.indexing.store import IndexStore
from tests.factcheck.conftest import load_bench

KINDS = ("printed", "parsed", "two_lines", "invented", "prior", "blind_spot", "paraphrase", "wrong_page")


def test_fabricated_facts_are_flagged_and_true_facts_verified(synth_corpus, synth_pages):
    bench = load_bench()
    cases, _skipped = bench.build_cases(synth_corpus, synth_pages)
    bench.run(cases, synth_pages)
    result = bench.summarize(cases)
    counts = {kind: sum(result["by_kind"].get(kind, {}).values()) for kind in KINDS}
    assert all(n >= 10 for n in counts.values()), counts  # every kind of fabrication is exercised
    assert result["missed"] == [], "fabricated facts that passed"
    assert result["false_flags"] == [], "true facts flagged"
    assert result["not_corrected"] == [], "wrong pages not corrected"
    # what each fabrication is flagged as
    assert set(result["by_kind"]["invented"]) == {VALUE_NOT_IN_QUOTE}
    assert set(result["by_kind"]["prior"]) == {VALUE_NOT_IN_QUOTE}
    assert set(result["by_kind"]["paraphrase"]) == {"quote_not_found"}
    assert result["by_kind"]["wrong_page"].get(PAGE_CORRECTED, 0) >= 0.9 * counts["wrong_page"]
    # the documented blind spot: last year's value with the whole row as quote verifies
    assert set(result["by_kind"]["blind_spot"]) == {VERIFIED}


def test_page_texts_from_a_built_index_verify_the_true_facts(synth_corpus, synth_pages, tmp_path):
    """The pipeline's route: page texts from the index's chunks (what the extractor read), no PDF needed."""
    index_dir = tmp_path / "index"
    build_index(
        Catalog.load(synth_corpus / "catalog.jsonl"),
        synth_corpus / "pdf",
        index_dir,
        workers=1,
        embedder="hashing-256",
        dense="none",
        progress=False,
    )
    store = IndexStore.open(index_dir)
    bench = load_bench()
    cases, _ = bench.build_cases(synth_corpus, synth_pages)
    true = [c for c in cases if c.kind in ("printed", "parsed")]
    pages_of = {
        doc_id: page_texts_from_chunks(store.index(doc_id).chunks) for doc_id in {c.doc_id for c in true}
    }
    verdicts = [check_fact(c.value, c.unit, c.quote, c.page, pages_of[c.doc_id]) for c in true]
    assert len(true) >= 40
    assert [v.status for v in verdicts].count(VERIFIED) == len(true), [
        (c.field, v.status, v.reason) for c, v in zip(true, verdicts, strict=True) if v.status != VERIFIED
    ]


def test_both_readings_of_a_page_are_searched(synth_corpus, synth_pages):
    doc_id, pages = next(iter(synth_pages.items()))
    raw = raw_page_texts(synth_corpus / "pdf" / f"{doc_id}.pdf")
    assert sorted(raw) == sorted(pages) and min(pages) == 1
    assert all(text.endswith(raw[n]) for n, text in pages.items())  # the parsed reading comes first
    assert sum(len(t) for t in pages.values()) > 1.5 * sum(len(t) for t in raw.values())
