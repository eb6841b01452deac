"""Building blocks for gold questions: MuDABench-shaped items, ranking with ties, answer phrasing."""

from __future__ import annotations

import hashlib
import json
import statistics
from dataclasses import dataclass

from .fields import description

ZH_PREFIX = "针对中国A股市场，"
EN_PREFIX = "Based on US stock market, "
ZH_K = {1: "一", 2: "两", 3: "三"}
EN_K = {1: "one", 2: "two", 3: "three"}


@dataclass(frozen=True)
class Doc:
    id: str
    symbol: str
    year: int
    doctype: str
    gold: dict


def question_id(question: str, metadata: list[dict]) -> str:
    """As NOTES.md defines it: q_ + 16 hex of sha256 over the sorted-keys JSON of question and metadata."""
    blob = json.dumps({"question": question, "metadata": metadata}, sort_keys=True)
    return "q_" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def row(doc: Doc, fields: list[str]) -> dict:
    """One metadata row: the document's identity, its gold values for `fields`, and their schema text."""
    out: dict = {"symbol": doc.symbol, "year": doc.year}
    out.update({f: doc.gold[f] for f in fields})
    out["schema"] = {f: description(f) for f in fields}
    out.update({"id": doc.id, "doctype": doc.doctype})
    return out


def item(
    question: str, docs: list[Doc], fields: list[str], source_answer: list[str], final_answer: str
) -> dict:
    metadata = [row(d, fields) for d in docs]
    return {
        "question": question,
        "metadata": metadata,
        "source_answer": source_answer,
        "final_answer": final_answer,
        "question_id": question_id(question, metadata),
    }


def top(scores: dict[str, float], k: int, highest: bool = True) -> list[str]:
    """The k best symbols, plus everyone tied with the k-th (含并列). Order: best first, then symbol."""
    ranked = sorted(scores, key=lambda s: (-scores[s] if highest else scores[s], s))
    if not ranked:
        return []
    cut = scores[ranked[min(k, len(ranked)) - 1]]
    return [s for s in ranked if (scores[s] >= cut if highest else scores[s] <= cut)]


def most_common(values: dict[str, object]) -> tuple[list[object], int]:
    """The most frequent value(s) (all tied ones, in first-seen order) and their count."""
    counts: dict = {}
    for v in values.values():
        key = json.dumps(v, ensure_ascii=False, sort_keys=True)
        counts[key] = counts.get(key, 0) + 1
    best = max(counts.values())
    return [json.loads(k) for k, n in counts.items() if n == best], best


def pstdev(values: list[float]) -> float:
    return statistics.pstdev(values)


def zh_list(symbols: list[str]) -> str:
    return "、".join(symbols)


def en_list(symbols: list[str]) -> str:
    return ", ".join(f"[{s}]" for s in symbols)


def tie_note_zh(winners: list[str], k: int) -> str:
    return "（含并列）" if len(winners) > k else ""


def tie_note_en(winners: list[str], k: int) -> str:
    return " (including ties)" if len(winners) > k else ""


def by_symbol(docs: list[Doc]) -> dict[str, Doc]:
    return {d.symbol: d for d in docs}


def year_pairs(groups: dict, doctype: str, years: list[int]) -> list[tuple[Doc, Doc]]:
    """(first-year doc, second-year doc) of every company that filed `doctype` in both of the first two years.

    Every change and growth question compares these two years; [] when only one year was generated.
    """
    if len(years) < 2:
        return []
    later = by_symbol(groups.get((doctype, years[1]), []))
    return [(d, later[d.symbol]) for d in groups.get((doctype, years[0]), []) if d.symbol in later]


def pair_docs(pairs: list[tuple[Doc, Doc]]) -> list[Doc]:
    """The metadata rows of a two-year question: each company's first-year doc, then its second-year doc."""
    return [d for pair in pairs for d in pair]


def growth(now: float, before: float) -> float | None:
    return None if not before else (now - before) / abs(before)
