"""A rule-based fake analyst LM: answers each project signature from the prompt alone.

Honest, not an oracle: it never reads truth.jsonl, gold values or answers. It reads the question,
the catalog summary, passages and records the prompt shows, and applies the rules in `fields`,
`reading` and `coding`. On the synthetic corpus that gives meaningful, not perfect, answers.

    brain = Brain()
    reply_text = brain(messages, model)      # a FakeLMServer responder
    brain.counts                              # calls per signature kind
"""

from __future__ import annotations

import json
import re
import threading
import zlib
from collections import Counter
from typing import Any

from fakes.chat_format import ParsedPrompt, format_reply, kind_of_prompt, parse_prompt
from fakes.coding import fix_code, operation, write_code, years_in
from fakes.fields import DOCTYPES, US_ANNUAL, FieldRule, rule_named, rules_for
from fakes.reading import extract_facts, normalize_records
from fakes.server import Declined

CJK = re.compile(r"[\u4e00-\u9fff]")

# What the reader says instead of guessing, when a question has no rule of its or the catalog in scope
# holds none of the demo corpus's doctypes. On eight real 10-Ks it answered "the latest operating
# revenue is 1970-01-01 (VZ)", exit 0; a rule-based reader that cannot read a question must say so.
CANNOT_ANSWER = "the demo reader cannot answer this: it is rule-based, not a language model; set COLLATE_LM"


class CannotAnswer(Declined):
    """The reader declines a prompt outside its rules; the server turns it into a refused request (400)."""

    def __init__(self, why: str):
        super().__init__(f"{CANNOT_ANSWER} ({why})")


def is_chinese(text: str) -> bool:
    return bool(CJK.search(text or ""))


# ---- PlanQuestion --------------------------------------------------------------------------------
def catalog_values(catalog: str) -> tuple[list[str], list[int], list[str]]:
    """Doctypes, years and symbols the catalog summary shows (whatever its layout)."""
    doctypes = [d for d in DOCTYPES if d in catalog]
    years = years_in(catalog)
    symbols = (
        re.findall(r"(?<![A-Za-z0-9])(\d{6}|[A-Z]{1,5})(?![A-Za-z0-9])", catalog.split("symbols", 1)[-1])
        if "symbols" in catalog
        else []
    )
    return doctypes, years, symbols


def pick_doctype(rules: list[FieldRule], doctypes: list[str], question: str) -> str | None:
    votes = Counter(r.doctype for r in rules if not doctypes or r.doctype in doctypes)
    if votes:
        return votes.most_common(1)[0][0]
    if len(doctypes) == 1:
        return doctypes[0]
    wanted = [d for d in doctypes if (d == US_ANNUAL) != is_chinese(question)]
    return wanted[0] if wanted else None


def plan(inputs: dict) -> dict:
    question, catalog = str(inputs.get("question") or ""), str(inputs.get("catalog") or "")
    feedback = str(inputs.get("feedback") or "").strip()
    doctypes, catalog_years, catalog_symbols = catalog_values(catalog)
    if "doctype" in catalog and not doctypes:  # the collection is not the demo corpus's kind of filing
        raise CannotAnswer("its rules read only the demo corpus's filings, and none is in scope")
    rules = rules_for(question)
    if not rules:
        raise CannotAnswer("no rule of its knows the field this question asks for")
    if operation(question, rules[0].type) in ("earliest", "latest") and all(r.type != "date" for r in rules):
        # its code takes "earliest"/"latest" as the earliest or latest date: over revenue that printed
        # "the latest operating revenue is 1970-01-01" for "highest revenue in its latest fiscal year"
        raise CannotAnswer("its rules read 'earliest' and 'latest' only of dates")
    doctype = pick_doctype(rules, doctypes, question)
    rules = [r for r in rules if doctype is None or r.doctype == doctype] or rules
    years = years_in(question)
    if feedback and catalog_years:  # a restriction matched nothing: keep only years the catalog has
        years = [y for y in years if y in catalog_years]
    symbols = [s for s in re.findall(r"(?<!\d)(\d{6})(?!\d)", question) if s in catalog_symbols]
    fields = [{"name": r.name, "description": r.description, "type": r.type, "unit": r.unit} for r in rules]
    hints = " ".join(dict.fromkeys(r.hint for r in rules if r.hint))
    if is_chinese(question):
        query = "该文件披露的" + "、".join(f["description"].rstrip("。") for f in fields) + "是多少？" + hints
    else:
        query = (
            "What does the filing report for "
            + ", ".join(f["description"].rstrip(".") for f in fields)
            + "?"
            + hints
        )
    restriction = {
        "doctypes": [doctype] if doctype else None,
        "years": years or None,
        "symbols": symbols or None,
    }
    return {
        "plan": {"subqueries": [{"query": query, "restriction": restriction, "fields": fields}]},
        "reasoning": f"The question needs {', '.join(f['name'] for f in fields)} from {doctype or 'any'} filings.",
    }


