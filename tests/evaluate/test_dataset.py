"""Loading, merging, stripping, splitting and hashing MuDABench-format datasets."""

import json
from pathlib import Path

import pytest

from evaluate.dataset import DatasetError, dataset_hash, load_dataset, split, strip_gold

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
    from evaluate.dataset import DatasetItem, GoldRow

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
        (  # int(True) is 1: a year of 1 selected no document, silently (issue 22 item 12)
            '[{"question_id": "q", "question": "x", "final_answer": "y", "metadata": '
            '[{"id": "d", "symbol": "A", "year": true, "doctype": "t"}]}]',
            r"metadata\[0\]: year True is not a number \(give the fiscal year, e.g. 2022\)",
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


# ---- issue 22 item 14: one reader for datasets, whatever their encoding ---------------------------
def test_a_gbk_dataset_is_read_by_the_build_ask_and_score_alike(tmp_path, capsys):
    from collate import score
    from collate.ask import dataset_scope
    from retrievers.catalog import Catalog

    items = [_item("q1", "A股年报"), _item("q2", "A股年报", start=5)]
    path = tmp_path / "dataset.json"
    path.write_bytes(
        json.dumps(items, ensure_ascii=False).encode("gbk")
    )  # Excel/Notepad on a Chinese Windows
    predictions = tmp_path / "pred.json"
    answers = [{"question_id": "q1", "model_answer": "答案"}, {"question_id": "q2", "model_answer": "别的"}]
    predictions.write_bytes(json.dumps(answers, ensure_ascii=False).encode("gbk"))

    assert [it.question for it in load_dataset(path)] == ["问题 q1", "问题 q2"]
    assert len(Catalog.load(path)) == 4  # what retrievers.build reads
    assert dataset_scope(str(path), "q2") == ("问题 q2", ["doc-5", "doc-6"])  # collate ask --dataset
    assert score.main(["--dataset", str(path), "--predictions", str(predictions), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n"] == 2 and [q["model_answer"] for q in report["per_question"]] == ["答案", "别的"]


# ---- issue 22 item 15: a blank question is skipped, named, and counted ----------------------------
def _with_blanks(tmp_path) -> Path:
    raw = [_item("q1", "A股年报"), _item("q2", "A股年报", start=5), _item("q3", "A股年报", start=9)]
    raw[1]["question"] = "  \n "
    raw[2]["question"] = None
    return _write(tmp_path, raw)


def test_a_blank_question_is_skipped_with_a_warning_naming_it(tmp_path, caplog):
    with caplog.at_level("WARNING", logger="evaluate.dataset"):
        items = load_dataset(_with_blanks(tmp_path))
    assert [it.question_id for it in items] == ["q1"]  # the rest of the dataset still runs
    assert list(items.skipped) == ["q2", "q3"]
    assert "blank question" in items.skipped["q2"]
    warning = " ".join(r.getMessage() for r in caplog.records)
    assert "2 questions" in warning and "q2, q3" in warning and "write" in warning


def test_ask_names_a_skipped_blank_question_instead_of_calling_it_absent(tmp_path):
    from collate.ask import dataset_scope
    from signatures.errors import BadInput

    path = _with_blanks(tmp_path)
    with pytest.raises(BadInput, match=r"question q2 .* is blank: write its question"):
        dataset_scope(str(path), "q2")


def test_score_leaves_out_answers_to_skipped_blank_questions_and_says_so(tmp_path, capsys):
    from collate import score

    predictions = tmp_path / "pred.json"
    answers = [{"question_id": q, "model_answer": "答案"} for q in ("q1", "q2")]
    predictions.write_text(json.dumps(answers, ensure_ascii=False), encoding="utf-8")
    assert (
        score.main(["--dataset", str(_with_blanks(tmp_path)), "--predictions", str(predictions), "--json"])
        == 0
    )
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["n"] == 1 and [q["question_id"] for q in report["per_question"]] == ["q1"]
    assert "not scored: 1 answer to a blank question (q2)" in captured.err


def test_a_run_skips_blank_questions_and_its_summary_says_so(small_corpus, brain_server, tmp_path, capsys):
    from collate import run

    corpus, index = small_corpus
    raw = json.loads((corpus / "dataset.json").read_text(encoding="utf-8"))[:3]
    raw[1]["question"] = ""
    dataset = _write(tmp_path, raw)
    out = tmp_path / "run"
    code = run.main(
        ["--dataset", str(dataset), "--index", str(index), "--out", str(out), "--no-progress", "--no-autolog"]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["n"] == 2 and summary["skipped_ids"] == [raw[1]["question_id"]]
    assert f"skipped 1 question with a blank text ({raw[1]['question_id']})" in captured.out
    answered = json.loads((out / "agent_output.json").read_text(encoding="utf-8"))
    assert raw[1]["question_id"] not in {a["question_id"] for a in answered}
