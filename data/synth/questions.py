"""All gold questions of a corpus, in MuDABench format, computed from the generated values by code."""

from __future__ import annotations

from .fields import language
from .qkit import Doc
from .questions_annual import annual_questions
from .questions_esg import esg_questions
from .questions_events import dividend_questions, meeting_questions
from .questions_us import us_questions


def build_questions(docs: list[Doc], years: list[int]) -> list[dict]:
    groups: dict = {}
    for d in sorted(docs, key=lambda d: (d.symbol, d.year)):
        groups.setdefault((d.doctype, d.year), []).append(d)
    years = sorted(years)
    out: list[dict] = []
    for make in (annual_questions, esg_questions, dividend_questions, meeting_questions, us_questions):
        out += make(groups, years)
    seen, unique = set(), []
    for q in out:  # the same question over the same rows twice would be a duplicate id
        if q["question_id"] not in seen:
            seen.add(q["question_id"])
            unique.append(q)
    return languages_first(unique)


def languages_first(questions: list[dict]) -> list[dict]:
    """The first question of each language leads, then the rest in their order: the first few a reader is
    shown (`collate demo` answers the first 10, `--limit N` any first N) hold an English question beside
    the Chinese ones, not 33 Chinese questions before the first English one. A corpus of one language
    keeps its order. The split and the dataset hash do not depend on this order (evaluate/dataset.py)."""
    leaders: dict[str, dict] = {}
    for q in questions:
        leaders.setdefault(language(q["metadata"][0]["doctype"]), q)
    first = list(leaders.values())
    return first + [q for q in questions if all(q is not lead for lead in first)]
