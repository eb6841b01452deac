"""Extraction cost of a whole dataset when the planner rewords fields: fuzzy fact reuse on vs off.

    .venv/bin/python -m bench.dataset_cost [--workdir DIR] [--seed 0] [--limit N]

Generates the default synthetic corpus (56 filings, 40 questions) and its index under --workdir
(reused when present), then answers every question twice with the rule-based fake LM in rewording
mode (each plan words a field as a real planner would: "资本充足率" / "期末资本充足率" / "资本充足率（%）"),
once with reuse by exact description only, once with reuse by meaning, and once as one run
(programs.batch: every document asked once for all questions' fields). Prints, per mode:
extraction calls (one per document asked; without a fact store, one per document per question),
unique (document, field) pairs the questions needed,
their ratio, and tokens; and every merge checked against truth.jsonl (both descriptions must name
the same truth row of that document). Target: calls <= 1.2 x unique pairs with reuse by meaning,
no wrong merge. Exit 0 when met.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def prepare(work: Path) -> tuple[Path, Path]:
    work = work.resolve()  # the steps run in the project's root: a relative path would land there
    corpus, index = work / "corpus", work / "index"
    if not (corpus / "dataset.json").exists():
        subprocess.run([sys.executable, "-m", "data.synth", "--out", str(corpus)], check=True, cwd=ROOT)
    if not (index / "manifest.json").exists():
        subprocess.run(
            [
                sys.executable,
                "-m",
                "retrievers.build",
                "--catalog",
                str(corpus / "catalog.jsonl"),
                "--pdf-dir",
                str(corpus / "pdf"),
                "--index",
                str(index),
            ],
            check=True,
            cwd=ROOT,
        )
    return corpus, index


def run_dataset(items, store, fuzzy: bool, seed: int, together: bool = False) -> dict:
    """together: answer the questions as one run (programs.batch: every document asked once for every
    question's fields) instead of one after another."""
    import dspy

    from fakes.brain import Brain
    from fakes.engine import brain_lm
    from programs.analyst import build_program
    from programs.batch import answer_batch
    from programs.facts.store import FactStore
    from programs.lm.settings import Settings

    brain = Brain(reword_seed=seed)
    lm = brain_lm(brain)
    dspy.configure(lm=lm, adapter=dspy.ChatAdapter(use_json_adapter_fallback=False))
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(lm="fake/brain", fuzzy_reuse=fuzzy, concurrency=8)
        program = build_program(settings, store, facts=FactStore(Path(tmp) / "facts.sqlite"))
        needed, merges, rounds = set(), [], 0
        questions = [(item["question"], [m["id"] for m in item["metadata"]]) for item in items]
        if together:
            batch = answer_batch(program, questions, concurrency=4)
            preds, rounds = batch.results, batch.rounds
        else:
            preds = [program(question=q, doc_ids=d) for q, d in questions]
        for pred in preds:
            needed |= {(f.doc_id, f.field) for f in pred.facts}
            merges += [
                m if isinstance(m, dict) else vars(m)
                for m in (pred.trace.get("extract") or {}).get("merges", [])
            ]
    tokens = sum((h.get("usage") or {}).get("total_tokens", 0) for h in lm.history)
    return {
        "extraction_calls": brain.counts["extract"],
        "unique_pairs": len(needed),
        "tokens": tokens,
        "merges": merges,
        "rounds": rounds,
    }


def check_merges(merges: list[dict], corpus: Path) -> tuple[int, int, int]:
    """(right, wrong, unchecked): a merge is right when both descriptions name the same truth row."""
    from programs.facts.field_match import core

    rows: dict[str, list[dict]] = {}
    for line in (corpus / "truth.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rows.setdefault(row["doc_id"], []).append(row)

    def row_of(doc_id: str, description: str):
        return next(
            (r["field"] for r in rows.get(doc_id, []) if core(r["description"]) == core(description)), None
        )

    right = wrong = unchecked = 0
    for m in merges:
        asked, stored = row_of(m["doc_id"], m["asked"]), row_of(m["doc_id"], m["stored"])
        if asked is None and stored is None:
            unchecked += 1
        elif asked == stored:
            right += 1
        else:
            wrong += 1
            print(f"  WRONG MERGE {m}", file=sys.stderr)
    return right, wrong, unchecked


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.dataset_cost", description=__doc__.splitlines()[0])
    p.add_argument(
        "--workdir", help="keep the corpus and index here (reused when present); default a temp dir"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the planner's rewording (default 0)")
    p.add_argument("--limit", type=int, help="only the first N questions")
    args = p.parse_args(argv)
    work = Path(args.workdir or tempfile.mkdtemp(prefix="collate-cost-"))
    corpus, index = prepare(work)

    from retrievers.indexing.store import IndexStore

    items = json.loads((corpus / "dataset.json").read_text(encoding="utf-8"))[: args.limit]
    store = IndexStore.open(index)
    print(
        f"{len(items)} questions over {len(store.catalog.documents())} documents; planner rewording seed {args.seed}"
    )
    asked = sum(len(item["metadata"]) for item in items)
    print(f"{'no fact store':<24} extraction calls {asked:>5}  (one per document per question)")
    results = {}
    modes = (
        ("exact descriptions only", False, False),
        ("reuse by meaning", True, False),
        ("one run (programs.batch)", True, True),
    )
    for label, fuzzy, together in modes:
        r = results[label] = run_dataset(items, store, fuzzy, args.seed, together)
        ratio = r["extraction_calls"] / max(1, r["unique_pairs"])
        print(
            f"{label:<24} extraction calls {r['extraction_calls']:>5}  unique (document, field) pairs "
            f"{r['unique_pairs']:>5}  ratio {ratio:.2f}  tokens {r['tokens']:>9,}  merges {len(r['merges'])}"
            + (f"  rounds {r['rounds']}" if together else "")
        )
    fuzzy = results["reuse by meaning"]
    right, wrong, unchecked = check_merges(fuzzy["merges"], corpus)
    print(
        f"merges checked against truth.jsonl: {right} right, {wrong} wrong, {unchecked} without a truth row"
    )
    b_right, b_wrong, b_unchecked = check_merges(results["one run (programs.batch)"]["merges"], corpus)
    print(
        f"one run's merges against truth.jsonl: {b_right} right, {b_wrong} wrong, {b_unchecked} without a truth row"
    )
    wrong += b_wrong
    ratio = fuzzy["extraction_calls"] / max(1, fuzzy["unique_pairs"])
    ok = ratio <= 1.2 and wrong == 0
    print(
        f"target calls <= 1.2 x unique pairs, no wrong merge: {'met' if ok else 'NOT met'} ({ratio:.2f}, {wrong} wrong)"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
