"""The fake analyst's reading: find a field in retrieved passages (ExtractFacts) and convert raw
values to canonical ones (NormalizeRecords), with simple rules a careful reader would use.

It only sees what the prompt shows: passages prefixed `[page N]`, field specs, raw values.
"""

from __future__ import annotations

import re
from typing import Any

from fakes.fields import FieldRule, rule_named
from signatures.vocabulary import zh_numeral

PAGE = re.compile(r"^\s*\[page (\d+)(?:\s*-\s*\d+)?\]\s*", re.I)
NUMBER = re.compile(
    r"(?<![A-Za-z0-9.])[-−(]?\d[\d,]*(?:\.\d+)?\)?(?:\s*(?:%|％|万元|亿元|千元|百万元|元|万股|股|人|次|"
    r"million|billion|thousand))?",
    re.I,
)
DATE = re.compile(r"(\d{4})\s*(?:年|-|/|\.)\s*(\d{1,2})\s*(?:月|-|/|\.)\s*(\d{1,2})\s*日?")
UNIT_NOTE = re.compile(
    r"单位[:：]\s*(?:人民币)?\s*(千元|万元|百万元|亿元|元)|in (thousands|millions|billions)", re.I
)
ORG = re.compile(
    r"[\u4e00-\u9fffA-Za-z（）()]{2,40}?(?:会计师事务所(?:[（(]特殊普通合伙[)）])?|有限公司|有限责任公司)"
)
NEGATION = ("未", "没有", "不适用", "无", "not ")
TICKED = re.compile(r"[√☑■]\s*(是|否|有|无)")


def split_passage(passage: str) -> tuple[int | None, str]:
    m = PAGE.match(passage)
    return (int(m.group(1)), passage[m.end() :]) if m else (None, passage)


def _label_end(line: str, label: str, not_after: tuple[str, ...]) -> int:
    """Where the label ends in the line (case-insensitive), skipping sibling metrics; -1 if absent."""
    low, lab = line.lower(), label.lower()
    start = low.find(lab)
    while start >= 0:
        if not any(low[:start].endswith(p.lower()) for p in not_after):
            return start + len(lab)
        start = low.find(lab, start + 1)
    return -1


def _is_year(token: str, rest: str) -> bool:
    """Years and date parts (2021年, 12月31日) are never the value asked for."""
    digits = token.strip("()-−")
    if rest.lstrip().startswith(("年", "月", "日")):
        return True
    return digits.isdigit() and len(digits) == 4 and 1990 <= int(digits) <= 2100


# What a careful reader skips before a row's value: a regulatory minimum ("≥10.75", "不得低于10.50%") and a
# note reference ("（注 2）", the 附注 column's "七、43").
NOT_THE_VALUE = re.compile(r"(?:[≥≤＞＜><]|不得?低于|不少于|注\s*|[一二三四五六七八九十]、)\s*$")


def _first_number(text: str) -> str | None:
    for m in NUMBER.finditer(text):
        token = m.group().strip()
        if _is_year(token, text[m.end() :]) or NOT_THE_VALUE.search(text[: m.start()]):
            continue
        return token
    return None


def _after_colon(text: str) -> str:
    text = text.lstrip(" :：\t为是")
    return re.split(r"[。；;]", text, maxsplit=1)[0].strip()


