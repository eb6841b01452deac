"""Loading, merging, stripping, splitting and hashing MuDABench-format datasets."""

import json
from pathlib import Path

import pytest

from retrievers.dataset import DatasetError, dataset_hash, load_dataset, split, strip_gold

MUDABENCH = Path(__file__).resolve().parents[3] / "shared" / "mudabench"
DOCTYPES = ["A股年报", "A股ESG报告", "US Stock Annual Report"]


def _row(i: int, doctype: str, **values) -> dict:
    return {
        "id": f"doc-{i}",
        "symbol": f"{600000 + i}",
        "year": 2021,
        "doctype": doctype,
        "schema": {k: "desc" for k in values},
        **values,
    }


def _item(qid: str, doctype: str, n_docs: int = 2, answer: str = "答案", start: int = 0) -> dict:
    rows = [_row(start + j, doctype, value_x_pct=float(j)) for j in range(n_docs)]
    return {
        "question_id": qid,
        "question": f"问题 {qid}",
        "metadata": rows,
        "source_answer": ["s"],
        "final_answer": answer,
    }


def _write(tmp_path, items) -> Path:
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    return path


def test_load_typed_items_and_folder_form(tmp_path):
    _write(tmp_path, [_item("q1", "A股年报"), _item("q2", "US Stock Annual Report")])
    items = load_dataset(tmp_path)  # DIR/dataset.json, as data.synth writes it
    assert [it.question_id for it in items] == ["q1", "q2"]
    assert items[0].metadata[1].values == {"value_x_pct": 1.0}
    assert items[0].metadata[0].schema_ == {"value_x_pct": "desc"}
    assert items[1].doctype == "US Stock Annual Report"
    assert items[0].symbols == ["600000", "600001"]


def test_duplicate_ids_are_merged(tmp_path):
    path = _write(
        tmp_path, [_item("q1", "A股年报"), _item("q2", "A股年报"), _item("q1", "A股年报", n_docs=3)]
    )
    items = load_dataset(path)
    assert [it.question_id for it in items] == ["q1", "q2"]
    assert items[0].doc_ids == ["doc-0", "doc-1", "doc-2"]  # rows unioned by id, first order kept


def test_strip_gold_leaves_nothing_gold():
    from retrievers.dataset import DatasetItem, GoldRow

    item = DatasetItem(
        question_id="q",
        question="Which?",
        final_answer="SECRET-ANSWER",
        source_answer=["SECRET-SOURCE"],
        metadata=[
            GoldRow(
                id="d",
                symbol="ABC",
                year=2022,
                doctype="US Stock Annual Report",
                schema={"value_k": "SECRET-SCHEMA"},
                values={"value_k": 987654.321},
            )
        ],
    )
    public = strip_gold(item)
    dumped = public.model_dump_json()
    for secret in ("SECRET", "987654", "value_k", "schema", "final_answer", "source_answer"):
        assert secret not in dumped
    assert public.doc_ids == ["d"]
    assert public.documents[0].model_dump() == {
        "id": "d",
        "symbol": "ABC",
        "year": 2022,
        "doctype": "US Stock Annual Report",
    }


def test_split_is_seeded_disjoint_and_stratified(tmp_path):
    raw = [_item(f"q{i:02d}", DOCTYPES[i % 3], start=10 * i) for i in range(30)]
    items = load_dataset(_write(tmp_path, raw))
    first, again, other = split(items, seed=7), split(items, seed=7), split(items, seed=8)
    ids = lambda part: [it.question_id for it in part]  # noqa: E731
    assert ids(first.train) == ids(again.train) and ids(first.test) == ids(again.test)
    assert ids(first.train) != ids(other.train)
    everything = ids(first.train) + ids(first.dev) + ids(first.test)
    assert sorted(everything) == sorted(it.question_id for it in items)  # a partition
    for part, expected in ((first.train, 6), (first.dev, 2), (first.test, 2)):
        for doctype in DOCTYPES:
            assert sum(it.doctype == doctype for it in part) == expected  # 10 per type: 6/2/2
    with pytest.raises(ValueError, match="sum"):
        split(items, fractions=(0.5, 0.5, 0.5))


def test_hash_ignores_order_and_sees_content(tmp_path):
    a = load_dataset(_write(tmp_path, [_item("q1", "A股年报"), _item("q2", "A股年报")]))
    b = list(reversed(a))
    c = load_dataset(_write(tmp_path, [_item("q1", "A股年报"), _item("q2", "A股年报", answer="另一个")]))
    assert dataset_hash(a) == dataset_hash(b)
    assert dataset_hash(a) != dataset_hash(c)
    assert len(dataset_hash(a)) == 16


@pytest.mark.parametrize(
    "content, message",
    [
        ("{not json", "not valid JSON"),
        ('{"question_id": "q"}', "expected a JSON list"),
        ('[{"question_id": "q"}]', "missing"),
        (
            '[{"question_id": "q", "question": "x", "final_answer": "y", "metadata": [{"id": "d"}]}]',
            "metadata row",
        ),
    ],
)
def test_bad_files_name_the_fix(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DatasetError, match=message):
        load_dataset(path)
    with pytest.raises(DatasetError, match="no such dataset"):
        load_dataset(tmp_path / "absent.json")


def test_real_mudabench_duplicates_merge_and_split():
    path = MUDABENCH / "simple.json"
    if not path.exists():
        pytest.skip(f"{path} absent")
    raw = json.loads(path.read_text(encoding="utf-8"))
    items = load_dataset(path)
    assert len(raw) == 166 and len(items) == 164  # items 140/159 and 141/160 share ids (NOTES.md)
    parts = split(items, seed=0)
    for part in (parts.train, parts.dev, parts.test):
        assert {it.doctype for it in part} == {it.doctype for it in items}  # all five doctypes everywhere


def test_evaluate_is_this_repository_not_the_pypi_package():
    import evaluate

    assert Path(evaluate.__file__).resolve().parent == Path(__file__).resolve().parents[2] / "evaluate"
