"""The quote before spending (`--estimate`) against what the run and the compile then spend (issue 25).

    .venv/bin/python -m bench.estimate_accuracy [--demo bench/out/demo] [--limit 3 10 40]
                                                [--compile-limit 3 --max-calls 40]
                                                [--optimizers bootstrap mipro gepa simba]

The demo corpus and index are made under --demo (reused when there). The demo reader (fakes/brain.py)
answers on 127.0.0.1 through the OpenAI-compatible path, so the prompts are the real ones and the
adapter is the JSON-schema one a local server gets. For each --limit N: `collate run --estimate` (no
request may reach the server), then `collate run` over the same N questions; for the compile,
`collate compile --estimate` then `collate compile` for each optimizer (--compile-limit examples,
--max-calls). The quote as printed is compared with the command's own cost line ("cost: N tokens in /
M out", what the user sees); per stage, a quote counted as the server counts (characters / 4,
fakes/server.py) is compared with the server's requests. Targets (issue 31 item 6): the printed quote
within 25% of a run's cost line, within a factor of 2 of a compile's. Exit 0 when met.

    .venv/bin/python -m bench.estimate_accuracy --real [../shared/realdocs/financebench-dev]
                                                [--real-index DIR] [--real-limit 10] [--real-asks 3]
                                                [--ask QUESTION ...]   # your own asks; the only ones where
                                                                       # the folder has no questions.jsonl

--real: the same comparison on the real filings (FinanceBench dev: 22 SEC filings, 38 questions): `collate
ask` over the whole catalog for the first --real-asks questions, and `collate run` over the first
--real-limit questions (each on its own filing), index built with `collate build` when --real-index has
none. The demo reader declines real filings (it is rule-based), so this mode answers with
fakes/any_filing.py: the program's real prompts over the real chunks, replies of the demo reader's size.
Skips (exit 0, one line) where the filings are absent.
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import os
import re
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def default_docs() -> Path:
    """$COLLATE_REALDOCS/financebench-dev, else <repo>/../shared/realdocs/financebench-dev."""
    env = os.environ.get("COLLATE_REALDOCS")
    return (Path(env) if env else ROOT.parent / "shared" / "realdocs") / "financebench-dev"


os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

# the server's call kinds (fakes/chat_format.py) -> the stage that makes them
KIND_STAGE = {
    "plan": "planner",
    "extract": "extractor",
    "normalize": "normalizer",
    "write_code": "coder",
    "fix_code": "coder",
    "answer": "answer",
}


def prepare(demo: Path) -> tuple[Path, Path]:
    demo = demo.resolve()  # the demo's steps run in the project's root: a relative path would land there
    corpus, index = demo / "corpus", demo / "index"
    if not (corpus / "dataset.json").is_file() or not (index / "manifest.json").is_file():
        # the demo's own preparation (corpus, then index); without an LM it stops there (exit 2)
        env = {k: v for k, v in os.environ.items() if k != "COLLATE_LM"}
        subprocess.run(
            [sys.executable, "-m", "evaluate.demo", "--out", str(demo), "--no-reader"], cwd=ROOT, env=env
        )
    return corpus / "dataset.json", index


def by_stage(records) -> dict[str, dict[str, float]]:
    """The server's answered calls per stage (the 1-token preflight left out); a call of none of the
    program's signatures is the optimizer's own (instructions, dataset summary, reflections, rules)."""
    stages: dict[str, dict[str, float]] = collections.defaultdict(lambda: {"calls": 0, "tokens": 0})
    for r in records:
        stage = KIND_STAGE.get(r.kind, None if r.kind in ("preflight", "judge") else "proposer")
        if stage is None:
            continue
        stages[stage]["calls"] += 1
        stages[stage]["tokens"] += r.prompt_tokens + r.completion_tokens
    return stages


def optimizer_replies(records) -> None:
    """The replies of the optimizer's own calls as the server measured them, beside what the quote assumes
    (optimize/optimizer_calls.py REPLY_CHARS, characters): the demo reader's replies to a proposer prompt
    are its default outputs, so these are the fake's sizes, not a language model's."""
    from optimize.optimizer_calls import REPLY_CHARS

    kinds: dict[str, list[int]] = collections.defaultdict(list)
    for r in records:
        if r.kind not in KIND_STAGE and r.kind not in ("preflight", "judge"):
            kinds[r.kind].append(r.completion_tokens)
    if not kinds:
        return
    assumed = ", ".join(f"{k} {v // 4}" for k, v in REPLY_CHARS.items())
    print(f"  optimizer's own calls, reply tokens measured on the demo reader (assumed: {assumed}):")
    for kind, replies in sorted(kinds.items()):
        print(f"    {kind}: {len(replies)} calls, mean reply {sum(replies) / len(replies):.0f} tokens")


def compare(label: str, quote, actual: dict, tiktoken_total: float) -> float:
    """Print estimate vs actual per stage; the ratio of the totals (estimate / actual)."""
    print(f"\n{label}: {quote.documents} document(s) in scope")
    print(f"  {'stage':<11}{'calls est':>10}{'actual':>8}{'tokens est':>12}{'actual':>10}{'ratio':>7}")
    names = list(dict.fromkeys([*quote.stages, *actual]))
    for name in names:
        q = quote.stages.get(name)
        est_calls, est_tokens = (q.calls, q.tokens_in + q.tokens_out) if q else (0, 0)
        a = actual.get(name, {"calls": 0, "tokens": 0})
        ratio = f"{est_tokens / a['tokens']:.2f}" if a["tokens"] else "-"
        print(
            f"  {name:<11}{est_calls:>10.1f}{a['calls']:>8}{est_tokens:>12,.0f}{a['tokens']:>10,}{ratio:>7}"
        )
    total = quote.totals()
    est = total["tokens_in"] + total["tokens_out"]
    act = sum(a["tokens"] for a in actual.values())
    calls = sum(a["calls"] for a in actual.values())
    print(
        f"  {'total':<11}{total['calls']:>10.1f}{calls:>8}{est:>12,}{act:>10,}{est / act:>7.2f}"
        f"   (the quote as printed: {tiktoken_total:,.0f})"
    )
    return est / act


def quiet_main(main, argv: list[str]) -> int:
    """A command's main with its stdout swallowed (the bench prints its own table)."""
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        return main(argv)