def _value_from(rule_type: str, rule: FieldRule | None, line: str, rest: str, nxt: str) -> str | None:
    """The value the label introduces: read after the label, else on the next line (column-wise tables)."""
    if rule_type in ("number", "integer", "percent"):
        if rule is not None and rule.name == "pre_tax_dividend_per_share":
            m = re.search(r"每\s*10\s*股[^0-9]{0,12}(\d+(?:\.\d+)?)\s*元", line)
            if m:
                return f"每10股派{m.group(1)}元"
        return _first_number(rest) or _first_number(nxt)
    if rule_type == "date":
        m = DATE.search(rest) or DATE.search(nxt)
        return m.group(0) if m else None
    if rule_type == "boolean":
        ticked = TICKED.search(line)  # "□是 √否": the ticked box is the answer, whatever else the line says
        if ticked:
            return "否" if ticked.group(1) in "否无" else "是"
        return "否" if any(n in line for n in NEGATION) else "是"
    if rule_type == "list":
        text = _after_colon(rest) or _after_colon(nxt)
        return text or None
    if rule is not None and rule.name in ("accounting_firm_name", "assurance_org_name"):
        m = ORG.search(rest) or ORG.search(nxt) or ORG.search(line)
        if m:
            return m.group(0).lstrip("为由是")
    return _after_colon(rest) or _after_colon(nxt) or None


def _unit_of(value: str, passage: str, rule_type: str) -> str | None:
    m = re.search(r"(%|％|万元|亿元|千元|百万元|元|million|billion|thousand)$", value, re.I)
    if m:
        return m.group(1)
    if rule_type not in ("number",):
        return "%" if rule_type == "percent" else None
    note = UNIT_NOTE.search(passage)
    if note:
        return note.group(1) or f"USD {note.group(2).lower()}"
    return None


FEMALE_ROW = re.compile(r"([\u4e00-\u9fff·]{2,5})\s+\S+\s+女\s+\d{2}(?!\d)")


def _female_executives(pages: list[tuple[int | None, str]]) -> tuple[list[str], int | None, str | None]:
    """Names in executive-table rows whose gender cell says 女 (rows may run together on one line)."""
    names: list[str] = []
    first_page = quote = None
    for page, text in pages:
        for m in FEMALE_ROW.finditer(text):
            name = (
                m.group(1).lstrip("年月日")[-3:]
                if len(m.group(1).lstrip("年月日")) > 3
                else m.group(1).lstrip("年月日")
            )
            if len(name) >= 2 and name not in names:
                names.append(name)
                first_page = first_page or page
                quote = quote or m.group(0)
    return names, first_page, quote


PRIOR = ("上年", "去年", "上一年度", "上年末", "prior year", "previous year")


def _prior_before(line: str, start: int) -> bool:
    """The label is about last year ("上年末，第一大股东……持股比例为19.24%"): a distractor."""
    head = line[:start].lower()
    return any(p in head for p in PRIOR)


def _cut_prior(text: str) -> str:
    """Keep what comes before a prior-year aside ("营业总成本1,393.28亿元，上年为1,441.65亿元")."""
    low = text.lower()
    cut = min([low.find(p) for p in PRIOR if p in low] or [len(text)])
    return text[:cut]


def _found(name: str, value: str, text: str, rule_type: str, line: str, page: int | None) -> dict[str, Any]:
    return {
        "field": name,
        "disclosed": True,
        "value": value,
        "unit": _unit_of(value, text, rule_type),
        "quote": line.strip()[:200],
        "page": page,
    }


def extract_field(spec: dict, passages: list[str]) -> dict[str, Any]:
    """One ExtractedValue (as a dict) for one field spec, from the passages, best passage first."""
    name, description = spec.get("name", ""), spec.get("description", "")
    rule = rule_named(name, description)
    rule_type = spec.get("type") or (rule.type if rule else "string")
    labels = rule.filing_labels() if rule else (description.rstrip("。."),)
    not_after = rule.not_after if rule else ()
    pages = [split_passage(p) for p in passages]
    if rule is not None and rule.name.startswith("female_executive"):
        names, page, quote = _female_executives(pages)
        if names:
            return {
                "field": name,
                "disclosed": True,
                "value": "、".join(names) if rule.type == "list" else str(len(names)),
                "unit": None if rule.type == "list" else "人",
                "quote": quote,
                "page": page,
            }
    column_reads = []  # (page, text, line, next line): label found, value perhaps on the next line
    for label in labels:
        for page, text in pages:
            lines = text.splitlines()
            for i, line in enumerate(lines):
                end = _label_end(line, label, not_after)
                if end < 0 or _prior_before(line, end - len(label)):
                    continue
                rest = _cut_prior(line[end:])
                value = _value_from(rule_type, rule, line, rest, "")
                if value:
                    return _found(name, value, text, rule_type, line, page)
                column_reads.append((page, text, line, lines[i + 1] if i + 1 < len(lines) else ""))
    for page, text, line, nxt in column_reads:  # column-wise tables: the value sits under its label
        value = _value_from(rule_type, rule, line, "", _cut_prior(nxt))
        if value:
            return _found(name, value, text, rule_type, nxt, page)
    return {"field": name, "disclosed": False, "value": None, "unit": None, "quote": None, "page": None}


