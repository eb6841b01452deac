"""A catalog drafted from PDFs under opaque names, scored against the shipped catalogs (issues 23, 29).

    python -m bench.catalog_draft [--docs DEV] [--more MORE] [--synth-dir DIR] [--skip-speed] [--lm-demo]

Real filings: the 22 FinanceBench dev filings and the 64 of financebench-more (9 companies the rules
were not written on) are each linked into a temporary folder under the SHA-1 of their names, so nothing
can be read from a name, and drafted with `collate catalog --no-lm` (rules only). Scored per file:
  ticker   the drafted symbol against the catalog's `ticker` (financebench-more), or for the dev set,
           whose `symbol` is a company name ("Adobe"), against TICKERS (read off its covers and Item 5)
  name     the shipped catalog's own convention: its symbol ("Adobe", "Kraft Heinz", "AMD") found in
           the drafted registrant name, spaces and case aside, or equal to its initials
  year     exact: the company's fiscal year
  doctype  the shipped catalog's names mapped to the draft's (DOCTYPE_NAMES): FinanceBench's "10k" is
           MuDABench's "US Stock Annual Report", the name the project and the synthetic corpus use
  all      ticker, year and doctype right together (target >= 0.95)
A wrong row is a settled one with a wrong field (a guess); an unsettled row is listed, not guessed.
Where a FinanceBench label contradicts the filing's own words (ERRATA, each with the words), "all" is
also given against the corrected label.
Synthetic corpus: `python -m data.synth --out DIR` (seed 0, 56 documents named by UUID), drafted the
same way and compared field by field with its catalog.jsonl (symbol, year, doctype, company; target 1.0).
Speed: the draft's CPU time against a full parse of the same files (retrievers.documents.pdf.parse_pdf, the first
thing a build does), in the same run. --docs and --more default to $COLLATE_REALDOCS/financebench-dev
and -more; a part is skipped, saying so, when its folder is absent.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

from collate.catalog import main as draft_command  # noqa: E402
from retrievers.documents.pdf import parse_pdf  # noqa: E402

TICKERS = {
    "Adobe": "ADBE",
    "Amazon": "AMZN",
    "AMD": "AMD",
    "Corning": "GLW",
    "JPMorgan": "JPM",
    "Kraft Heinz": "KHC",
    "PepsiCo": "PEP",
    "Ulta Beauty": "ULTA",
    "Verizon": "VZ",
}
DOCTYPE_NAMES = {
    "10k": "US Stock Annual Report",
    "10k_annualreport": "US Stock Annual Report",  # a glossy report wrapped around the 10-K
    "10q": "10Q",
    "8k": "8K",
    "earnings": "EARNINGS",
}
# FinanceBench labels that the filing's own words contradict: (field, what the filing says, its words).
# Scored both ways; the rules never see this table.
ERRATA = {
    "PG_E_2023Q3_10Q": ("year", 2022, "cover: 'For the quarterly period ended September 30, 2022'"),
    "SALESFORCE_2021_8K_dated-2023-01-04": (
        "year",
        2023,
        "cover: 'January 4, 2023 / Date of Report (date of earliest event reported)'",
    ),
    "PG_E_2023_EARNINGS-dated-2023-06-01": (
        "doctype",
        "8k",
        "a Form 8-K, 'Item 8.01. Other Events': the sale of mortgage bonds, no results",
    ),
    "PG_E_2023_EARNINGS_dated-2023-05-31": (
        "doctype",
        "8k",
        "a Form 8-K, 'Item 8.01 Other Events': a settlement with a district attorney, no results",
    ),
}
TARGET_REAL, TARGET_SYNTH = 0.95, 1.0
_LEGAL = {"inc", "incorporated", "corp", "corporation", "co", "company", "the", "ltd", "plc"}


def default_docs(name: str = "financebench-dev") -> Path:
    env = os.environ.get("COLLATE_REALDOCS")
    return (Path(env) if env else ROOT.parent / "shared" / "realdocs") / name


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _draft(pdf_dir: Path, out: Path) -> tuple[dict[str, dict], float]:
    """Run `collate catalog --no-lm`; the drafted rows by id and the CPU seconds it took."""
    start = time.process_time()
    code = draft_command(["--pdf-dir", str(pdf_dir), "--out", str(out), "--no-lm", "--force"])
    seconds = time.process_time() - start
    print(f"  collate catalog exit code {code}")
    return {r["id"]: r for r in _rows(out)}, seconds


def _parse_seconds(files: list[Path]) -> tuple[float, int]:
    start, pages = time.process_time(), 0
    for path in files:
        pages += len(parse_pdf(path).pages)
    return time.process_time() - start, pages


def _squash(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.casefold())


def name_matches(catalog_symbol: str, company: str | None) -> bool:
    """The catalog's company name inside the drafted registrant name, or its initials ("AMD")."""
    if not company:
        return False
    words = [w for w in re.findall(r"[a-z0-9]+", company.casefold()) if w not in _LEGAL]
    initials = "".join(w[0] for w in words)
    return _squash(catalog_symbol) in _squash(company) or _squash(catalog_symbol) == initials


