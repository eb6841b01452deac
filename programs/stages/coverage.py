"""What an answer rests on, said by code: which facts the computation may use, and the coverage line.

Facts that failed the check against their page (value not in the quote, quote not found) stay in the
records, named in an `unverified` column, but their values are left out of what the analysis code
sees unless the caller keeps them (Settings.use_unverified). Every answer then ends with its
coverage, in the question's language: documents in scope, how many the result rests on, and which
were unverified, not disclosed or could not be read, and why.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from signatures.types import Document, DocumentFailure, Fact

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


@dataclass
class Coverage:
    """The answer's footing: the same in the JSON output as in the line the answer ends with."""

    documents_in_scope: int
    documents_used: int  # documents with at least one usable disclosed fact
    facts_used: int
    unverified: list[dict] = field(default_factory=list)  # {doc_id, symbol, field, status, reason}
    not_disclosed: list[dict] = field(default_factory=list)  # {doc_id, symbol, field}
    unreadable: list[dict] = field(default_factory=list)  # {doc_id, symbol, stage, reason}

    def to_dict(self) -> dict:
        return asdict(self)

    def line(self, question: str) -> str:
        words = WORDS["zh" if CJK.search(question or "") else "en"]
        problems = [f"{u['symbol']} ({words[u['status']]})" for u in self.unverified]
        problems += [f"{u['symbol']} ({words['unreadable']})" for u in self.unreadable]
        silent = len({u["doc_id"] for u in self.not_disclosed})
        text = words["base"].format(used=self.documents_used, total=self.documents_in_scope)
        if problems:
            text += words["unverified"].format(n=len(problems), items=words["and"].join(problems))
        if silent:
            text += words["silent"].format(n=silent)
        return text + words["end"]


def coverage_of(
    documents: dict[str, Document],
    facts: list[Fact],
    failures: list[DocumentFailure],
    use_unverified: bool = False,
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
    )