def extract_facts(inputs: dict) -> dict[str, Any]:
    specs = inputs.get("field_specs") or []
    passages = [p if isinstance(p, str) else str(p) for p in inputs.get("passages") or []]
    return {"values": [extract_field(s if isinstance(s, dict) else {}, passages) for s in specs]}


# ---- NormalizeRecords ----------------------------------------------------------------------------
SCALES = (
    ("百万元", 1e6),
    ("亿", 1e8),
    ("万", 1e4),
    ("千元", 1e3),
    ("billion", 1e9),
    ("million", 1e6),
    ("thousand", 1e3),
)


def to_number(value: Any, unit: str | None, quote: str | None, field_type: str) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
        text = ""
    else:
        text = str(value or "")
        m = re.search(r"[-−(]?\d[\d,]*(?:\.\d+)?\)?", text.split("派")[-1] if "10股" in text else text)
        if not m:
            return None
        token = m.group()
        negative = token.startswith(("-", "−")) or (token.startswith("(") and token.endswith(")"))
        number = float(token.strip("()-−").replace(",", "")) * (-1 if negative else 1)
    context = f"{text} {unit or ''}".lower()
    if "10股" in context or "per 10 shares" in context:
        return number / 10
    if field_type == "percent":
        return number if ("%" in context or "％" in context or abs(number) > 1) else number * 100
    for word, factor in SCALES:
        if word in context:
            return number * factor
    return number


def normalize_value(item: dict, spec: dict | None) -> Any:
    value, unit, quote = item.get("value"), item.get("unit"), item.get("quote")
    field_type = (spec or {}).get("type", "string")
    if value is None:
        return None
    text = str(value).strip()
    if field_type in ("number", "percent"):
        return to_number(value, unit, quote, field_type)
    if field_type == "integer":
        number = to_number(value, unit, quote, field_type)
        return None if number is None else int(round(number))
    if field_type == "date":
        m = DATE.search(text)
        return f"{int(m.group(1)):04d}-{int(m.group(2)):02d}-{int(m.group(3)):02d}" if m else None
    if field_type == "boolean":
        if isinstance(value, bool):
            return value
        return not any(text.lower().startswith(n) for n in ("否", "no", "false", "未", "无", "不"))
    if field_type == "list":
        if isinstance(value, list):
            return [str(v) for v in value]
        return [p for p in re.split(r"\s*[、,，;；/]\s*|和|与|及", text) if p]
    return text


def normalize_records(inputs: dict) -> dict[str, Any]:
    specs = {s.get("name"): s for s in inputs.get("field_specs") or [] if isinstance(s, dict)}
    items = [i for i in inputs.get("items") or [] if isinstance(i, dict)]
    return {
        "values": [
            {"key": i.get("key"), "value": normalize_value(i, specs.get(i.get("field")))} for i in items
        ]
    }


def chinese_number(text: str) -> int | None:
    """三 -> 3, 十 -> 10, 5 -> 5 (for 'top three' style counts)."""
    if text.isdigit():
        return int(text)
    return zh_numeral(text)
