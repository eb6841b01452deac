"""The dataset opens with one question of each language, so the first few shown (the demo's) hold an
English question beside the Chinese ones; the rest keep their order (issue 32)."""

from __future__ import annotations

from collate import parsers
from data.synth.questions import languages_first

US = "US Stock Annual Report"


def _language(q: dict) -> str:
    return "en" if q["metadata"][0]["doctype"] == US else "zh"


def test_the_questions_the_demo_answers_hold_an_english_one(dataset):
    shown = parsers.demo().parse_args([]).limit  # `collate demo` answers the first --limit questions
    assert {_language(q) for q in dataset[:shown]} == {"zh", "en"}
    assert [_language(q) for q in dataset[:2]] == ["zh", "en"]


def test_only_the_leaders_move_and_a_one_language_list_keeps_its_order():
    zh = [{"metadata": [{"doctype": "A股年报"}], "n": i} for i in range(4)]
    en = [{"metadata": [{"doctype": US}], "n": 10 + i} for i in range(2)]
    assert [q["n"] for q in languages_first(zh + en)] == [0, 10, 1, 2, 3, 11]
    assert [q["n"] for q in languages_first(zh)] == [0, 1, 2, 3]
    assert languages_first([]) == []
