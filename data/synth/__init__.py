"""Synthetic MuDABench-style filings with known truth: `python -m data.synth --out DIR`.

`generate(out, companies, years, seed, pages)` writes DIR/pdf/<doc_id>.pdf, DIR/dataset.json (MuDABench
format), DIR/catalog.jsonl and DIR/truth.jsonl as docs/interfaces.md describes. Same seed, same bytes.
"""

from .corpus import DEFAULT_YEARS, generate

__all__ = ["DEFAULT_YEARS", "generate"]
