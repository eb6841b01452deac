"""What an answer rests on, said by code: which facts the computation may use, and the coverage line.

Facts that failed the check against their page (value not in the quote, quote not found) stay in the
records, named in an `unverified` column, but their values are left out of what the analysis code
sees unless the caller keeps them (Settings.use_unverified). Every answer then ends with its
coverage, in the question's language: documents in scope, how many the result rests on, which were
unverified, not disclosed or could not be read, and why (each document named once, with its reasons),
and the fields whose records look read in different units (one group of filings ~1,000x off the rest).
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field
from itertools import pairwise

from signatures.types import IDENTITY_FIELDS, Document, DocumentFailure, Fact

CJK = re.compile(r"[\u4e00-\u9fff]")
UNVERIFIED_COLUMN = "unverified"  # fields of the record whose facts failed the check, comma-separated
# The coverage line in each language the questions come in.
WORDS = {
    "en": {
        "base": "Based on {used} of {total} filings",
        "unverified": "; {n} unverified: {items}",
        "and": ", ",
        "silent": "; {n} did not disclose a value asked for",
        "end": ".",
        "value_not_in_quote": "value not in quote",
        "quote_not_found": "quote not found",
        "not_disclosed": "not disclosed",
        "unreadable": "could not be read",
        "units": "; units differ: {items}",
        "unit_item": "{field} of {symbols} ~{ratio:,}x {side} the other {n}",
        "above": "above",
        "below": "below",
    },
    "zh": {
        "base": "依据：{total}份文件中的{used}份",
        "unverified": "；{n}项未经核实：{items}",
        "and": "、",
        "silent": "；{n}份文件未披露所需数据",
        "end": "。",
        "value_not_in_quote": "引文中无此数值",
        "quote_not_found": "未找到引文",
        "not_disclosed": "未披露",
        "unreadable": "无法读取",
        "units": "；单位存疑：{items}",
        "unit_item": "{symbols}的{field}约为其余{n}份的{ratio:,}{side}",
        "above": "倍",
        "below": "分之一",
    },
}


def flag_records(
    records: list[dict], facts: list[Fact], use_unverified: bool
) -> tuple[list[dict], list[dict]]:
    """(records with the `unverified` column, the records the analysis code is given); both are the
    records unchanged when every fact passed (or none was checked)."""
    failed: dict[str, list[str]] = {}
    for f in facts:
        if not f.usable:
            failed.setdefault(f.doc_id, []).append(f.field)
    if not failed:
        return records, records
    flagged, for_code = [], []
    for record in records:
        fields = failed.get(record["id"], [])
        flagged.append({**record, UNVERIFIED_COLUMN: ",".join(fields)})
        for_code.append(dict(record) if use_unverified else {**record, **{name: None for name in fields}})
    return flagged, for_code


# A unit slip (a table "in thousands" read as units, 万元 as 元) moves a group of records ~1,000x or
# 10,000x off the rest. Sorted by size, the records of one field in one doctype then show a gap between
# neighbours that companies' sizes do not make: in MuDABench's gold values (456 field groups of 3+
# filings) the largest neighbour gap is 1.3x at the median, 112x at the 99th percentile, and the one gap
# above 300x (1,609x) is a unit slip in the gold itself (social donations in 元 in a 万元 column).
UNIT_GAP = 300.0


def unit_mismatches(records: list[dict]) -> list[dict]:
    """{field, doctype, doc_ids, symbols, ratio, side, others} for each field whose records, within one
    doctype, split into two groups at least UNIT_GAP apart: the smaller group is named (the upper one on
    a tie), `ratio` is the gap between the groups' medians, `side` whether it sits above or below."""
    groups: dict[tuple[str, str], list[tuple[float, dict]]] = {}
    for record in records:
        for name, value in record.items():
            if name in IDENTITY_FIELDS or isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            if value and math.isfinite(value):
                groups.setdefault((str(record.get("doctype", "")), name), []).append((abs(value), record))
    found = []
    for (doctype, name), rows in groups.items():
        rows.sort(key=lambda row: row[0])
        gaps = [(b[0] / a[0], i + 1) for i, (a, b) in enumerate(pairwise(rows))]
        gap, at = max(gaps, key=lambda g: g[0], default=(0.0, 0))
        if gap < UNIT_GAP:
            continue
        low, high = rows[:at], rows[at:]
        named, others = (low, high) if len(low) < len(high) else (high, low)
        ratio = _median([v for v, _ in high]) / _median([v for v, _ in low])
        found.append(
            {
                "field": name,
                "doctype": doctype,
                "doc_ids": [r.get("id") for _, r in named],
                "symbols": [str(r.get("symbol") or r.get("id")) for _, r in named],
                "ratio": ratio,
                "side": "above" if named is high else "below",
                "others": len(others),
            }
        )
    return found


