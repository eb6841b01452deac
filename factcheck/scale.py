"""The scale of an amount, read off its page: "(in millions, except per share amounts)" above a statement,
"($ in thousands)" over a column, 单位：万元 or （亿元） in a header, or the word right after the number
("$912 million"). One rule for every value of a table, whatever the reader wrote in its unit.

Seen with the demo reader on real 10-Ks: amounts "in millions" were scaled for Verizon (the reader's unit
said "USD millions") but not for PepsiCo and Corning (the reader's unit said nothing), so one column of
the answer's table mixed dollars and millions of dollars. The page says which; code reads it there, keeps
it on the fact with where it was read, and checks the reader's own unit against it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from factcheck.printed_values import PER_TEN, Printed, numbers
from signatures.vocabulary import CNY_SCALE_WORD, EN_SCALE_WORD, SCALE_LETTER, clean, scale_factor

# A statement of scale over a table or a column, English or Chinese.
EN_STATEMENT = re.compile(
    r"\bin\s+(thousands|millions|billions)\b(?:\s+of\s+(?:u\.s\.\s+)?dollars)?(?P<rest>[^)\n]{0,80})", re.I
)
ZH_STATEMENT = re.compile(
    r"(?:单位|金额单位|币种单位)\s*[:：]?\s*(?:人民币|美元|港币|港元)?\s*(元|千元|万元|百万元|亿元)"
    r"|[（(]\s*(?:单位\s*[:：]\s*)?(?:人民币)?\s*(千元|万元|百万元|亿元)\s*[)）]"
)
# A statement for the tables of a whole section or document, in a sentence: "Unless otherwise noted,
# tabular dollars are presented in millions" (PepsiCo's MD&A and notes; their tables print no header).
SECTION_STATEMENT = re.compile(
    r"(?:unless\s+otherwise\s+(?:noted|stated|indicated)|tabular|all\s+(?:dollar\s+)?amounts)[^.]{0,60}?"
    r"\b(?:dollars?|amounts)\s+(?:are\s+)?(?:presented\s+|shown\s+|stated\s+|expressed\s+)?in\s+"
    r"(thousands|millions|billions)",
    re.I,
)
# Each scale a statement says, and the words that make one the scale of shares, not of amounts.
SCALE_SAID = re.compile(r"\bin\s+(thousands|millions|billions)\b(\s+of\s+(?:shares|units)\b)?", re.I)
SHARES_BEFORE = re.compile(r"\b(?:shares?|units?)\s*(?:are\s+|is\s+)?$", re.I)
# Pages back a section's statement is looked for (an MD&A runs ~30 pages).
SECTION_REACH = 40
EXCEPT_PER_SHARE = re.compile(r"except\s+(?:for\s+)?(?:[\w\s,]{0,40})?(?:per[- ]share|share)", re.I)
# The nearest statement above the quote counts only within this many characters of page text (a 10-K
# statement page is ~3,000 characters; a header two pages of text away belongs to another table).
REACH = 6000
# A quoted row of a per-share figure, which "except per share amounts" leaves unscaled.
PER_SHARE_ROW = re.compile(r"per[- ](?:[a-z]+[- ]){0,2}share|每股", re.I)
# A scale word right after a printed number ("$912 million", "1.2亿元") is that number's own scale.
TAIL_WORD = re.compile(rf"\s*(?:{EN_SCALE_WORD.pattern}|{CNY_SCALE_WORD.pattern})", re.I)


@dataclass(frozen=True)
class Scale:
    factor: float  # 1e6 for "in millions", 1e4 for 万元, 1 for 元
    word: str  # as printed: "millions", "万元"
    source: str  # the printed words that state it
    except_per_share: bool = False
    page: int | None = (
        None  # the page it is printed on, when another than the value's (a section's statement)
    )


def stated_scale(text: str, at: int) -> Scale | None:
    """The scale statement nearest above position `at` of a page's text (within REACH characters)."""
    best: Scale | None = None
    best_end = -1
    for pattern in (EN_STATEMENT, ZH_STATEMENT):
        for m in pattern.finditer(text, max(0, at - REACH), at):
            word = next(g for g in m.groups()[:2] if g) if pattern is ZH_STATEMENT else _money_word(text, m)
            if word is None:  # "(shares in millions)": a scale of shares, not of amounts
                continue
            end = m.end()
            if end > best_end:
                line_end = text.find("\n", m.end())
                line = text[text.rfind("\n", 0, m.start()) + 1 : line_end if line_end >= 0 else len(text)]
                line = " ".join(line.split())  # one line, no-break spaces made plain
                best = Scale(scale_factor(word), word, line[:160], bool(EXCEPT_PER_SHARE.search(m.group(0))))
                best_end = end
    return best


def _money_word(text: str, m: re.Match) -> str | None:
    """The scale of amounts an English statement gives: its first "in thousands/millions/billions" that
    is not the shares' ("(Shares in thousands, dollars in millions)", "(in thousands of shares, ...)")."""
    statement = text[text.rfind("\n", 0, m.start()) + 1 : m.end()]
    for said in SCALE_SAID.finditer(statement):
        if not said.group(2) and not SHARES_BEFORE.search(statement[: said.start()]):
            return said.group(1)
    return None