COST_LINE = re.compile(r"^cost: ([\d,]+) tokens in / ([\d,]+) out", re.M)


def cost_line_tokens(stdout: str) -> int:
    """Tokens in + out of the command's printed cost line (what the user sees); 0 when none was printed."""
    found = COST_LINE.findall(stdout)
    return sum(int(a.replace(",", "")) + int(b.replace(",", "")) for a, b in found[-1:])


def captured(main, argv: list[str]) -> tuple[int, str]:
    """A command's exit code and what it printed (stdout and stderr: `collate ask` keeps its stdout for
    the answer and prints the cost line beside it, on stderr)."""
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        code = main(argv)
    return code, buffer.getvalue()


def real_dataset(docs: Path, out: Path) -> Path:
    """FinanceBench's questions as a MuDABench-format dataset: each question on its own filing, the human
    answer as gold (what `collate run` reads)."""
    catalog = {}
    for line in (docs / "catalog.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            catalog[row["id"]] = row
    items = []
    for line in (docs / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        q = json.loads(line)
        doc = catalog[q["doc_id"]]
        items.append(
            {
                "question_id": q["financebench_id"],
                "question": q["question"],
                "metadata": [{k: doc[k] for k in ("id", "symbol", "year", "doctype")}],
                "source_answer": [],
                "final_answer": q["answer"],
            }
        )
    out.write_text(json.dumps(items, ensure_ascii=False, indent=1), encoding="utf-8")
    return out


def real_index(docs: Path, index: Path) -> Path:
    """The filings' index, built the user's way (`collate build`) when the folder has none."""
    docs, index = docs.resolve(), index.resolve()  # `collate build` runs in the project's root
    if not (index / "manifest.json").is_file():
        argv = [
            "build",
            "--catalog",
            str(docs / "catalog.jsonl"),
            "--pdf-dir",
            str(docs / "pdf"),
            "--index",
            str(index),
        ]
        subprocess.run([sys.executable, "-m", "collate", *argv], cwd=ROOT, check=True)
    return index


DOCUMENT_ID = re.compile(r"\(id ([^)]+)\)")


def repeated_extractions(records) -> tuple[int, int]:
    """(calls, tokens) of extraction calls on a document already asked: fact repairs (a fact that failed
    the check, asked once more with the reason) and re-asks; the quote counts one call per document."""
    seen: set[str] = set()
    calls = tokens = 0
    for r in records:
        if r.kind != "extract":
            continue
        found = DOCUMENT_ID.search(r.last_message)
        doc = found.group(1) if found else ""
        if doc in seen:
            calls, tokens = calls + 1, tokens + r.prompt_tokens + r.completion_tokens
        seen.add(doc)
    return calls, tokens


def first_extractions(records):
    """(document id, its first extraction prompt's inputs as written) per document, in call order: a
    document's later calls are its fact repairs."""
    from fakes.chat_format import parse_prompt

    seen: set[str] = set()
    for r in records:
        if r.kind != "extract":
            continue
        inputs = parse_prompt([{"role": "user", "content": r.last_message}]).raw_inputs
        found = DOCUMENT_ID.search(inputs.get("document", ""))
        doc = found.group(1) if found else ""
        if doc not in seen:
            seen.add(doc)
            yield doc, inputs


def extraction_passages(records, store, questions_of: dict[str, list[str]], k: int) -> float:
    """Passages a document's first extraction prompt showed, beside the top k its questions retrieve from it
    (what the quote searches: programs/quote/passages.py); printed with what lies beyond them per field the
    plan asked. Returns that figure (sizes.PASSAGES_BEYOND_QUESTIONS is the demo's)."""
    shown = own = fields = calls = 0
    for doc, inputs in first_extractions(records):
        mine = {(p.page, p.text) for q in questions_of.get(doc, []) for p in store.search(doc, q, k=k)}
        shown += len(json.loads(inputs.get("passages") or "[]"))
        fields += len(json.loads(inputs.get("field_specs") or "[]"))
        own, calls = own + len(mine), calls + 1
    if not calls:
        return float("nan")
    beyond = (shown - own) / max(1, fields)
    print(
        f"  extraction prompts: {shown / calls:.2f} passages per document's first call, its questions' own "
        f"top {k} {own / calls:.2f}; beyond them {beyond:.2f} per field the plan asked ({fields} fields, "
        f"{calls} documents)"
    )
    return beyond


def measure(label: str, main, argv: list[str], quote, printed: float, server) -> float:
    """Run the command for real against `server`; print the quote against the server and the cost line;
    the printed quote over the command's own cost line."""
    server.reset_counts()
    code, stdout = captured(main, argv)
    ratio = compare(f"{label} (exit {code})", quote, by_stage(server.records), printed)
    reported = cost_line_tokens(stdout)
    shown = printed / reported if reported else float("nan")
    print(
        f"  the command's own cost line: {reported:,} tokens; printed quote / cost line {shown:.2f}; "
        f"server-counted quote / server {ratio:.2f}"
    )
    again, tokens = repeated_extractions(server.records)
    if again and reported:
        print(
            f"  of which {again} extraction call(s), {tokens:,} tokens, asked a document again (fact repairs; "
            f"the quote expected {quote.expected_repairs:,.0f} tokens of them, server-counted); without them "
            f"printed quote / cost line {printed / (reported - tokens):.2f}"
        )
    total = quote.totals()
    in_range(quote, printed / (total["tokens_in"] + total["tokens_out"]), reported, tokens)
    return shown


def in_range(quote, scale: float, reported: int, repaired: int) -> None:
    """Whether the cost line lies in the quote's printed range: less its repair calls, between the range's
    ends; with them, under its top plus the repairs' ceiling. `scale`: the printed quote's count over the
    server's (1.0 when the quote counts as the server does)."""
    if quote.span is None or not reported:
        return
    low, high, repairs = quote.span[0] * scale, quote.span[1] * scale, quote.repairs * scale
    first = reported - repaired
    print(
        f"  range printed: {low:,.0f} to {high:,.0f} (+ at most {repairs:,.0f} of repairs); the cost line "
        f"less its repairs, {first:,}, is {'inside' if low <= first <= high else 'OUTSIDE'}; with them "
        f"{'inside' if low <= reported <= high + repairs else 'OUTSIDE'}"
    )


def carried(before: list[Path], path: Path) -> Path:
    """A new fact store at `path` holding the extraction history (not the facts) of the stores `before`
    (the last command's store alone: it already carries those before it)."""
    from programs.facts.store import FactStore

    store = FactStore(path)
    for old in before:
        with sqlite3.connect(old) as conn:
            rows = conn.execute(
                "SELECT model, doc_id, repaired FROM extraction_calls ORDER BY rowid"
            ).fetchall()
        for model, doc_id, repaired in rows:
            store.record_extractions(model, [doc_id], [doc_id] if repaired else [])
    store.close()
    return path


def printed_total(make, fresh: Path) -> float:
    """The printed quote's tokens (in + out) as a command with a fresh fact store (`fresh`, not made) gets it."""
    os.environ["COLLATE_FACT_STORE"] = str(fresh)
    total = make().totals()
    return total["tokens_in"] + total["tokens_out"]


def within_25(shown: float) -> bool:
    """Whether the printed quote is within 25% of the cost line (issue 31 item 6's target for ask and run); says so."""
    met = abs(shown - 1) <= 0.25
    print(f"  target: printed quote within 25% of the cost line: {'met' if met else 'NOT met'}")
    return met


def real_filings(
    docs: Path, index: Path, limit: int, asks: int, work: Path, own: list[str] | None = None
) -> bool:
    """ask (the whole catalog) and run (each question's filing) on the real filings: printed quote within
    25% of each command's cost line. `own`: questions to ask instead of the dataset's first `asks` (a folder
    of filings without questions.jsonl, e.g. financebench-more, is measured by them alone, with no run)."""
    from collate import ask as collate_ask
    from collate import estimate
    from collate import run as collate_run
    from collate.reader import MODEL
    from fakes.any_filing import AnyFilingReader
    from fakes.server import FakeLMServer
    from programs.lm.settings import Settings
    from programs.quote.tokens import CHARS_OVER_FOUR
    from retrievers.indexing.store import IndexStore

    has_questions = (docs / "questions.jsonl").is_file()
    dataset = real_dataset(docs, work / f"{docs.name}.json") if has_questions else None
    real_index(docs, index)
    server = FakeLMServer(AnyFilingReader(), model_name=MODEL).start()
    os.environ.update(
        {"COLLATE_LM": f"openai/{MODEL}", "COLLATE_API_BASE": server.url, "COLLATE_API_KEY": "none"}
    )
    os.environ["COLLATE_CACHE"] = "false"
    store, k = IndexStore.open(index), Settings().k
    ok = True
    # Each command gets a fact store of its own holding the model's history from the commands before it
    # (carried: which documents it was asked and which it asked again, programs/facts/repair_history.py),
    # not their facts: 03856 asks 04735's field of the same filings, and a store shared whole answers it
    # from the stored facts with 3 calls, which no quote subtracts (it says so: an upper bound). The quote
    # a first command gets (no history) is printed beside, against the same cost line.
    stores: list[Path] = []
    try:
        questions = json.loads(dataset.read_text(encoding="utf-8")) if dataset is not None else []
        chosen = [{"question_id": f"ask-{n + 1}", "question": q} for n, q in enumerate(own or [])]
        for item in chosen or questions[:asks]:
            argv = ["--index", str(index), item["question"]]
            parsed = collate_ask.build_parser().parse_args([*argv, "--estimate"])
            first = printed_total(
                functools.partial(estimate.quote_ask, parsed, collate_ask.read_question, collate_ask.build),
                work / f"fresh-{item['question_id']}.sqlite",
            )
            stores.append(carried(stores[-1:], work / f"facts-{item['question_id']}.sqlite"))
            os.environ["COLLATE_FACT_STORE"] = str(stores[-1])
            quote = estimate.quote_ask(parsed, collate_ask.read_question, collate_ask.build, CHARS_OVER_FOUR)
            own = estimate.quote_ask(parsed, collate_ask.read_question, collate_ask.build).totals()
            label = f"collate ask {item['question_id']} (the whole catalog)"
            shown = measure(
                label, collate_ask.main, argv, quote, own["tokens_in"] + own["tokens_out"], server
            )
            ok &= within_25(shown)
            print(
                f"  a first ask's quote (no history): {first:,.0f}, {first / (own['tokens_in'] + own['tokens_out']) * shown:.2f} of the cost line"
            )
            every = {d.id: [item["question"]] for d in store.catalog.documents()}
            extraction_passages(server.records, store, every, k)
        if dataset is None:
            return ok
        common = ["--dataset", str(dataset), "--index", str(index), "--limit", str(limit)]
        parsed = collate_run.build_parser().parse_args([*common, "--estimate"])
        checks = (collate_run.inputs_from_compile, collate_run.check_coverage)
        first = printed_total(
            functools.partial(estimate.quote_run, parsed, *checks), work / "fresh-run.sqlite"
        )
        os.environ["COLLATE_FACT_STORE"] = str(carried(stores[-1:], work / "facts-run.sqlite"))
        quote = estimate.quote_run(parsed, *checks, CHARS_OVER_FOUR)
        own = estimate.quote_run(parsed, *checks).totals()
        argv = [*common, "--out", str(work / "real-run"), "--no-autolog", "--no-progress", "--no-judge"]
        shown = measure(
            f"collate run --limit {limit} (real filings)",
            collate_run.main,
            argv,
            quote,
            own["tokens_in"] + own["tokens_out"],
            server,
        )
        ok &= within_25(shown)
        print(
            f"  a first run's quote (no history): {first:,.0f}, {first / (own['tokens_in'] + own['tokens_out']) * shown:.2f} of the cost line"
        )
        read: dict[str, list[str]] = collections.defaultdict(list)
        for item in questions[:limit]:
            for meta in item["metadata"]:
                read[meta["id"]].append(item["question"])
        extraction_passages(server.records, store, read, k)
    finally:
        server.stop()
    return ok


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.estimate_accuracy", description=__doc__.splitlines()[0])
    p.add_argument("--demo", default=str(ROOT / "bench" / "out" / "demo"), help="demo corpus + index folder")
    p.add_argument(
        "--limit", type=int, nargs="*", default=[3, 10, 40], help="questions per run (none: compile only)"
    )
    p.add_argument("--compile-limit", type=int, default=3, help="train (and dev) examples of the compile")
    p.add_argument("--max-calls", type=int, default=40, help="the compile's --max-calls")
    p.add_argument(
        "--optimizers", nargs="*", default=["bootstrap", "mipro", "gepa", "simba"], help="compiles to run"
    )
    p.add_argument(
        "--real",
        nargs="?",
        type=Path,
        const=default_docs(),
        help="measure ask and run on the real filings instead (default: ../shared/realdocs/financebench-dev)",
    )
    p.add_argument(
        "--real-index", type=Path, help="their index (built when missing; default under --demo's folder)"
    )
    p.add_argument("--real-limit", type=int, default=10, help="questions of the real-filings run")
    p.add_argument(
        "--real-asks", type=int, default=3, help="questions asked one by one over the whole catalog"
    )
    p.add_argument(
        "--ask",
        action="append",
        metavar="QUESTION",
        help="a question to ask over the whole catalog instead of the dataset's (repeat it; with filings "
        "that have no questions.jsonl, only these asks are measured)",
    )
    args = p.parse_args(argv)
    measurable = args.real is not None and (
        (args.real / "questions.jsonl").is_file() or (args.ask and (args.real / "catalog.jsonl").is_file())
    )
    if args.real is not None and not measurable:
        print(f"skipped: no real filings at {args.real} (set COLLATE_REALDOCS or pass --real DIR)")
        return 0
    work = Path(tempfile.mkdtemp(prefix="collate-estimate-"))  # kept: the runs' folders, printed below
    print(f"work folder: {work}")
    os.environ["MLFLOW_TRACKING_URI"] = f"sqlite:///{work / 'mlflow.db'}"
    if args.real is not None:
        index = args.real_index or Path(args.demo).parent / "real-index"
        return 0 if real_filings(args.real, index, args.real_limit, args.real_asks, work, args.ask) else 1
    dataset, index = prepare(Path(args.demo))

    from collate import compile as collate_compile
    from collate import estimate
    from collate import run as collate_run
    from collate.reader import reader_settings, start_reader
    from evaluate.dataset import load_dataset
    from programs.lm.settings import Settings
    from programs.quote.tokens import CHARS_OVER_FOUR
    from retrievers.indexing.store import IndexStore

    store = IndexStore.open(index)

    server = start_reader(0)
    os.environ.update({**reader_settings(server), "COLLATE_CACHE": "false"})
    ok = True
    try:
        for n in args.limit:
            common = ["--dataset", str(dataset), "--index", str(index), "--limit", str(n)]
            before = server.calls
            assert quiet_main(collate_run.main, [*common, "--estimate"]) == 0
            sent = server.calls - before
            parsed = collate_run.build_parser().parse_args([*common, "--estimate"])
            checks = (collate_run.inputs_from_compile, collate_run.check_coverage)
            quote = estimate.quote_run(parsed, *checks, CHARS_OVER_FOUR)
            own = estimate.quote_run(parsed, *checks).totals()  # tiktoken: the quote as printed
            server.reset_counts()
            out = work / f"run-{n}"
            code, stdout = captured(
                collate_run.main, [*common, "--out", str(out), "--no-autolog", "--no-progress"]
            )
            actual = by_stage(server.records)
            summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
            assert sum(s["calls"] for s in summary["lm_stages"].values()) == sum(
                a["calls"] for a in actual.values()
            ), "the run's own LM counts and the server's disagree"
            ratio = compare(
                f"collate run --limit {n} (exit {code}; the estimate sent {sent} requests)",
                quote,
                actual,
                own["tokens_in"] + own["tokens_out"],
            )
            reported = cost_line_tokens(stdout)
            shown = (own["tokens_in"] + own["tokens_out"]) / reported if reported else float("nan")
            print(
                f"  the command's own cost line: {reported:,} tokens; printed quote / cost line {shown:.2f}; "
                f"server-counted quote / server {ratio:.2f}"
            )
            total = quote.totals()
            printed = own["tokens_in"] + own["tokens_out"]
            in_range(
                quote,
                printed / (total["tokens_in"] + total["tokens_out"]),
                reported,
                repeated_extractions(server.records)[1],
            )
            read: dict[str, list[str]] = collections.defaultdict(list)
            for item in load_dataset(str(dataset))[:n]:
                for doc_id in item.doc_ids:
                    read[doc_id].append(item.question)
            extraction_passages(server.records, store, read, Settings().k)
            met = abs(shown - 1) <= 0.25 and sent == 0
            ok &= met
            print(f"  target: printed quote within 25% of the cost line: {'met' if met else 'NOT met'}")
        for optimizer in args.optimizers:
            out_file = work / f"compiled-{optimizer}.json"
            common = [
                "--dataset", str(dataset), "--index", str(index), "--optimizer", optimizer,
                "--out", str(out_file), "--limit", str(args.compile_limit), "--max-calls", str(args.max_calls),
            ]  # fmt: skip
            before = server.calls
            assert quiet_main(collate_compile.main, [*common, "--estimate"]) == 0
            sent = server.calls - before
            parsed = collate_compile.build_parser().parse_args(common)
            quote = estimate.quote_compile(parsed, CHARS_OVER_FOUR)
            printed = estimate.quote_compile(parsed).totals()  # the quote as `--estimate` prints it
            server.reset_counts()
            code, stdout = captured(collate_compile.main, [*common, "--no-autolog"])
            ratio = compare(
                f"collate compile {optimizer} --limit {args.compile_limit} --max-calls {args.max_calls} "
                f"(exit {code}; the estimate sent {sent} requests)",
                quote,
                by_stage(server.records),
                printed["tokens_in"] + printed["tokens_out"],
            )
            optimizer_replies(server.records)
            reported = cost_line_tokens(stdout)
            shown = (printed["tokens_in"] + printed["tokens_out"]) / reported if reported else float("nan")
            print(
                f"  the command's own cost line: {reported:,} tokens; printed quote / cost line {shown:.2f}; "
                f"server-counted quote / server {ratio:.2f}"
            )
            total = quote.totals()  # a compile asks a document once a run: no call is told apart as a repair
            in_range(
                quote,
                (printed["tokens_in"] + printed["tokens_out"]) / (total["tokens_in"] + total["tokens_out"]),
                reported,
                0,
            )
            met = 0.5 <= shown <= 2 and sent == 0
            ok &= met
            print(
                f"  target: printed quote within a factor of 2 of the cost line: {'met' if met else 'NOT met'}"
            )
    finally:
        server.stop()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
