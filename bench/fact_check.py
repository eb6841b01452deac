"""Flag rate on fabricated facts and false-flag rate on true ones, for the code fact check (no LM).

    python -m bench.fact_check [--corpus DIR] [--companies 2] [--years 2022] [--show 10]
    python -m bench.fact_check --realdocs DIR/financebench-dev    # the threshold's margins on real filings
    python -m bench.fact_check --checked [FILE]   # hand-checked real facts and their corruptions (bench/checked_facts.py)

Builds facts from a synthetic corpus's truth.jsonl (generated into a temp folder when --corpus is
not given): for every row whose value is printed in the document (one string, page known; not a
yes/no, not a value derived from several amounts), the quote an extractor would give is the page
line that holds the string, as the parsed page reads it. From each row:
  true facts     printed   value as printed ("5,917,340"), the line as quote, the right page
                 parsed    value as the normalizer stores it (5917340000.0, "2023-06-07")
                 two_lines the quote runs over a line break (this line and the next)
  fabricated     invented  a value not in the document (digits changed by 7-40%, a date moved, a name swapped)
                 prior     the other number on the row (last year's column), quote = label + this year's cell
                 paraphrase the quote reworded around the right value
  wrong page     the right value and quote with a page 1-8 pages off: must come back page_corrected
  blind spot     prior, but quoting the whole row (both years): verifies; printed for the record
Prints each category's verdict counts, then the flag rate (fabricated: not verified/page-corrected),
the false-flag rate (true facts flagged) and the corrected share (wrong page -> the right page).
Targets: flag rate 1.0, false-flag rate 0.0, corrected share 1.0.

--realdocs: each FinanceBench evidence text scored as a quote (factcheck.quotes.score) against its
own evidence page(s) and against the page farthest from them: the lowest own-page score and the
highest far-page score are the margins on either side of FUZZY_THRESHOLD.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from factcheck.check import PAGE_CORRECTED, VERIFIED, check_fact  # noqa: E402
from factcheck.quotes import FUZZY_THRESHOLD, fold, score  # noqa: E402
from retrievers.documents.page_text import raw_page_texts, read_page_texts  # noqa: E402

TRUE_KINDS = ("printed", "parsed", "two_lines")
FABRICATED_KINDS = ("invented", "prior", "paraphrase")
OTHER_FIRMS = [
    "普华永道中天会计师事务所(特殊普通合伙)",
    "信永中和会计师事务所(特殊普通合伙)",
    "Northwind Audit LLP",
]
UNITS = {"_10k_cny": "万元", "_cny": "CNY", "_usd": "USD", "_pct": "percent"}
WINDOW = 40  # a prose line longer than 2 x WINDOW is quoted as the string with WINDOW chars each side


@dataclass
class Case:
    kind: str
    doc_id: str
    field: str
    value: object
    unit: str | None
    quote: str
    page: int
    truth_page: int
    verdict: str = ""
    found_page: int | None = None
    reason: str = ""
    extra: dict = field(default_factory=dict)


def make_corpus(out: Path, companies: int, years: list[int]) -> Path:
    from data.synth.corpus import generate

    generate(out, companies=companies, years=years, seed=0)
    return out


def printed_rows(corpus: Path) -> list[dict]:
    """Truth rows whose value is printed once on a known page (what a quote can hold)."""
    rows = []
    for line in (corpus / "truth.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line) if line.strip() else None
        if not row or row.get("page") is None or len(row.get("strings") or []) != 1:
            continue
        value, string = row["value"], row["strings"][0]
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, list) and not all(isinstance(v, str) for v in value):
            continue  # meeting events: month + type per meeting, never printed as such
        if isinstance(value, (int, float)) and not re.search(r"\d", re.sub(r"(19|20)\d\d年?", "", string)):
            continue  # a count of people or meetings, stated by listing them (a year is not the count)
        rows.append(row)
    return rows


def quote_line(page_text: str, string: str) -> tuple[str, str] | None:
    """(the line holding the string, the line after it) in the parsed reading, as an extractor sees it."""
    lines = [x.strip() for x in page_text.splitlines() if x.strip()]
    target = fold(string)
    for i, line in enumerate(lines):
        if target in fold(line):
            if len(line) > 2 * WINDOW:
                at = line.find(string)
                at = at if at >= 0 else 0
                line = line[max(0, at - WINDOW) : at + len(string) + WINDOW]
            return line, lines[i + 1] if i + 1 < len(lines) else ""
    return None


def _format_like(number: float, like: str) -> str:
    decimals = len(like.split(".")[1].rstrip("%万元亿")) if "." in like else 0
    text = f"{number:,.{decimals}f}" if "," in like else f"{number:.{decimals}f}"
    return text + ("%" if like.endswith("%") else "") + ("万元" if like.endswith("万元") else "")


def invent(value, string: str, rng: random.Random):
    """A value that is not the truth and not in the quote."""
    if isinstance(value, list):
        return [*value, "书面表决" if re.search(r"[\u4e00-\u9fff]", value[0]) else "written consent"]
    if isinstance(value, str):
        dates = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", value) or re.fullmatch(r"(\d{2})-(\d{2})", value)
        if dates:
            day = int(dates.groups()[-1])
            moved = (day + 9) % 28 + 1
            return value[:-2] + f"{moved:02d}"
        if "会计师事务所" in value or "LLP" in value:
            return next(f for f in OTHER_FIRMS if f != value)
        return (
            re.sub(r"\d", lambda m: str((int(m.group()) + 3) % 10), value)
            if re.search(r"\d", value)
            else value + "分行"
        )
    number = re.search(r"\d[\d,]*(?:\.\d+)?", string)
    base = float(number.group().replace(",", "")) if number else float(value)
    factor = 1 + rng.choice([-1, 1]) * rng.uniform(0.07, 0.4)
    return _format_like(base * factor, string if number else str(value))


def other_number(line: str, string: str) -> tuple[str, str] | None:
    """(another amount on the same line, the quote narrowed to the label and this year's cell)."""
    at = line.find(string)
    if at < 0:
        return None
    for m in re.finditer(r"\d[\d,]*(?:\.\d+)?%?", line):
        token = m.group()
        if m.start() < at + len(string) and m.end() > at:
            continue
        if re.fullmatch(r"(19|20)\d\d", token) or len(token.replace(",", "").replace(".", "")) < 3:
            continue  # a year label or a note number, not last year's figure
        if token == string or fold(token) in fold(string):
            continue
        narrow = line[: at + len(string)] if m.start() >= at + len(string) else line[at:]
        return token, narrow
    return None


def paraphrase(row: dict, value: str) -> str:
    label = row["description"].rstrip("。.").split("(")[0].strip()
    if row.get("language") == "zh":
        return f"根据公司披露的信息，本报告期内{label}最终达到了{value}，与上一年度相比有所变化"
    return f"According to the company's disclosure, its {label} came to {value} for the reporting year"


def canonical_unit(field_name: str) -> str | None:
    return next((u for suffix, u in UNITS.items() if field_name.endswith(suffix)), None)


def build_cases(
    corpus: Path, pages_of: dict[str, dict[int, str]], seed: int = 0
) -> tuple[list[Case], Counter]:
    rng = random.Random(seed)
    cases: list[Case] = []
    skipped: Counter = Counter()
    for row in printed_rows(corpus):
        pages = pages_of[row["doc_id"]]
        page, string, value = row["page"], row["strings"][0], row["value"]
        found = quote_line(pages.get(page, ""), string)
        if found is None:
            skipped["string not on its page"] += 1
            continue
        line, following = found

        def add(kind, v, quote, cited=page, unit=None, row=row, page=page, **extra):
            cases.append(Case(kind, row["doc_id"], row["field"], v, unit, quote, cited, page, extra=extra))

        printed = value if isinstance(value, (str, list)) else string
        add("printed", printed, line)
        add("parsed", value, line, unit=canonical_unit(row["field"]))
        if following:
            add("two_lines", printed, f"{line}\n{following}")
        add("invented", invent(value, string, rng), line)
        prior = other_number(line, string)
        if prior is not None and not isinstance(value, (str, list)):
            add("prior", prior[0], prior[1])
            add("blind_spot", prior[0], line)
        else:
            skipped["no other amount on the row (prior year)"] += 1
        add("paraphrase", printed, paraphrase(row, value_text(printed)))
        last = max(pages)
        offsets = [d for d in (1, -1, 3, -5, 8, -2) if 1 <= page + d <= last]
        if offsets:
            same = [
                n for n, text in pages.items() if fold(line) in fold(text)
            ]  # a line printed on several pages
            add("wrong_page", printed, line, cited=page + rng.choice(offsets), printed_on=same)
    return cases, skipped


def value_text(value) -> str:
    return "、".join(value) if isinstance(value, list) else str(value)


def run(cases: list[Case], pages_of: dict[str, dict[int, str]]) -> float:
    start = time.perf_counter()
    for case in cases:
        verdict = check_fact(case.value, case.unit, case.quote, case.page, pages_of[case.doc_id])
        case.verdict, case.found_page, case.reason = verdict.status, verdict.page, verdict.reason
    return time.perf_counter() - start


def summarize(cases: list[Case]) -> dict:
    by_kind: dict[str, Counter] = defaultdict(Counter)
    for case in cases:
        by_kind[case.kind][case.verdict] += 1
    true = [c for c in cases if c.kind in TRUE_KINDS]
    fabricated = [c for c in cases if c.kind in FABRICATED_KINDS]
    wrong_page = [c for c in cases if c.kind == "wrong_page"]
    return {
        "by_kind": {k: dict(v) for k, v in by_kind.items()},
        "true": len(true),
        "false_flags": [c for c in true if c.verdict not in (VERIFIED, PAGE_CORRECTED)],
        "fabricated": len(fabricated),
        "missed": [c for c in fabricated if c.verdict in (VERIFIED, PAGE_CORRECTED)],
        "wrong_page": len(wrong_page),
        "not_corrected": [
            c
            for c in wrong_page
            # corrected to the truth's page, or to (or kept on) another page that prints the same line
            if not (c.verdict in (PAGE_CORRECTED, VERIFIED) and c.found_page in c.extra["printed_on"])
        ],
    }


def _rate(part: int, whole: int) -> str:
    return f"{part / whole:.3f} ({part}/{whole})" if whole else "n/a"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", type=Path, help="a data.synth folder (default: generate one in a temp folder)")
    p.add_argument("--companies", type=int, default=2)
    p.add_argument("--years", type=int, nargs="+", default=[2022])
    p.add_argument("--show", type=int, default=10, help="print up to N misses of each kind")
    p.add_argument(
        "--realdocs", type=Path, help="a financebench-dev folder: measure the quote threshold's margins"
    )
    p.add_argument(
        "--checked",
        type=Path,
        nargs="?",
        const=Path(__file__).resolve().parent / "data" / "checked_facts.jsonl",
        help="hand-checked facts of real filings (default bench/data/checked_facts.jsonl): verified-true and -false",
    )
    p.add_argument(
        "--realdocs-root",
        type=Path,
        help="the realdocs folder (default $COLLATE_REALDOCS, else ../shared/realdocs)",
    )
    return p.parse_args(argv)


def realdocs_margins(folder: Path) -> int:
    catalog = {
        d["id"]: d
        for d in map(json.loads, (folder / "catalog.jsonl").read_text(encoding="utf-8").splitlines())
    }
    questions = [
        json.loads(x) for x in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines() if x
    ]
    pages_of: dict[str, dict[int, str]] = {}
    own, far = [], []
    start = time.perf_counter()
    for q in questions:
        if q["doc_id"] not in pages_of:
            pages_of[q["doc_id"]] = raw_page_texts(folder / catalog[q["doc_id"]]["path"])
        pages, evidence = pages_of[q["doc_id"]], q["evidence_pages"]
        farthest = max(pages, key=lambda p, e=evidence: (min(abs(p - x) for x in e), -p))
        for text in q["evidence_text"]:
            own.append((max(score(text, pages[p]) for p in evidence), q["doc_id"]))
            far.append((score(text, pages[farthest]), q["doc_id"]))
    print(
        f"{len(own)} evidence texts of {len(questions)} questions in {len(pages_of)} filings "
        f"({sum(len(p) for p in pages_of.values())} pages), {time.perf_counter() - start:.0f} s"
    )
    print(
        f"own page:  lowest score {min(own)[0]} ({min(own)[1]}); below {FUZZY_THRESHOLD}: "
        f"{sum(s < FUZZY_THRESHOLD for s, _ in own)}"
    )
    print(
        f"far page:  highest score {max(far)[0]} ({max(far)[1]}); at or above {FUZZY_THRESHOLD}: "
        f"{sum(s >= FUZZY_THRESHOLD for s, _ in far)}"
    )
    return 0 if min(own)[0] >= FUZZY_THRESHOLD > max(far)[0] else 1


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.checked:
        from bench.checked_facts import realdocs_root
        from bench.checked_facts import run as run_checked

        return run_checked(args.checked, realdocs_root(args.realdocs_root), args.show)
    if args.realdocs:
        return realdocs_margins(args.realdocs)
    with tempfile.TemporaryDirectory(prefix="collate-factcheck-") as tmp:
        corpus = args.corpus or make_corpus(Path(tmp) / "corpus", args.companies, args.years)
        catalog = [
            json.loads(x) for x in (corpus / "catalog.jsonl").read_text(encoding="utf-8").splitlines() if x
        ]
        start = time.perf_counter()
        pages_of = {d["id"]: read_page_texts(corpus / "pdf" / f"{d['id']}.pdf") for d in catalog}
        read_seconds = time.perf_counter() - start
        cases, skipped = build_cases(corpus, pages_of)
        seconds = run(cases, pages_of)
    result = summarize(cases)
    print(
        f"corpus {corpus}: {len(catalog)} documents, {sum(len(p) for p in pages_of.values())} pages "
        f"read in {read_seconds:.1f} s; {len(cases)} facts checked in {seconds:.2f} s "
        f"({1000 * seconds / max(1, len(cases)):.1f} ms/fact)"
    )
    if skipped:
        print("rows without a case: " + ", ".join(f"{k}: {n}" for k, n in skipped.items()))
    for kind, counts in result["by_kind"].items():
        print(f"  {kind:<11} " + "  ".join(f"{v}={n}" for v, n in sorted(counts.items())))
    flagged = result["fabricated"] - len(result["missed"])
    print(f"flag rate on fabricated facts:  {_rate(flagged, result['fabricated'])}   target 1.0")
    print(f"false-flag rate on true facts:  {_rate(len(result['false_flags']), result['true'])}   target 0.0")
    corrected = result["wrong_page"] - len(result["not_corrected"])
    print(f"wrong page corrected:           {_rate(corrected, result['wrong_page'])}   target 1.0")
    for title, misses in (
        ("missed", result["missed"]),
        ("false flag", result["false_flags"]),
        ("not corrected", result["not_corrected"]),
    ):
        for c in misses[: args.show]:
            print(
                f"  {title}: {c.kind} {c.field} value={c.value!r} page={c.page} -> {c.verdict} "
                f"{c.found_page}: {c.reason} | quote={c.quote[:80]!r}"
            )
    ok = not result["missed"] and not result["false_flags"] and not result["not_corrected"]
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
