"""The fake analyst's code-writer: recognise the operation a question asks for and write the pandas
code for it (WriteAnalysisCode), or a simpler safe version after an error (FixAnalysisCode).

The code works on `df` (one row per document: id, symbol, year, doctype + value columns) and prints
one JSON object with the operation, the metric and the result, which the answer-writer reads back.
"""

from __future__ import annotations

import json
import re

from fakes.fields import MARGINS, RATIOS, rule_named, rules_for
from fakes.reading import chinese_number

IDENTITY = ("id", "symbol", "year", "doctype")
K_PATTERN = re.compile(
    r"(?:前|top\s*|最\S{1,4}的)\s*(\d+|[一二两三四五六七八九十])|(\d+|[一二两三四五六七八九十])\s*(?:家|个|名|companies|firms)",
    re.I,
)
THRESHOLD = re.compile(
    r"(超过|高于|大于|不低于|above|more than|greater than|over|低于|小于|below|less than|under)\s*"
    r"(-?\d+(?:\.\d+)?)\s*(%|亿|万|billion|million)?",
    re.I,
)


def years_in(text: str) -> list[int]:
    return sorted({int(y) for y in re.findall(r"(?<!\d)(20\d\d)(?!\d)", text)})


def top_k(question: str) -> int:
    m = K_PATTERN.search(question)
    if not m:
        return 3
    return chinese_number(m.group(1) or m.group(2)) or 3


def value_columns(sample_records: list[dict], columns: str) -> list[str]:
    names: list[str] = []
    for rec in sample_records or []:
        if isinstance(rec, dict):
            names += [k for k in rec if k not in IDENTITY and k not in names]
    if not names:  # no rows to look at: take snake_case names the column description mentions
        names = [
            w for w in re.findall(r"\b[a-z][a-z0-9_]{2,}\b", columns or "") if w not in IDENTITY and "_" in w
        ]
    return list(dict.fromkeys(names))


def has(question: str, *words: str) -> bool:
    q = question.lower()
    return any(w.lower() in q for w in words)


def choose_metric(question: str, cols: list[str]) -> tuple[str | None, str | None]:
    """The column to compute on, and a derived-ratio line when the question asks for a ratio of two items."""
    for key, (margin, revenue, cost) in MARGINS.items():
        if has(question, key) and revenue in cols and cost in cols:
            line = (
                f'd["{margin}"] = (pd.to_numeric(d["{revenue}"], errors="coerce") - '
                f'pd.to_numeric(d["{cost}"], errors="coerce")) / pd.to_numeric(d["{revenue}"], errors="coerce")'
            )
            return margin, line
    for key, (ratio, num, den) in RATIOS.items():
        if has(question, key) and num in cols and den in cols:
            line = (
                f'd["{ratio}"] = pd.to_numeric(d["{num}"], errors="coerce") / '
                f'pd.to_numeric(d["{den}"], errors="coerce")'
            )
            return ratio, line
    wanted = {r.name: r for r in rules_for(question)}
    present = [n for n in wanted if n in cols]
    if len(present) >= 2 and has(
        question, "之比", "÷", "比率", "ratio of"
    ):  # A与B之比 / A÷B: first over second
        low = question.lower()
        first_at = {
            n: min((low.find(w.lower()) for w in wanted[n].question_words if w.lower() in low), default=10**6)
            for n in present
        }
        num, den = sorted(present, key=lambda n: first_at[n])[:2]
        ratio = f"{num}_to_{den}"
        line = (
            f'd["{ratio}"] = pd.to_numeric(d["{num}"], errors="coerce") / '
            f'pd.to_numeric(d["{den}"], errors="coerce")'
        )
        return ratio, line
    for name in wanted:
        if name in cols:
            return name, None
    return (cols[0] if cols else None), None