def real(docs: Path, skip_speed: bool) -> bool:
    truth = _rows(docs / "catalog.jsonl")
    with tempfile.TemporaryDirectory() as tmp:
        pdfs = Path(tmp) / "pdf"
        pdfs.mkdir()
        opaque = {}
        for row in truth:
            name = hashlib.sha1(row["id"].encode()).hexdigest()
            (pdfs / f"{name}.pdf").symlink_to((docs / row["path"]).resolve())
            opaque[name] = row
        drafted, seconds = _draft(pdfs, Path(tmp) / "catalog.jsonl")
        if not skip_speed:
            parse_s, pages = _parse_seconds(sorted(pdfs.iterdir()))
    scores = {"ticker": 0, "name": 0, "year": 0, "doctype": 0, "all": 0, "all-errata": 0}
    wrong, unsettled, errata = [], [], []
    for name, want in opaque.items():
        got = drafted.get(name)
        right = score_row(want, got or {})
        fixed = {**want}
        if want["id"] in ERRATA:
            field, value, words = ERRATA[want["id"]]
            fixed[field] = value
            errata.append(f"    {want['id']}: {field} {want[field]!r} -> {value!r} ({words})")
        right_fixed = score_row(fixed, got or {})
        right["all-errata"] = right_fixed["all"]
        for key, ok in right.items():
            scores[key] += ok
        if got is None:
            unsettled.append(f"    {want['id']}: unsettled (listed in the draft's .unsettled.txt)")
        elif not right_fixed["all"]:
            misses = [k for k in ("ticker", "year", "doctype") if not right_fixed[k]]
            shown = {k: got.get(k) for k in ("symbol", "year", "doctype", "confidence", "source")}
            wrong.append(f"    {want['id']}: WRONG {misses}: drafted {shown}")
    n = len(truth)
    confidence = {
        c: sum(1 for r in drafted.values() if r.get("confidence") == c) for c in ("high", "medium", "low")
    }
    print(f"real filings ({n} from {docs.name} under opaque names, rules only):")
    print("  " + "  ".join(f"{k} {v}/{n} = {v / n:.3f}" for k, v in scores.items()))
    print(
        f"  settled {len(drafted)}/{n}; confidence {confidence}; wrong {len(wrong)}; unsettled {len(unsettled)}"
    )
    print("\n".join(wrong + unsettled) or "  no misses")
    if errata:
        print("  labels the filings contradict (all-errata scores against the filing's words):")
        print("\n".join(errata))
    if not skip_speed:
        print(
            f"  speed: draft {seconds:.2f} CPU s ({1000 * seconds / n:.0f} ms a file) vs full parse "
            f"{parse_s:.2f} CPU s ({pages} pages): draft/parse = {seconds / parse_s:.3f}"
        )
    return scores["all-errata"] / n >= TARGET_REAL


def score_row(want: dict, got: dict) -> dict[str, bool]:
    """Which of a drafted row's fields match the shipped catalog's row (its conventions mapped)."""
    ticker = want.get("ticker") or TICKERS[want["symbol"]]
    right = {
        "ticker": got.get("symbol") == ticker,
        "name": name_matches(want["symbol"], got.get("company")),
        "year": got.get("year") == want["year"],
        "doctype": got.get("doctype") == DOCTYPE_NAMES[want["doctype"].casefold()],
    }
    right["all"] = right["ticker"] and right["year"] and right["doctype"]
    return right


