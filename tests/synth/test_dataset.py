"""dataset.json has the MuDABench shape, agrees with truth.jsonl, and its gold answers follow from the values."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import statistics

ITEM_KEYS = {"question", "metadata", "source_answer", "final_answer", "question_id"}
DOCTYPES = {"US Stock Annual Report", "A股年报", "A股ESG报告", "A股利润分配权益类公告", "A股股东大会类公告"}


def test_items_have_the_mudabench_shape(dataset, catalog):
    ids = {d["id"]: d for d in catalog}
    assert 15 <= len(dataset)
    assert len({q["question_id"] for q in dataset}) == len(dataset)
    for q in dataset:
        assert set(q) == ITEM_KEYS
        assert re.fullmatch(r"q_[0-9a-f]{16}", q["question_id"])
        blob = json.dumps({"question": q["question"], "metadata": q["metadata"]}, sort_keys=True)
        assert q["question_id"] == "q_" + hashlib.sha256(blob.encode()).hexdigest()[:16]
        assert q["metadata"] and isinstance(q["final_answer"], str) and q["final_answer"]
        assert all(isinstance(s, str) and s for s in q["source_answer"])
        assert len({m["doctype"] for m in q["metadata"]}) == 1
        for m in q["metadata"]:
            values = {k for k in m if k.startswith("value_")}
            assert set(m) == values | {"symbol", "year", "schema", "id", "doctype"}
            assert set(m["schema"]) == values and values
            doc = ids[m["id"]]
            assert (doc["symbol"], doc["year"], doc["doctype"]) == (m["symbol"], m["year"], m["doctype"])
        english = q["metadata"][0]["doctype"] == "US Stock Annual Report"
        assert q["question"].startswith("Based on US stock market") == english
        assert q["question"].startswith("针对中国A股市场") != english


def test_gold_values_match_truth(dataset, truth):
    canonical = {(t["doc_id"], t["field"]): t["value"] for t in truth}
    descriptions = {t["field"]: t["description"] for t in truth}
    for q in dataset:
        for m in q["metadata"]:
            for key, value in m.items():
                if key.startswith("value_"):
                    assert canonical[(m["id"], key)] == value
                    assert m["schema"][key] == descriptions[key]


def test_corpus_covers_the_operations(dataset, catalog):
    text = "\n".join(q["question"] for q in dataset)
    for needle in [
        "最高的三家",
        "极差",
        "标准差",
        "更换了会计事务所",
        "办公地址发生变更",
        "增长率",
        "有多少家",
        "最常见",
        "最短间隔",
        "含并列",
        "÷",
        "平均值2倍",
        "四大会计师事务所",
        "×40%",
        "改进分",
        "standard deviation",
        "growth",
        "ratio",
    ]:
        assert needle in text, needle
    assert {d["doctype"] for d in catalog} == DOCTYPES
    assert {d["symbol"] for d in catalog if d["doctype"] == "A股年报"}.isdisjoint(
        {d["symbol"] for d in catalog if d["doctype"] == "US Stock Annual Report"}
    )


def _field(q) -> str:
    return next(k for k in q["metadata"][0] if k.startswith("value_"))


def _symbols_in(answer: str) -> list[str]:
    return re.findall(r"\b(\d{6}|[A-Z]{2,4})\b", answer)


def test_top_k_answers_follow_from_the_values(dataset):
    """Recompute every single-year top-k of one metric from the metadata, independently of the generator."""
    checked = 0
    for q in dataset:
        rows = q["metadata"]
        if len({m["year"] for m in rows}) != 1 or len(rows[0]["schema"]) != 1:
            continue
        m = re.search(r"最高的(三|两)家|top (three|two) companies|highest .* in \d{4}\?", q["question"])
        if not m or "含并列" in q["question"]:
            continue
        field = _field(q)
        if not isinstance(rows[0][field], (int, float)):
            continue
        k = 3 if (m.group(1) == "三" or m.group(2) == "three" or "three" in q["question"]) else 2
        ranked = sorted(rows, key=lambda r: -r[field])
        expected = [r["symbol"] for r in ranked if r[field] >= ranked[k - 1][field]]
        assert _symbols_in(q["final_answer"])[-len(expected) :] == expected, q["question"]
        assert _symbols_in(q["final_answer"]) == expected, q["question"]  # and no extra company before them
        checked += 1
    assert checked >= 8


def test_range_std_count_change_and_gap_answers_follow_from_the_values(dataset):
    seen = set()
    for q in dataset:
        rows, question, answer = q["metadata"], q["question"], q["final_answer"]
        if "极差" in question:
            values = [r[_field(q)] for r in rows]
            assert f"{max(values) - min(values):.2f}" in answer
            seen.add("range")
        elif "标准差" in question:
            assert f"{statistics.pstdev(r[_field(q)] for r in rows):.4f}" in answer
            seen.add("std")
        elif "standard deviation" in question:
            assert f"{statistics.pstdev(r[_field(q)] for r in rows):.4f}" in answer
            seen.add("std_en")
        elif "更换了会计事务所" in question:
            firms: dict = {}
            for r in rows:
                firms.setdefault(r["symbol"], {})[r["year"]] = r["value_accounting_firm_name"]
            changed = sorted(s for s, f in firms.items() if len(set(f.values())) > 1)
            assert sorted(_symbols_in(answer)) == changed
            seen.add("change")
        elif "办公地址在" in question:
            city = re.search(r"办公地址在(.+?)的公司", question).group(1)
            n = sum(city in r["value_office_address"] for r in rows)
            assert f"共有{n}家" in answer
            seen.add("count")
        elif "最短间隔" in question:
            gaps = {
                r["symbol"]: (
                    dt.date.fromisoformat(r["value_ex_dividend_date"])
                    - dt.date.fromisoformat(r["value_record_date"])
                ).days
                for r in rows
            }
            best = min(gaps.values())
            assert f"最短间隔为{best}天" in answer
            assert sorted(_symbols_in(answer)) == sorted(s for s, g in gaps.items() if g == best)
            seen.add("gap")
        elif "临时股东大会次数" in question:
            counts = {r["symbol"]: r["value_extraordinary_shareholder_meeting_count"] for r in rows}
            line = sorted(counts.values(), reverse=True)[min(3, len(counts)) - 1]
            assert sorted(_symbols_in(answer)) == sorted(s for s, c in counts.items() if c >= line)
            seen.add("ties")
        elif "比" in question and "临时股东大会的次数" in question:
            first, last = sorted({r["year"] for r in rows})
            n = {(r["symbol"], r["year"]): r["value_extraordinary_shareholder_meeting_count"] for r in rows}
            more = sorted(s for s, y in n if y == first and n[(s, last)] > n[(s, first)])
            assert f"共有{len(more)}家" in answer and sorted(_symbols_in(answer)) == more
            seen.add("more_meetings")
        elif "平均值2倍" in question:
            values = {r["symbol"]: r["value_total_operating_cost_cny"] for r in rows}
            mean = sum(values.values()) / len(values)
            assert sorted(_symbols_in(answer.split("元，", 1)[1])) == sorted(
                s for s, v in values.items() if v > 2 * mean
            )
            seen.add("outliers")
        elif "改进分" in question:
            first, last = sorted({r["year"] for r in rows})
            flags = {(r["symbol"], r["year"]): r for r in rows}
            keys = [k for k in rows[0] if k.startswith("value_")]
            scores = {
                s: sum(not flags[(s, first)][k] and flags[(s, last)][k] for k in keys)
                for s, y in flags
                if y == first
            }
            best = max(scores.values())
            if best:
                line = sorted((v for v in scores.values() if v > 0), reverse=True)[:3][-1]
                assert sorted(_symbols_in(answer)) == sorted(
                    s for s, v in scores.items() if v >= line and v > 0
                )
            else:
                assert "没有" in answer
            seen.add("improvement")
    assert seen == {
        "range",
        "std",
        "std_en",
        "change",
        "count",
        "gap",
        "ties",
        "outliers",
        "improvement",
        "more_meetings",
    }


def test_companies_and_tickers_are_unique_and_well_formed(catalog):
    pairs = {(d["symbol"], d["company"]) for d in catalog}
    assert len({s for s, _ in pairs}) == len({c for _, c in pairs}) == len(pairs)
    for d in catalog:
        pattern = r"[A-Z]{2,4}" if d["doctype"] == "US Stock Annual Report" else r"(60[013]|00[012])\d{3}"
        assert re.fullmatch(pattern, d["symbol"]), d