def operation(question: str, metric_type: str) -> str:
    two_years = len(years_in(question)) >= 2
    if (
        two_years
        and has(question, "更换", "变更", "changed", "change of", "switched")
        and metric_type in ("string", "list")
    ):
        return "changed"
    if has(question, "极差", "range"):
        return "range_change" if two_years and has(question, "变化", "change") else "range"
    if has(question, "标准差", "standard deviation", "std"):
        return "std_change" if two_years and has(question, "变化", "change") else "std"
    if two_years and has(question, "增长", "增速", "growth", "grew", "increase"):
        return "growth"
    if has(question, "最早", "earliest"):
        return "earliest"
    if has(question, "最晚", "latest"):
        return "latest"
    if has(question, "最常见", "最多的", "出现最多", "most common", "most frequent") and metric_type in (
        "string",
        "list",
        "date",
    ):
        return "most_frequent"
    if has(question, "多少家", "几家", "how many", "number of companies"):
        return "count"
    if has(
        question,
        "最高",
        "最多",
        "最大",
        "最快",
        "最低",
        "最少",
        "最小",
        "最慢",
        "前三",
        "前五",
        "前十",
        "highest",
        "largest",
        "lowest",
        "smallest",
        "top ",
    ):
        return "top_k"
    if has(question, "哪些", "列出", "which companies", "list the", "which firms"):
        return "list"
    if has(question, "平均", "average", "mean"):
        return "mean"
    return "top_k"


def _filter_line(question: str, col: str, metric_type: str) -> str:
    m = THRESHOLD.search(question)
    if m:
        word, number, unit = m.group(1).lower(), float(m.group(2)), (m.group(3) or "").lower()
        number *= {"亿": 1e8, "万": 1e4, "billion": 1e9, "million": 1e6}.get(unit, 1)
        sign = "<" if word in ("低于", "小于", "below", "less than", "under") else ">"
        return f'd = d[pd.to_numeric(d["{col}"], errors="coerce") {sign} {number!r}]'
    if metric_type == "boolean":
        negative = has(question, "未披露", "没有", "未使用", "未经过", "not ", "没有披露")
        return f'd = d[d["{col}"].astype(str).str.lower().isin({["false", "0"] if negative else ["true", "1"]!r})]'
    return f'd = d[d["{col}"].notna()]'


