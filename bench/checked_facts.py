"""The fact check on hand-checked facts of real filings (bench/data/checked_facts.jsonl), and on their corruptions.

    python -m bench.fact_check --checked [bench/data/checked_facts.jsonl] [--realdocs-root ../shared/realdocs]

Each line of the data file is one fact a person read off a real statement page: doc_id, set (the
realdocs folder), 1-based page, period (the filing's fiscal year), field (the row's words), value as
printed, unit, scale ("millions", "thousands") with the header line that states it, and the quote (the
row as printed). From each fact the bench makes, with no LM:
  true       printed      the value as printed, unit "USD <scale>"
             parsed       the value as the normalizer stores it (x scale), unit "USD"
  corrupted  wrong_column another cell of the same row (another year), the whole row as quote
             wrong_row    the same column's cell of a neighbouring row, that row as quote, the fact's field
             year         the period's year as the value, the page's line that prints it as quote
             wrong_scale  the value as printed with the other scale (thousands for millions and back)
and prints, per kind, how many came back verified (or page-corrected): the true ones should all
verify (target >= 0.95), the corrupted ones never (target 0 false verifications).
Pages are pdfium's text layer (the quotes were read there); nothing of the filings is stored but
these numbers and short quotes.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import time
from collections import Counter, defaultdict
from pathlib import Path

from factcheck.check import PAGE_CORRECTED, VERIFIED, check_fact
from factcheck.quotes import fold
from retrievers.documents.page_text import raw_page_texts

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "checked_facts.jsonl"
TRUE_KINDS = ("printed", "parsed")
CORRUPT_KINDS = ("wrong_column", "wrong_row", "year", "wrong_scale")
SCALES = {"thousands": 1e3, "millions": 1e6, "billions": 1e9}
OTHER_SCALE = {"millions": "thousands", "thousands": "millions", "billions": "millions"}
CELL = re.compile(r"\(\s*[\d,]+(?:\.\d+)?\s*\)|(?<![\w.])[\d,]*\d(?:\.\d+)?(?![\w])|—")


def realdocs_root(given: Path | None) -> Path:
    if given:
        return given
    env = os.environ.get("COLLATE_REALDOCS")
    return Path(env) if env else ROOT.parent / "shared" / "realdocs"


def load(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def cells(line: str) -> list[str]:
    """The amount cells of a statement row, label aside ("Net loss $ (660) $ (403)" -> ["(660)", "(403)"])."""
    label_end = re.search(r"[$\d(—]", line)
    return CELL.findall(line[label_end.start() :]) if label_end else []


def as_number(cell: str) -> float:
    sign = -1.0 if cell.startswith("(") else 1.0
    return sign * float(re.sub(r"[^\d.]", "", cell))


def page_lines(text: str) -> list[str]:
    return [re.sub(r"\s+", " ", x).strip() for x in text.splitlines() if x.strip()]


def variants(fact: dict, text: str) -> list[dict]:
    """The fact's true and corrupted variants, as check_fact's arguments plus their kind."""
    unit_scaled = f"{fact['unit']} {fact['scale']}"
    base = {"page": fact["page"], "field": fact["field"], "period": fact["period"]}
    out = [
        {**base, "kind": "printed", "value": fact["value"], "unit": unit_scaled, "quote": fact["quote"]},
        {
            **base,
            "kind": "parsed",
            "value": as_number(fact["value"]) * SCALES[fact["scale"]],
            "unit": fact["unit"],
            "quote": fact["quote"],
        },
        {
            **base,
            "kind": "wrong_scale",
            "value": fact["value"],
            "unit": f"{fact['unit']} {OTHER_SCALE[fact['scale']]}",
            "quote": fact["quote"],
        },
    ]
    row = cells(fact["quote"])
    others = [c for c in row if c != fact["value"] and c != "—"]
    if others:
        out.append(
            {**base, "kind": "wrong_column", "value": others[0], "unit": unit_scaled, "quote": fact["quote"]}
        )
    lines = page_lines(text)
    at = next((i for i, x in enumerate(lines) if fold(x) == fold(fact["quote"])), None)
    if at is not None and fact["value"] in row:
        column = row.index(fact["value"])
        for i in (at + 1, at - 1, at + 2, at - 2):
            if 0 <= i < len(lines) and len(cells(lines[i])) == len(row):
                value = cells(lines[i])[column]
                if value not in ("—", fact["value"]):
                    out.append(
                        {**base, "kind": "wrong_row", "value": value, "unit": unit_scaled, "quote": lines[i]}
                    )
                    break
    year = str(fact["period"])
    holding = next((x for x in lines if re.search(rf"(?<!\d){year}(?!\d)", x)), None)
    if holding is not None:
        out.append({**base, "kind": "year", "value": year, "unit": unit_scaled, "quote": holding})
    return out


def run(path: Path, root: Path, show: int = 10) -> int:
    facts = load(path)
    accepts = set(inspect.signature(check_fact).parameters)
    pages_of: dict[str, dict[int, str]] = {}
    start = time.perf_counter()
    results: dict[str, Counter] = defaultdict(Counter)
    wrong: list[tuple[dict, str, str]] = []
    for fact in facts:
        if fact["doc_id"] not in pages_of:
            pages_of[fact["doc_id"]] = raw_page_texts(root / fact["set"] / "pdf" / f"{fact['doc_id']}.pdf")
        pages = pages_of[fact["doc_id"]]
        for v in variants(fact, pages[fact["page"]]):
            # every fact here is money: its scale is read off the page where the check can (amount=True)
            extra = {k: v[k] for k in ("field", "period") if k in accepts}
            if "amount" in accepts:
                extra["amount"] = True
            verdict = check_fact(v["value"], v["unit"], v["quote"], v["page"], pages, **extra)
            ok = verdict.status in (VERIFIED, PAGE_CORRECTED)
            results[v["kind"]]["verified" if ok else verdict.status] += 1
            if ok != (v["kind"] in TRUE_KINDS):
                wrong.append((v, verdict.status, verdict.reason))
    seconds = time.perf_counter() - start
    print(
        f"{path.name}: {len(facts)} hand-checked facts of {len(pages_of)} filings "
        f"({', '.join(sorted({f['set'] for f in facts}))}); {seconds:.1f} s"
    )
    for kind in TRUE_KINDS + CORRUPT_KINDS:
        counts = results.get(kind, Counter())
        print(f"  {kind:<13} " + "  ".join(f"{k}={n}" for k, n in sorted(counts.items())))
    true_n = sum(sum(results[k].values()) for k in TRUE_KINDS)
    true_ok = sum(results[k]["verified"] for k in TRUE_KINDS)
    bad_n = sum(sum(results[k].values()) for k in CORRUPT_KINDS)
    bad_ok = sum(results[k]["verified"] for k in CORRUPT_KINDS)
    print(f"verified-true:  {true_ok}/{true_n} = {true_ok / max(1, true_n):.3f}   target >= 0.95")
    print(f"verified-false: {bad_ok}/{bad_n} = {bad_ok / max(1, bad_n):.3f}   target 0")
    for kind in CORRUPT_KINDS:
        n = sum(results[kind].values())
        print(f"  caught {kind:<13} {n - results[kind]['verified']}/{n}")
    for v, status, reason in wrong[:show]:
        print(
            f"  wrong: {v['kind']} {v['field']!r} value={v['value']!r} unit={v['unit']!r} -> {status}: {reason[:110]}"
        )
    return 0 if bad_ok == 0 and true_ok >= 0.95 * true_n else 1
