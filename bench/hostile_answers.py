"""Hostile answers against the real MuDABench gold: how many the deterministic matcher scores correct.

For every item of simple.json and complex.json whose gold scores correct against itself, answers that
do not commit to one answer are made from the gold itself, each pattern in several wordings:

  hedge_zh       "可能是G，也可能是X" / "G，也可能是X" / "G，但也可能是X" / "要么G要么X"  (X: G changed)
  hedge_en       "G, or possibly X" / "G, though it could also be X" / "maybe G, maybe X"
  enumeration    the gold's count among every count 0..N+8 ("0家 1家 ... 8家"), or its number among 8
  stuffed        the gold's companies and numbers inside a list of every company and many numbers

Each pattern should score 0 correct; the gold must keep scoring correct against itself, and legitimate
list answers (the gold's companies named alone) correct. Prints one line per pattern:

    python -m bench.hostile_answers [--mudabench ../shared/mudabench] [-v]
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from pathlib import Path

from evaluate.matching.final_match import final_match, read_gold
from evaluate.matching.quantities import fold
from evaluate.matching.question_traits import read_question

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "mudabench"


def bump(text: str, by: int = 1) -> str:
    """Another value of the same form: the first significant digit changed (18.02% -> 28.02%)."""
    m = re.search(r"[1-9]", text) or re.search(r"\d", text)
    if m is None:
        return text
    digit = (int(m.group()) + by - 1) % 9 + 1
    if digit == int(m.group()):
        digit = digit % 9 + 1
    return text[: m.start()] + str(digit) + text[m.end() :]


def hostile(item: dict) -> dict[str, list[str]]:
    question, gold = item["question"], fold(item["final_answer"])
    symbols = [row["symbol"] for row in item["metadata"]]
    facts = read_gold(read_question(question), question, gold, symbols)
    out: dict[str, list[str]] = {"hedge_zh": [], "hedge_en": [], "enumeration": [], "stuffed": []}
    if facts.quantities:
        g = facts.quantities[0][0].text.strip()
        x = bump(g)
        i = gold.find(g)
        if i >= 0 and x != g:
            before, after = gold[:i], gold[i + len(g) :]
            for middle in (
                f"可能是{g}，也可能是{x}",
                f"{g}，也可能是{x}",
                f"{g}，但也可能是{x}",
                f"要么{g}要么{x}",
            ):
                out["hedge_zh"].append(before + middle + after)
            for middle in (
                f"{g}, or possibly {x}",
                f"{g}, though it could also be {x}",
                f"maybe {g}, maybe {x}",
            ):
                out["hedge_en"].append(before + middle + after)
            many = [bump(g, k) for k in range(1, 8)]
            many.insert(3, g)
            out["enumeration"].append(before + " ".join(dict.fromkeys(many)) + after)
            out["enumeration"].append(before + "、".join(dict.fromkeys(many)) + after)
        counts = [q for q, _ in facts.quantities if q.kind == "count" and q.raw == int(q.raw) and q.raw < 40]
        if counts:
            n = int(counts[0].raw)
            unit = "家" if "家" in counts[0].text else " companies"
            out["enumeration"].append("共有" + " ".join(f"{k}{unit}" for k in range(0, n + 9)))
            out["enumeration"].append(", ".join(f"{k}{unit}" for k in range(0, n + 9)))
    numbers = [q.text.strip() for q, _ in facts.quantities]
    if len(symbols) > len(facts.entities) + 3:
        codes = "、".join(dict.fromkeys([*symbols[::-1], *facts.entities]))
        values = "、".join(dict.fromkeys(numbers + [bump(n, k) for n in numbers[:2] for k in (1, 2, 3)]))
        out["stuffed"].append(f"相关公司：{codes}。相关数值：{values}。")
        out["stuffed"].append(f"Candidates: {codes}. Values: {values}.")
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mudabench", type=Path, default=DEFAULT)
    p.add_argument("-v", "--verbose", action="store_true", help="print each hostile answer scored correct")
    args = p.parse_args(argv)
    tried: Counter = Counter()
    passed: Counter = Counter()
    self_ok = self_decided = items_n = 0
    for name in ("simple.json", "complex.json"):
        items = json.loads((args.mudabench / name).read_text(encoding="utf-8"))
        for n, item in enumerate(items):
            items_n += 1
            symbols = [row["symbol"] for row in item["metadata"]]
            itself = final_match(item["question"], item["final_answer"], item["final_answer"], symbols)
            self_decided += itself.decided
            self_ok += itself.correct is True
            if itself.correct is not True:
                continue
            for pattern, answers in hostile(item).items():
                for answer in answers:
                    tried[pattern] += 1
                    result = final_match(item["question"], item["final_answer"], answer, symbols)
                    if result.correct is True:
                        passed[pattern] += 1
                        if args.verbose:
                            print(f"  {pattern} {name}[{n}]: {answer[:160]!r} ({result.reason})")
    print(f"gold vs itself: {self_ok} correct of {self_decided} decided ({items_n} items)")
    for pattern in tried:
        print(f"{pattern:12s} {passed[pattern]:4d} scored correct of {tried[pattern]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