# ---- WriteAnswer ---------------------------------------------------------------------------------
UNIT_TEXT = {"CNY": ("元", " CNY"), "USD": ("美元", " USD"), "percent": ("%", "%")}


def _metric_words(metric: str, zh: bool) -> tuple[str, str]:
    rule = rule_named(metric)
    if rule is None and "_to_" in metric:  # a ratio the code derived: "A与B之比" / "A to B ratio"
        num, den = metric.split("_to_", 1)
        a, b = _metric_words(num, zh)[0], _metric_words(den, zh)[0]
        return (f"{a}与{b}之比" if zh else f"ratio of {a} to {b}"), ""
    if rule is None:
        return metric.replace("_", " "), ""
    words = rule.description.rstrip("。.")
    if zh and not is_chinese(words):
        words = metric.replace("_", " ")
    unit = UNIT_TEXT.get(rule.unit, ("", ""))[0 if zh else 1]
    return words, unit


def _number(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.2f}" if abs(value) >= 1 else f"{value:.4f}"
    return str(value)


def answer_text(question: str, result: str, missing: list) -> str:
    zh = is_chinese(question)
    try:
        data = json.loads(result)
    except (TypeError, ValueError):
        data = None
    if not isinstance(data, dict) or "operation" not in data:
        text = f"根据数据分析，结果为：{result}" if zh else f"Based on the data, the result is: {result}"
        if str(result).startswith("ERROR"):
            text = "无法完成计算：" + str(result) if zh else "The computation failed: " + str(result)
    else:
        text = _sentence(data, zh)
    if missing:
        names = "、".join(map(str, missing)) if zh else ", ".join(map(str, missing))
        text += (
            f"（注意：以下文档未能读取：{names}）"
            if zh
            else f" (Note: these documents could not be read: {names}.)"
        )
    return text


def _sentence(data: dict, zh: bool) -> str:
    op, years = str(data.get("operation")), data.get("years") or []
    words, unit = _metric_words(str(data.get("metric") or ""), zh)
    symbols = [str(s) for s in data.get("symbols") or []]
    listed = ("、" if zh else ", ").join(symbols) or ("无" if zh else "none")
    k = data.get("k") or len(symbols)
    low = data.get("order") == "asc"
    value = data.get("value")
    if zh:
        when = (
            f"根据{years[0]}年到{years[-1]}年数据分析，"
            if len(years) > 1
            else f"根据{years[0]}年数据分析，"
            if years
            else "根据数据分析，"
        )
        ties = "（含并列）" if symbols and len(symbols) > int(k) else ""
        by_op = {
            "top_k": f"{words}{'最低' if low else '最高'}的{k}家公司股票代码分别是：{listed}{ties}。",
            "growth": f"{words}增长率{'最慢' if low else '最快'}的{k}家公司股票代码分别是：{listed}{ties}。",
            "range": f"知识库中公司{words}的极差为{_number(value)}{unit}。",
            "range_change": f"{words}极差的变化量为{_number(value)}{unit}。",
            "std": f"知识库中公司{words}的标准差为{_number(value)}{unit}。",
            "std_change": f"{words}标准差的变化量为{_number(value)}{unit}。",
            "count": f"符合条件的公司共有{value}家，股票代码为：{listed}。",
            "list": f"符合条件的公司股票代码有：{listed}。",
            "changed": f"更换了{words}的公司股票代码有：{listed}。",
            "earliest": f"{words}最早的是{value}，公司股票代码：{listed}。",
            "latest": f"{words}最晚的是{value}，公司股票代码：{listed}。",
            "most_frequent": f"最常见的{words}是：{listed}。",
            "mean": f"{words}的平均值为{_number(value)}{unit}。",
        }
        return when + by_op.get(op, f"结果为：{json.dumps(data, ensure_ascii=False)}")
    when = (
        f"Based on FY{years[0]} to FY{years[-1]} data, "
        if len(years) > 1
        else f"Based on FY{years[0]} data, "
        if years
        else "Based on the data, "
    )
    ties = " (including ties)" if symbols and len(symbols) > int(k) else ""
    by_op = {
        "top_k": f"the {k} companies with the {'lowest' if low else 'highest'} {words} are: {listed}{ties}.",
        "growth": f"the {k} companies with the {'slowest' if low else 'fastest'} growth in {words} are: {listed}{ties}.",
        "range": f"the range of {words} is {_number(value)}{unit}.",
        "range_change": f"the change in the range of {words} is {_number(value)}{unit}.",
        "std": f"the standard deviation of {words} is {_number(value)}{unit}.",
        "std_change": f"the change in the standard deviation of {words} is {_number(value)}{unit}.",
        "count": f"{value} companies qualify: {listed}.",
        "list": f"the companies that qualify are: {listed}.",
        "changed": f"the companies whose {words} changed are: {listed}.",
        "earliest": f"the earliest {words} is {value} ({listed}).",
        "latest": f"the latest {words} is {value} ({listed}).",
        "most_frequent": f"the most common {words} is: {listed}.",
        "mean": f"the average {words} is {_number(value)}{unit}.",
    }
    return when + by_op.get(op, f"the result is {json.dumps(data)}")