def _median(values: list[float]) -> float:
    middle = len(values) // 2
    return values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2


def _round_ratio(ratio: float) -> int:
    """1,000 for 987x: the slip's size as a reader recognises it (two significant digits)."""
    digits = max(0, int(math.log10(ratio)) - 1)
    return int(round(ratio / 10**digits) * 10**digits)


@dataclass
class Coverage:
    """The answer's footing: the same in the JSON output as in the line the answer ends with."""

    documents_in_scope: int
    documents_used: int  # documents with at least one usable disclosed fact
    facts_used: int
    unverified: list[dict] = field(default_factory=list)  # {doc_id, symbol, field, status, reason}
    not_disclosed: list[dict] = field(default_factory=list)  # {doc_id, symbol, field}
    unreadable: list[dict] = field(default_factory=list)  # {doc_id, symbol, stage, reason}
    unit_mismatches: list[dict] = field(default_factory=list)  # unit_mismatches(records)

    def to_dict(self) -> dict:
        return asdict(self)

    def line(self, question: str) -> str:
        words = WORDS["zh" if CJK.search(question or "") else "en"]
        reasons: dict[str, list[str]] = {}  # symbol -> its reasons, each once: a document is named once
        for u in self.unverified:
            reasons.setdefault(u["symbol"], []).append(words[u["status"]])
        for u in self.unreadable:
            reasons.setdefault(u["symbol"], []).append(words["unreadable"])
        problems = [f"{symbol} ({words['and'].join(dict.fromkeys(why))})" for symbol, why in reasons.items()]
        silent = len({u["doc_id"] for u in self.not_disclosed})
        text = words["base"].format(used=self.documents_used, total=self.documents_in_scope)
        if problems:
            text += words["unverified"].format(n=len(problems), items=words["and"].join(problems))
        if silent:
            text += words["silent"].format(n=silent)
        if self.unit_mismatches:
            items = [
                words["unit_item"].format(
                    field=m["field"],
                    symbols=words["and"].join(m["symbols"]),
                    ratio=_round_ratio(m["ratio"]),
                    side=words[m["side"]],
                    n=m["others"],
                )
                for m in self.unit_mismatches
            ]
            text += words["units"].format(items=words["and"].join(items))
        return text + words["end"]


def coverage_of(
    documents: dict[str, Document],
    facts: list[Fact],
    failures: list[DocumentFailure],
    use_unverified: bool = False,
    records: list[dict] | None = None,
) -> Coverage:
    def symbol(doc_id: str) -> str:
        doc = documents.get(doc_id)
        return doc.symbol if doc else doc_id

    used = [f for f in facts if f.disclosed and (f.usable or use_unverified)]
    return Coverage(
        documents_in_scope=len(documents),
        documents_used=len({f.doc_id for f in used}),
        facts_used=len(used),
        unverified=[
            {
                "doc_id": f.doc_id,
                "symbol": symbol(f.doc_id),
                "field": f.field,
                "status": f.verdict,
                "reason": f.verdict_reason,
            }
            for f in facts
            if not f.usable
        ],
        not_disclosed=[
            {"doc_id": f.doc_id, "symbol": symbol(f.doc_id), "field": f.field}
            for f in facts
            if not f.disclosed
        ],
        unreadable=[
            {"doc_id": m.doc_id, "symbol": symbol(m.doc_id), "stage": m.stage, "reason": m.reason}
            for m in failures
        ],
        unit_mismatches=unit_mismatches(records or []),
    )
