"""What of a question is searched: its content, not its instructions to the answerer.

A question often comes wrapped in instructions: a role to play ("You are an investment banker",
"假设你是一名证券分析师"), the answer's form ("Answer in USD millions", "round to two decimal places",
"保留两位小数", "If X is not a useful metric, state that and explain why") and where to look ("Please
utilize information provided primarily within the balance sheet"). Their words rank chunks that share
them (an "internet connection" in a telecom's 10-K, "analyst" in the forward-looking statements) and
dilute the embedding, so they are dropped before retrieval. Where to look is content: the sources an
instruction names ("the balance sheet and the cash flow statement") are kept.

Rules on the shape of instructions, in English and Chinese, never on any question or filer:
- a sentence that asks nothing ("?") and plays a role, or speaks of answering ("Round your answer",
  "Address the question by"), or says what to write when something is missing ("If ..., state that"),
  keeps only the sources it names (after "in/within/from/using the", or a colon);
- a question's leading "Based on / According to / By drawing conclusions from ... the X," keeps "the X";
- a parenthetical about units or rounding goes, and so does "Here's the question:".
The rest of the text is left as written. When nothing would be left, the query is searched as given.
"""

from __future__ import annotations

import re

# a role for the answerer to play
_ROLE = re.compile(
    r"\b(you are|you're|you’re|assume you are|imagine you are|as if you (are|were)|act(ing)? as"
    r"|pretend(ing)? (to be|you are)|assuming the (perspective|role|position) of|from the perspective of"
    r"|in the role of|put yourself in)\b",
    re.I,
)
# words that speak of answering, not of the subject: "Round your answer", "Address the question by",
# "Calculate what was asked", "base your judgments on". A sentence without them ("Calculate EBITDA using
# operating income and D&A", "Explain the drivers of the margin change") is content, imperative or not.
_ANSWERING = re.compile(
    r"\b(answer\w*|questions?|asked|respond\w*|responses?|solutions?|reply|round(ed|ing)?|decimals?"
    r"|your (judge?ments?|analysis|calculations?|work))\b",
    re.I,
)
# "Please utilize information provided primarily within the balance sheet": a sentence about where to look
_WHERE_TO_LOOK = re.compile(
    r"^(please\s+)?(only\s+)?(utiliz\w*|use|rely|base|refer|consult|look at)\b.*\s(the|its)\s", re.I
)
# "If X is not useful/disclosed ..., (then) state that / state 0 / say so / explain why"
# what is instructed is the consequent; the condition names the subject and is kept
_CONDITIONAL = re.compile(
    r"^if\s+(?P<condition>.*?),?\s*(then\s+)?(please\s+)?(state|say|write|answer|respond|return|explain|indicate"
    r"|mention)\b.*$",
    re.I,
)
# where an instruction names its sources: what follows is kept ("... shown within the balance sheet")
_SOURCE = re.compile(
    r"\b(?:within|in|from|on|using|use|utiliz\w*|relying on|into account)\s+(?=(?:the|its|their|a|an)\s)"
    r"|:\s*",
    re.I,
)
# a question's opening clause that restricts the sources: "Based on the information provided primarily in
# the balance sheet, what is ..." keeps "the balance sheet"
_LEADING_SOURCE = re.compile(
    r"^(based on|according to|by (drawing conclusions from|using|utilizing|relying on|looking at|referring to)"
    r"|taking into account|using|utilizing|relying on|drawing on|with reference to|referring to|from)\b"
    r"([^,?]*),\s*",
    re.I,
)
# "(in units of percents and round to one decimal place)", "(in USD millions)", "(rounded)"
_FORMAT_PARENS = re.compile(
    r"\s*\((?=[^()]*\b(round\w*|decimals?|units? of|in (usd|us\$|\$|eur|rmb|cny|percent\w*|millions|billions"
    r"|thousands)|percent(age)?s?|millions|billions|thousands)\b)[^()]*\)",
    re.I,
)
_PREAMBLE = re.compile(r"^(here(’|')?s|here is|this is) the question\s*:?\s*|^(the )?question\s*:\s*", re.I)
_SENTENCE = re.compile(r"(?<=[.?!])\s+(?=[\"“(]?[A-Z])|(?<=[。？！；])")

# Chinese: a role, the unit and rounding of the answer, and an instruction to answer
_ZH_ROLE = re.compile(
    r"(假设|假如|设想|想象)?(你|您)(是|作为|扮演)[^，,。；;：:]*[，,。；;：:]"
    r"|作为一?[名位个]?[^，,。；;]{0,12}(分析师|投资者|研究员|顾问|专家|经理|银行家)[，,]"
)
_ZH_FORMAT = re.compile(
    r"[（(][^（）()]*(单位|保留|小数|四舍五入|精确到)[^（）()]*[）)]"
    r"|(请)?(以|用)[^，,。；;]{0,8}为单位[，,。；;]?"
    r"|(请)?(结果|答案|数值)?(保留|精确到)[^，,。；;]{0,8}(位小数|小数点后\S{0,4}|位)[，,。；;]?"
    r"|(结果|答案)?四舍五入[^，,。；;]*[，,。；;]?"
    r"|单位[:：为][^，,。；;]*[，,。；;]?"
    r"|(请)?(简要|简单|详细)?(说明|解释)(原因|理由)[。]?$"
    r"|(请)?(直接)?(给出|写出)(答案|结果|数值)[。]?"
)
# "请根据2022年年报中的合并利润表回答：" keeps "2022年年报中的合并利润表"
_ZH_SOURCE = re.compile(
    r"(请)?(仅)?(根据|依据|基于|参考|利用|使用)([^，,。；;：:]*?)(中的)?(信息|数据|内容)?(回答|计算|作答)?[，,：:]"
)
_ZH_ASK = re.compile(r"(请)(回答|计算|作答)(以下|下列)?(问题)?[：:，,]?|回答(以下|下列)问题[：:，,]?")


def strip_instructions(query: str) -> str:
    """`query` without the instructions to its answerer; `query` itself when nothing else is left."""
    text = " ".join(query.split())
    kept = _strip_chinese(text)
    sentences = [s for s in _SENTENCE.split(kept) if s.strip()]
    content = " ".join(filter(None, (_content(s) for s in sentences))).strip()
    return content if re.search(r"\w", content) else query


def _content(sentence: str) -> str:
    sentence = _PREAMBLE.sub("", sentence.strip())
    sentence = _FORMAT_PARENS.sub("", sentence)
    if sentence.endswith("?") and not _ROLE.search(sentence.split(",")[0]):
        return _LEADING_SOURCE.sub(lambda m: _sources(m.group(3)) + " ", sentence)
    conditional = _CONDITIONAL.match(sentence)
    if conditional and not _ROLE.search(sentence):
        return conditional.group("condition")
    if _ROLE.search(sentence) or _ANSWERING.search(sentence) or _WHERE_TO_LOOK.match(sentence):
        return _sources(sentence)
    return sentence


def _sources(instruction: str) -> str:
    """What an instruction names after its last "in/within/from/using the ..." or colon: "" when nothing."""
    cuts = list(_SOURCE.finditer(instruction))
    if not cuts:
        return ""
    tail = instruction[cuts[-1].end() :].strip()
    return re.sub(r"[.,;:!]+$", "", tail)


def _strip_chinese(text: str) -> str:
    if not re.search(r"[\u4e00-\u9fff]", text):
        return text
    text = _ZH_ROLE.sub("", text)
    text = _ZH_FORMAT.sub("", text)
    text = _ZH_SOURCE.sub(lambda m: m.group(4) + " ", text)
    return _ZH_ASK.sub("", text).strip()