def section_scale(pages: Mapping[int, str], number: int) -> Scale | None:
    """The nearest section statement ("tabular dollars are presented in millions") on this page or the
    SECTION_REACH pages before it: the scale of the tables that print none of their own."""
    for page in range(number, max(0, number - SECTION_REACH), -1):
        text = pages.get(page) or ""
        found = SECTION_STATEMENT.search(text)
        if found:
            words = " ".join(found.group().split())
            return Scale(
                scale_factor(found.group(1)),
                found.group(1),
                words[:160],
                "except" in text[found.end() : found.end() + 40].lower(),
                page,
            )
    return None


def own_scale(value, unit: str | None) -> tuple[float, str]:
    """The scale the fact itself states, in its value ("912 million", "1.2亿元", "$3.2B") or its unit
    ("USD millions", "万元"); (1.0, "") when it states none (元 and USD state none)."""
    text = clean(value if isinstance(value, str) else "")
    number = re.search(r"\d[\d,]*(?:\.\d+)?", text)
    if number:
        letter = SCALE_LETTER.match(text[number.end() :])
        if letter:
            return scale_factor(letter.group(1)), letter.group(1)
        word = TAIL_WORD.match(text[number.end() :])
        if word and word.group().strip() != "元":
            return scale_factor(word.group().strip()), word.group().strip()
    for source in (clean(unit),):
        found = EN_SCALE_WORD.search(source) or CNY_SCALE_WORD.search(source)
        if found and found.group() != "元":
            return scale_factor(found.group()), found.group()
    return 1.0, ""


def _reading(value) -> Printed | None:
    text = value if isinstance(value, str) else f"{value:.15g}" if isinstance(value, float) else str(value)
    found = numbers(PER_TEN.sub(" ", clean(text)))
    return found[0] if found else None


def _close(a: float, b: float, slack: float) -> bool:
    return abs(a - b) <= slack + 1e-9 * max(1.0, abs(b))


@dataclass(frozen=True)
class ScaleReading:
    ok: bool
    scale: float | None  # what the normalizer multiplies the fact's own reading by; None = not read
    source: str  # where it was read, or why it could not be
    reason: str = ""  # why it is not ok


def read_fact_scale(
    value, unit: str | None, words: str, masked: str, page_scale: Scale | None, page: int
) -> ScaleReading:
    """The scale of an amount the check found printed in `words` (the page's words at the quote;
    `masked` the same with label numbers masked), against the page's statement of scale.

    - the fact reads as the printed number times the page's scale (its unit says "millions", or it was
      converted already): scale 1, nothing left to do;
    - it reads as the printed number itself and states no scale: the page's scale (PepsiCo's "86,392");
    - it states another scale than the page's: not ok (a wrong scale, never silently kept);
    - the page states none: scale None, flagged "unread" (never scaled by guess)."""
    fact = _reading(value)
    if fact is None:
        return ScaleReading(True, None, "")
    if page_scale is not None and page_scale.except_per_share and PER_SHARE_ROW.search(words):
        # "(in millions, except per share amounts)" over "Net income per diluted share $ 2.15": as printed
        return ScaleReading(True, 1.0, f'page {page_scale.page or page}: "{page_scale.source}" (per share)')
    stated, stated_word = own_scale(value, unit)
    own = fact.value * stated
    slack = (0.5 * 10.0 ** (-fact.decimals) if fact.significant >= 2 else 0.0) * stated
    where = f"page {page_scale.page if page_scale and page_scale.page else page}"
    candidates: list[tuple[Printed, Scale | None]] = []
    for m in re.finditer(r"\d[\d,]*(?:\.\d+)?", masked):
        got = numbers(m.group())
        if not got:
            continue
        tail = TAIL_WORD.match(words[m.end() : m.end() + 12])
        own_word = tail.group().strip() if tail else ""
        scale = Scale(scale_factor(own_word), own_word, words.strip()[:160]) if own_word else page_scale
        candidates.append((got[0], scale))
    for printed, scale in candidates:
        factor = scale.factor if scale else 1.0
        tolerance = max(slack, 0.5 * 10.0 ** (-printed.decimals) * factor)
        if scale is not None and _close(own, printed.value * factor, tolerance):
            return ScaleReading(True, 1.0, f'{where}: "{scale.source}"')
    for printed, scale in candidates:
        if not stated_word and _close(fact.value, printed.value, 0.5 * 10.0 ** (-printed.decimals)):
            if scale is None:
                return ScaleReading(True, None, f"unread: no scale is stated above the quote on {where}")
            return ScaleReading(True, scale.factor, f'{where}: "{scale.source}"')
    if page_scale is None:
        return ScaleReading(True, None, f"unread: no scale is stated above the quote on {where}")
    said = f"{stated_word}" if stated_word else "no scale"
    return ScaleReading(
        False,
        None,
        f'{where}: "{page_scale.source}"',
        f'the page states amounts in {page_scale.word} ("{page_scale.source[:80]}"); the value {value!r} '
        f"with {said} does not read as the printed figure in {page_scale.word}",
    )
