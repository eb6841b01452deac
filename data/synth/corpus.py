"""Generate a whole corpus: companies -> yearly facts -> PDFs + catalog + truth -> gold questions."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict
from pathlib import Path

from .companies import make_companies
from .fields import A_SHARE_DOCTYPES, DOCTYPES, US, description, language
from .page import DocSpec
from .qkit import Doc
from .questions import build_questions
from .render import page_budget, render
from .seeding import doc_uuid, rng_for
from .style import Style, draw_style
from .values import a_share_history, gold, us_history

log = logging.getLogger(__name__)
DEFAULT_YEARS = [2021, 2022]
MAX_COMPANIES = 60  # the invented US names run out beyond this


def split_markets(companies: int) -> tuple[int, int]:
    """About 2 in 5 companies are US-listed (one document a year), the rest A-share (four a year)."""
    n_us = max(1, companies * 2 // 5)
    return n_us, max(1, companies - n_us)


def _dump_jsonl(path: Path, rows: list[dict]) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def drawn_style(seed: int, doc_id: str, doctype: str, family: str = "dev") -> Style:
    """A document's typesetting habits, from its own stream: the same document gets the same ones."""
    return draw_style(rng_for(seed, "style", doc_id), english=doctype == US, family=family)


def write_document(
    pdf_dir: Path,
    firm,
    doctype: str,
    year: int,
    history: dict,
    seed: int,
    pages: int | None = None,
    style: Style | None = None,
    styles: str = "dev",
) -> tuple[dict, list[dict], Doc]:
    """One PDF into `pdf_dir`; returns its catalog entry, its truth rows and its question-side record.

    `style` overrides the document's drawn typesetting habits (tests force one difficulty at a time);
    otherwise they are drawn from the `styles` family (style.FAMILIES).
    """
    doc_id = doc_uuid(seed, firm.symbol, year, doctype)
    budget = page_budget(doctype, pages, rng_for(seed, "pages", doc_id))
    style = style or drawn_style(seed, doc_id, doctype, styles)
    spec = DocSpec(
        doc_id,
        firm,
        year,
        doctype,
        history[year],
        history[year - 1],
        rng_for(seed, "doc", doc_id),
        budget,
        style,
    )
    n_pages, hits = render(spec, str(pdf_dir / f"{doc_id}.pdf"))
    values = gold(doctype, history[year])
    lang = language(doctype)
    entry = {
        "id": doc_id,
        "symbol": firm.symbol,
        "year": year,
        "doctype": doctype,
        "language": lang,
        "company": firm.name,
        "pages": n_pages,
    }
    rows = []
    for field, value in values.items():
        hit = hits.get(field)
        rows.append(
            {
                "doc_id": doc_id,
                "field": field,
                "value": value,
                "strings": list(hit.strings) if hit else [],
                "page": hit.page if hit else None,
                "description": description(field),
                "language": lang,
            }
        )
    return entry, rows, Doc(doc_id, firm.symbol, year, doctype, values)


def generate(
    out: str | os.PathLike,
    companies: int = 10,
    years: list[int] | None = None,
    seed: int = 0,
    pages: int | None = None,
    progress=None,
    styles: str = "dev",
) -> dict:
    """Write DIR/pdf/*.pdf, DIR/dataset.json, DIR/catalog.jsonl, DIR/truth.jsonl, DIR/styles.jsonl; return a summary.

    `styles` is the family the documents' layouts are drawn from: "dev" (the default corpus) or
    "heldout" (ways of printing the asked fields that dev never uses; style.py).
    """
    years = sorted(set(years or DEFAULT_YEARS))
    out = Path(out)
    (out / "pdf").mkdir(parents=True, exist_ok=True)
    n_us, n_a = split_markets(companies)
    firms = make_companies(n_us, n_a, rng_for(seed, "companies"))
    jobs = []
    for firm in firms:
        history = (us_history if firm.market == "US" else a_share_history)(firm, years, seed)
        for doctype in [US] if firm.market == "US" else list(A_SHARE_DOCTYPES):
            for year in years:
                jobs.append((firm, doctype, year, history))
    jobs.sort(key=lambda j: (DOCTYPES.index(j[1]), j[2], j[0].symbol))
    catalog, truth, docs, layouts = [], [], [], []
    for firm, doctype, year, history in jobs:
        style = drawn_style(seed, doc_uuid(seed, firm.symbol, year, doctype), doctype, styles)
        entry, rows, doc = write_document(out / "pdf", firm, doctype, year, history, seed, pages, style)
        layouts.append({"doc_id": entry["id"], "family": styles, **asdict(style)})
        catalog.append(entry)
        truth += rows
        docs.append(doc)
        if progress:
            progress(len(catalog), len(jobs))
    questions = build_questions(docs, years)
    _dump_jsonl(out / "catalog.jsonl", catalog)
    _dump_jsonl(out / "truth.jsonl", truth)
    # which way printed what, so recall can be split per way (bench/retrieval_recall.py)
    _dump_jsonl(out / "styles.jsonl", layouts)
    (out / "dataset.json").write_text(
        json.dumps(questions, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
    )
    summary = {
        "documents": len(catalog),
        "pages": sum(c["pages"] for c in catalog),
        "questions": len(questions),
        "truth_rows": len(truth),
        "companies": len(firms),
        "years": years,
        "seed": seed,
        "styles": styles,
    }
    log.debug("synthetic corpus in %s: %s", out, summary)
    return summary