def write_code(inputs: dict) -> dict:
    question = str(inputs.get("question") or "")
    cols = value_columns(inputs.get("sample_records") or [], str(inputs.get("columns") or ""))
    metric, derived = choose_metric(question, cols)
    if metric is None:
        return {"code": safe_code(question)}
    rule = rule_named(metric)
    metric_type = rule.type if rule else "number"
    op = operation(question, metric_type)
    years, k = years_in(question), top_k(question)
    ascending = (
        question.find("最低") >= 0
        or question.find("最小") >= 0
        or has(question, "lowest", "smallest", "least")
    )
    lines = ["import json", "import pandas as pd", "", "d = df.copy()"]
    if derived:
        lines.append(derived)
    col = metric
    numeric = metric_type in ("number", "integer", "percent") or derived is not None
    if numeric and op not in ("changed",):
        lines.append(f'd["{col}"] = pd.to_numeric(d["{col}"], errors="coerce")')
    head = {"operation": op, "metric": col, "years": years}
    if (
        op in ("top_k", "mean", "count", "list", "range", "std", "earliest", "latest", "most_frequent")
        and years
    ):
        lines.append(f'd = d[d["year"].isin({years[-1:] if op != "most_frequent" else years!r})]')
        head["years"] = years[-1:] if op != "most_frequent" else years
    if op == "top_k":
        lines += [
            f'd = d.dropna(subset=["{col}"]).sort_values("{col}", ascending={ascending})',
            f"k = min({k}, len(d))",
            f'cut = d["{col}"].iloc[k - 1] if k else None',
            f'top = d[d["{col}"] {"<=" if ascending else ">="} cut] if k else d',
            f'out = dict(head, order="{"asc" if ascending else "desc"}", k={k}, symbols=top["symbol"].tolist(), '
            f'values=dict(zip(top["symbol"], top["{col}"].round(6).tolist())))',
        ]
    elif op == "growth":
        y1, y2 = years[0], years[-1]
        lines += [
            f'p = d.pivot_table(index="symbol", columns="year", values="{col}", aggfunc="first")',
            f"p = p.dropna(subset=[c for c in ({y1}, {y2}) if c in p.columns]) if {y1} in p.columns and {y2} in p.columns else p.iloc[0:0]",
            f"g = ((p[{y2}] - p[{y1}]) / p[{y1}].abs()).dropna().sort_values(ascending={ascending})",
            f"k = min({k}, len(g))",
            f"top = g[g {'<=' if ascending else '>='} g.iloc[k - 1]] if k else g",
            f'out = dict(head, order="{"asc" if ascending else "desc"}", k={k}, symbols=top.index.tolist(), '
            f"values={{s: round(float(v), 6) for s, v in top.items()}})",
        ]
    elif op in ("range", "std"):
        stat = (
            f'float(d["{col}"].max() - d["{col}"].min())'
            if op == "range"
            else f'float(d["{col}"].std(ddof=0))'
        )
        lines += [f'd = d.dropna(subset=["{col}"])', f"out = dict(head, value={stat}, n=len(d))"]
        if op == "std":
            lines[-1] = f'out = dict(head, value={stat}, sample_std=float(d["{col}"].std(ddof=1)), n=len(d))'
    elif op in ("range_change", "std_change"):
        y1, y2 = years[0], years[-1]
        agg = "lambda s: s.max() - s.min()" if op == "range_change" else "lambda s: s.std(ddof=0)"
        lines += [
            f'per_year = d.dropna(subset=["{col}"]).groupby("year")["{col}"].agg({agg})',
            f"out = dict(head, by_year={{int(y): float(v) for y, v in per_year.items()}}, "
            f"value=float(per_year.get({y2}, float('nan')) - per_year.get({y1}, float('nan'))))",
        ]
    elif op in ("earliest", "latest"):
        lines += [
            f'd["{col}"] = pd.to_datetime(d["{col}"], errors="coerce")',
            f'd = d.dropna(subset=["{col}"])',
            f'best = d["{col}"].{"min" if op == "earliest" else "max"}()',
            f'top = d[d["{col}"] == best]',
            """out = dict(head, value=best.strftime("%Y-%m-%d") if len(d) else None, symbols=top["symbol"].tolist())""",
        ]
    elif op == "most_frequent":
        lines += [
            f'v = d["{col}"].explode().dropna().astype(str)',
            "counts = v.value_counts()",
            "top = counts[counts == counts.max()] if len(counts) else counts",
            "out = dict(head, values={str(a): int(b) for a, b in top.items()}, symbols=top.index.tolist())",
        ]
    elif op in ("count", "list"):
        lines += [
            _filter_line(question, col, metric_type),
            'out = dict(head, value=int(d["symbol"].nunique()), symbols=sorted(d["symbol"].unique().tolist()))',
        ]
    elif op == "changed":
        y1, y2 = years[0], years[-1]
        lines += [
            f'p = d.pivot_table(index="symbol", columns="year", values="{col}", aggfunc="first")',
            f"p = p.dropna(subset=[{y1}, {y2}]) if {y1} in p.columns and {y2} in p.columns else p.iloc[0:0]",
            f"moved = p[p[{y1}].astype(str).str.strip() != p[{y2}].astype(str).str.strip()]",
            "out = dict(head, symbols=moved.index.tolist(), value=len(moved))",
        ]
    elif op == "mean":
        lines += [f'out = dict(head, value=float(d["{col}"].mean()), n=int(d["{col}"].notna().sum()))']
    lines.insert(4, f"head = {json.dumps(head, ensure_ascii=False)}")
    lines.append("print(json.dumps(out, ensure_ascii=False, default=str))")
    return {"code": "\n".join(line for line in lines if line)}


def safe_code(question: str) -> str:
    """What a cautious analyst writes after an error: describe the data, no cleverness."""
    return "\n".join(
        [
            "import json",
            "cols = [c for c in df.columns if c not in ('id', 'symbol', 'year', 'doctype')]",
            "print(json.dumps({'operation': 'describe', 'rows': len(df), 'columns': cols,",
            "                  'symbols': sorted(df['symbol'].astype(str).unique().tolist())}, ensure_ascii=False))",
        ]
    )


def fix_code(inputs: dict) -> dict:
    return {"fixed_code": safe_code(str(inputs.get("question") or ""))}
