"""The metrics on our synthetic corpus (`python -m data.synth`): its gold answers and truth rows
score perfectly against themselves, through the same loader and matcher as MuDABench."""

import json
from collections import defaultdict

import pytest

from evaluate.dataset import load_dataset, split, strip_gold
from evaluate.matching.final_match import final_match
from evaluate.matching.process import process_scores


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    synth = pytest.importorskip("collate.synth")
    out = tmp_path_factory.mktemp("synth")
    code = synth.main(
        ["--out", str(out), "--companies", "4", "--years", "2021", "2022", "--pages", "3", "-q"]
    )
    assert code == 0
    return out


def test_synthetic_gold_answers_match_themselves(corpus):
    items = load_dataset(corpus)
    assert items
    decided = 0
    for item in items:
        result = final_match(item.question, item.final_answer, item.final_answer, item.symbols)
        assert result.correct in (True, None), f"{item.question}: {result.reason}"
        decided += result.decided
    assert decided / len(items) >= 0.8


def test_truth_rows_as_facts_score_perfect_process(corpus):
    items = load_dataset(corpus)
    truth = defaultdict(dict)
    for line in (corpus / "truth.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        truth[row["doc_id"]][row["field"]] = row["value"]
    facts = {item.question_id: {doc: truth[doc] for doc in item.doc_ids} for item in items}
    scores = process_scores(items, facts)
    assert scores.micro == {"cell": 1.0, "row": 1.0, "column": 1.0}, [
        c.explanation for q in scores.per_question for c in q.cells if not c.correct
    ][:5]


def test_synthetic_items_strip_and_split(corpus):
    items = load_dataset(corpus)
    public = strip_gold(items[0]).model_dump_json()
    assert items[0].final_answer not in public and "value_" not in public
    parts = split(items, seed=3)
    assert len(parts.train) + len(parts.dev) + len(parts.test) == len(items)