def answer(inputs: dict) -> dict:
    missing = inputs.get("missing") or []
    return {
        "answer": answer_text(
            str(inputs.get("question") or ""),
            str(inputs.get("result") or ""),
            missing if isinstance(missing, list) else [missing],
        )
    }


# ---- JudgeAnswer ---------------------------------------------------------------------------------
KEY_TOKEN = re.compile(r"(?<![A-Za-z0-9.])(\d{6}|[A-Z]{1,5}|-?\d+(?:\.\d+)?)(?![A-Za-z0-9])")


def judge(inputs: dict) -> dict:
    gold, model = str(inputs.get("gold_answer") or ""), str(inputs.get("model_answer") or "")
    squash = lambda s: re.sub(r"[\s,，。、:：%()（）]", "", s).lower()  # noqa: E731
    keys = [k for k in KEY_TOKEN.findall(gold) if not re.fullmatch(r"20\d\d", k)]
    model_numbers = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", model.replace(",", ""))]

    def present(key: str) -> bool:
        if key in model:
            return True
        if re.fullmatch(r"\d{6}|[A-Z]{1,5}", key):  # stock codes and tickers match exactly
            return False
        try:
            target = float(key)
        except ValueError:
            return False
        return any(abs(n - target) <= max(0.006, abs(target) * 0.001) for n in model_numbers)

    lost = [k for k in keys if not present(k)]
    correct = not lost if keys else squash(gold) in squash(model)
    reason = (
        "all key facts of the gold answer appear"
        if correct
        else f"missing from the answer: {', '.join(lost) or gold[:40]}"
    )
    return {"correct": correct, "reason": reason}


# ---- rewording (issue 14) --------------------------------------------------------------------------
# How a real planner words one field differently from question to question: a unit in brackets, a
# period word, an article, a note. Same field, same name, type and unit; only the description moves.
ZH_REWORDINGS = ("{d}", "{d}（{u}）", "期末{d}", "报告期末{d}", "{d}，年末")
EN_REWORDINGS = ("{d}", "{d} at year end", "the {d}", "{d} (as reported)", "{D}")
UNIT_WORDS = {"percent": "%", "CNY": "元", "USD": "USD", "count": "个", "people": "人", "shares": "股"}


def reword(description: str, unit: str, question: str, seed: int) -> str:
    """One of the wordings, chosen by (seed, question, description): stable for a question, varied across them."""
    bare = description.rstrip("。.")
    variants = EN_REWORDINGS if bare.isascii() else ZH_REWORDINGS
    pick = zlib.crc32(f"{seed}|{question}|{description}".encode()) % len(variants)
    return variants[pick].format(d=bare, D=bare[:1].upper() + bare[1:], u=UNIT_WORDS.get(unit, "单位"))


def reworded_plan(produced: dict, question: str, seed: int) -> dict:
    plan = json.loads(json.dumps(produced["plan"]))
    for sq in plan["subqueries"]:
        for f in sq["fields"]:
            f["description"] = reword(f["description"], f["unit"], question, seed)
    return {**produced, "plan": plan}


# ---- dispatch ------------------------------------------------------------------------------------
HANDLERS = {
    "plan": plan,
    "extract": extract_facts,
    "normalize": normalize_records,
    "write_code": write_code,
    "fix_code": fix_code,
    "answer": answer,
    "judge": judge,
}


def default_output(type_name: str) -> Any:
    """A harmless value for an output the handler does not produce (e.g. a prepended `reasoning`)."""
    return {"bool": False, "int": 0, "float": 0.0}.get(type_name, [] if type_name.startswith("list") else "")


class Brain:
    """The responder: messages -> reply text in the adapter's format. Thread-safe (no shared state but counts)."""

    def __init__(self, reword_seed: int | None = None):
        """reword_seed: word each plan's field descriptions the way a real planner varies them
        (None: the rule's own description, every time)."""
        self.counts: Counter = Counter()
        self.reword_seed = reword_seed
        self._lock = threading.Lock()

    def outputs(self, parsed: ParsedPrompt) -> dict[str, Any]:
        kind = kind_of_prompt(parsed)
        with self._lock:
            self.counts[kind] += 1
        produced = HANDLERS.get(kind, lambda _inputs: {})(parsed.inputs)
        if kind == "plan" and self.reword_seed is not None:
            produced = reworded_plan(produced, str(parsed.inputs.get("question") or ""), self.reword_seed)
        out = {}
        for name in parsed.output_fields:
            if name in produced:
                out[name] = produced[name]
            elif name == "reasoning":
                out[name] = f"Following the rules for a {kind} call."
            else:
                out[name] = default_output(parsed.output_types.get(name, "str"))
        return out

    def __call__(self, messages: list[dict], model: str = "fake-brain") -> str:
        parsed = parse_prompt(messages)
        return format_reply(self.outputs(parsed), as_json=parsed.wants_json)