def synthetic(folder: Path | None, skip_speed: bool) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        corpus = (folder or Path(tmp) / "synth").resolve()  # data.synth runs in the project's root
        if not (corpus / "catalog.jsonl").is_file():
            subprocess.run(
                [sys.executable, "-m", "data.synth", "--out", str(corpus), "-q"], check=True, cwd=ROOT
            )
        truth = _rows(corpus / "catalog.jsonl")
        drafted, seconds = _draft(corpus / "pdf", Path(tmp) / "catalog.jsonl")
        if not skip_speed:
            parse_s, pages = _parse_seconds(sorted((corpus / "pdf").glob("*.pdf")))
    fields = ("symbol", "year", "doctype", "company")
    scores = dict.fromkeys((*fields, "all"), 0)
    misses = []
    for want in truth:
        got = drafted.get(want["id"], {})
        right = {f: got.get(f) == want[f] for f in fields}
        right["all"] = right["symbol"] and right["year"] and right["doctype"]
        for key, ok in right.items():
            scores[key] += ok
        if not all(right.values()):
            misses.append(f"    {want['id']} {want['doctype']}: drafted {got or 'nothing'}")
    n = len(truth)
    print(f"synthetic corpus ({n} documents, {corpus if folder else 'python -m data.synth, seed 0'}):")
    print("  " + "  ".join(f"{k} {v}/{n} = {v / n:.3f}" for k, v in scores.items()))
    print("\n".join(misses) or "  no misses")
    if not skip_speed:
        print(
            f"  speed: draft {seconds:.2f} CPU s vs full parse {parse_s:.2f} CPU s ({pages} pages): "
            f"draft/parse = {seconds / parse_s:.3f}"
        )
    return scores["all"] / n >= TARGET_SYNTH


def lm_plumbing(docs: Path) -> None:
    """The LM fallback end to end with the demo reader (collate reader): on the filings whose symbol only
    their company's other filings give (rule folder:*), drafted alone so the rules leave them unsettled.
    The demo reader is no language model (it answers this prompt with empty fields): this measures the
    round trip and that nothing unprinted is kept, not what a model would read."""
    from collate.reader import reader_settings, start_reader
    from retrievers.catalog_draft.draft import draft_catalog

    alone = [
        r
        for r in draft_catalog(docs / "pdf")
        if r.found.get("symbol") and r.found["symbol"].rule.startswith("folder:")
    ]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "pdf"
        folder.mkdir()
        for r in alone:
            (folder / r.file.name).symlink_to(r.file.resolve())
        server = start_reader()
        saved = {
            k: os.environ.get(k)
            for k in ("COLLATE_LM", "COLLATE_API_BASE", "COLLATE_API_KEY", "COLLATE_CACHE")
        }
        os.environ.update({**reader_settings(server), "COLLATE_CACHE": "false"})
        try:
            start = time.perf_counter()
            code = draft_command(["--pdf-dir", str(folder), "--out", str(Path(tmp) / "c.jsonl"), "--force"])
            seconds = time.perf_counter() - start
        finally:
            server.stop()
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        settled = len(_rows(Path(tmp) / "c.jsonl"))
    print(
        f"LM fallback with the demo reader ({docs.name}: {len(alone)} filings whose symbol only the folder gives, "
        f"drafted alone): {server.calls} calls, {settled} settled, exit {code}, {seconds:.1f} s"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", type=Path, default=default_docs(), help="the FinanceBench dev folder")
    p.add_argument(
        "--more", type=Path, default=default_docs("financebench-more"), help="the financebench-more folder"
    )
    p.add_argument("--synth-dir", type=Path, help="an existing data.synth corpus (default: generate one)")
    p.add_argument("--skip-speed", action="store_true", help="no full-parse baseline")
    p.add_argument(
        "--lm-demo", action="store_true", help="also run the LM fallback's round trip with the demo reader"
    )
    args = p.parse_args(argv)
    ok = True
    for docs, flag in ((args.docs, "--docs"), (args.more, "--more")):
        if (docs / "catalog.jsonl").is_file():
            ok &= real(docs, args.skip_speed)
            if args.lm_demo:
                lm_plumbing(docs)
        else:
            print(
                f"real filings skipped: {docs}/catalog.jsonl not found (pass {flag} or set COLLATE_REALDOCS)"
            )
    ok &= synthetic(args.synth_dir, args.skip_speed)
    print(
        f"targets (real all-errata >= {TARGET_REAL}, synthetic all = {TARGET_SYNTH}): {'met' if ok else 'NOT met'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
