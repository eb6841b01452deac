"""Evidence recall@k of per-document retrieval on a synthetic corpus, dense vs BM25 vs hybrid, per language.

For every truth.jsonl row (document, field), search that document with the field's plain description
and count a hit when a top-k chunk contains one of the row's strings (the exact text stating the value).

    python -m data.synth --out /tmp/corpus
    python -m bench.retrieval_recall --corpus /tmp/corpus [--index DIR] [-k 5] [--show-misses 10]

Builds or updates DIR (default CORPUS/index-dense-all) first, with `--dense all` so that the
dense side can be measured on every document. Prints one row per language: dense-only, BM25-only and
hybrid, BM25 and hybrid with both Chinese tokenizers (character 1+2-grams, the default, and jieba words),
and "shipped": what a default build (`--dense auto`: MiniLM on English documents only) returns.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from retrievers.building.build import build_index, wants_dense  # noqa: E402
from retrievers.catalog import Catalog  # noqa: E402
from retrievers.indexing.document_index import fuse  # noqa: E402
from retrievers.indexing.lexical import JIEBA, NGRAM, LexicalIndex  # noqa: E402
from retrievers.indexing.store import IndexStore  # noqa: E402

TARGET = 0.97


def _truth(corpus: Path) -> list[dict]:
    rows = [
        json.loads(line) for line in (corpus / "truth.jsonl").read_text(encoding="utf-8").splitlines() if line
    ]
    return [r for r in rows if r.get("strings")]  # a field the document does not state has nothing to find


def _top(scores, k: int) -> list[int]:
    return [int(i) for i in np.argsort(-scores, kind="stable")[:k]]


def evaluate(store: IndexStore, rows: list[dict], k: int) -> tuple[dict, list]:
    """hits[(language, mode)] = [hit, ...]; misses = (row, top texts) of the shipped ranking.

    dense / bm25 / hybrid go through DocumentIndex.ranked (the code the store runs); the other
    Chinese tokenizer is measured by re-indexing the same chunks for BM25 in memory and fusing it
    with the same index.fuse, so the two hybrid columns differ in the tokenizer alone.
    """
    hits: dict[tuple[str, str], list[bool]] = defaultdict(list)
    misses = []
    alt_doc, alt_index = None, None  # truth rows come grouped by document: keep the last one's
    for row in rows:
        idx = store.index(row["doc_id"])
        built = idx.meta["tokenizer"]
        alt = JIEBA if built == NGRAM else NGRAM
        if row["doc_id"] != alt_doc:
            alt_doc, alt_index = row["doc_id"], LexicalIndex.build([c.text for c in idx.chunks], alt)
        query = row["description"]
        vector = idx.query_vector(query)
        dense = idx.ranked(query, "dense", vector)
        sides = {
            "dense": dense,
            f"bm25-{built}": idx.ranked(query, "bm25"),
            f"hybrid-{built}": idx.ranked(query, "hybrid", vector),
        }
        lex = alt_index.scores(query)
        sides[f"bm25-{alt}"] = lex
        sides[f"hybrid-{alt}"] = fuse(query, dense, lex, idx.embedded)
        shipped = wants_dense(store.catalog.get(row["doc_id"]), "auto")
        sides["shipped"] = sides[f"hybrid-{built}"] if shipped else sides[f"bm25-{built}"]
        for mode, scores in sides.items():
            top = _top(scores, k)
            hit = any(s in idx.chunks[i].text for i in top for s in row["strings"])
            hits[(row["language"], mode)].append(hit)
            if mode == "shipped" and not hit:
                misses.append((row, [idx.chunks[i].text for i in top]))
    return hits, misses


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--corpus", required=True, help="output folder of python -m data.synth")
    p.add_argument("--index", help="index folder (default CORPUS/index-dense-all; built or updated first)")
    p.add_argument("-k", type=int, default=5)
    p.add_argument("--workers", type=int, default=None)
    p.add_argument("--show-misses", type=int, default=0, help="print this many misses of the shipped ranking")
    args = p.parse_args(argv)
    corpus = Path(args.corpus)
    if not (corpus / "truth.jsonl").is_file():
        print(
            f"error: {corpus}/truth.jsonl not found: generate a corpus with python -m data.synth --out DIR",
            file=sys.stderr,
        )
        return 2
    index = Path(args.index) if args.index else corpus / "index-dense-all"
    # always (re)build: the content-hash cache makes it a no-op when nothing changed, and it picks up
    # parser or chunker changes (their versions are part of the cache key)
    start = time.perf_counter()
    report = build_index(
        Catalog.load(corpus / "catalog.jsonl"), corpus / "pdf", index, workers=args.workers, dense="all"
    )
    print(
        f"index {index}: {report.count('built')} built, {report.count('cached')} unchanged, "
        f"{report.pages} pages, {time.perf_counter() - start:.1f} s"
    )
    store = IndexStore.open(index)
    rows = [r for r in _truth(corpus) if r["doc_id"] not in store.failures()]
    start = time.perf_counter()
    hits, misses = evaluate(store, rows, args.k)
    seconds = time.perf_counter() - start
    modes = ["dense", f"bm25-{NGRAM}", f"bm25-{JIEBA}", f"hybrid-{NGRAM}", f"hybrid-{JIEBA}", "shipped"]
    print(f"evidence recall@{args.k} on {len(rows)} (document, field) rows of {corpus} ({seconds:.1f} s)")
    print(f"{'language':<9}{'n':>6}  " + "".join(f"{m:>15}" for m in modes))
    for language in sorted({lang for lang, _ in hits}):
        n = len(hits[(language, "dense")])
        rates = [sum(hits[(language, m)]) / n for m in modes]
        print(f"{language:<9}{n:>6}  " + "".join(f"{r:>15.3f}" for r in rates))
    for language in sorted({lang for lang, _ in hits}):
        h = hits[(language, "shipped")]
        rate = sum(h) / len(h)
        dense = sum(hits[(language, "dense")]) / len(h)
        bm25 = sum(hits[(language, f"bm25-{NGRAM}")]) / len(h)
        verdict = "PASS" if rate >= TARGET else "BELOW TARGET"
        print(
            f"{language}: shipped {rate:.3f} (target {TARGET}) {verdict}; "
            f"misses vs dense-only {1 - rate:.3f}/{1 - dense:.3f}, vs bm25-only {1 - rate:.3f}/{1 - bm25:.3f}"
        )
    for row, texts in misses[: args.show_misses]:
        print(
            f"\nMISS {row['doc_id']} {row['field']} q={row['description']!r} want={row['strings']} page={row['page']}"
        )
        for t in texts:
            print("   | " + " ".join(t.split())[:160])
    return 0


if __name__ == "__main__":
    sys.exit(main())
