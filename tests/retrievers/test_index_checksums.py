"""A damaged index is noticed by the build and rebuilt (issue 22 item 13).

Before: a document whose chunks.jsonl or BM25 files were damaged on disk (meta.json intact) made ask say
"damaged index ... rebuild it", and the rebuild said "unchanged" and left it broken.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collate import build
from retrievers.indexing.checksums import CHECKSUMS
from retrievers.indexing.store import DocumentNotIndexed, IndexStore, doc_folder

ZH = {"symbol": "600000", "year": 2022, "doctype": "A股年报", "language": "zh"}
EN = {"symbol": "AAPL", "year": 2022, "doctype": "US Stock Annual Report", "language": "en"}


@pytest.fixture
def built(tmp_path, writers) -> dict:
    """Two documents built: zh1 (BM25 only) and en1 (BM25 + a dense side)."""
    pdf_dir = tmp_path / "pdf"
    pdf_dir.mkdir()
    writers.cjk(pdf_dir / "zh1.pdf")
    writers.column(pdf_dir / "en1.pdf")
    catalog = tmp_path / "catalog.jsonl"
    rows = [{"id": "zh1", **ZH}, {"id": "en1", **EN}]
    catalog.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    index = tmp_path / "index"
    args = [
        *("--catalog", str(catalog), "--pdf-dir", str(pdf_dir), "--index", str(index)),
        *("--workers", "1", "--embedder", "hashing-256", "--no-progress"),
    ]
    assert build.main(args) == 0
    return {"args": args, "index": index}


def _meta(index: Path, doc_id: str) -> dict:
    return json.loads((doc_folder(index, doc_id) / "meta.json").read_text(encoding="utf-8"))


def _rebuild(built, capsys) -> str:
    capsys.readouterr()
    assert build.main(built["args"]) == 0
    return capsys.readouterr().out


def test_every_index_file_but_meta_has_its_checksum(built):
    folder = doc_folder(built["index"], "en1")
    recorded = _meta(built["index"], "en1")[CHECKSUMS]
    on_disk = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    assert set(recorded) == on_disk - {"meta.json"}
    assert {"chunks.jsonl", "dense.faiss", "bm25/vocab.index.json"} <= set(recorded)


@pytest.mark.parametrize(
    ("doc_id", "name"),
    [
        ("zh1", "chunks.jsonl"),
        ("zh1", "bm25/data.csc.index.npy"),
        ("zh1", "bm25/vocab.index.json"),
        ("en1", "dense.faiss"),
    ],
)
def test_a_truncated_index_file_makes_ask_say_rebuild_and_the_rebuild_fixes_it(built, capsys, doc_id, name):
    path = doc_folder(built["index"], doc_id) / name
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2])
    with pytest.raises(DocumentNotIndexed, match=r"damaged index .*rebuild it with collate build"):
        IndexStore.open(built["index"]).index(doc_id)

    out = _rebuild(built, capsys)
    assert "1 built, 1 unchanged, 0 failed" in out
    assert path.read_bytes() == good
    query = "资本充足率" if doc_id == "zh1" else "Total assets"
    assert IndexStore.open(built["index"]).search(doc_id, query, k=1)


def test_damage_the_loader_cannot_see_is_rebuilt_too(built, capsys):
    """A changed chunk text still loads (ask would quote the wrong words): only the checksum shows it."""
    path = doc_folder(built["index"], "zh1") / "chunks.jsonl"
    good = path.read_text(encoding="utf-8")
    path.write_text(good.replace("15.44%", "99.99%"), encoding="utf-8")
    assert "99.99%" in IndexStore.open(built["index"]).search("zh1", "资本充足率", k=1)[0].text

    assert "1 built, 1 unchanged" in _rebuild(built, capsys)
    assert path.read_text(encoding="utf-8") == good


def test_a_removed_bm25_file_is_rebuilt(built, capsys):
    (doc_folder(built["index"], "zh1") / "bm25" / "params.index.json").unlink()
    assert "1 built, 1 unchanged" in _rebuild(built, capsys)
    assert IndexStore.open(built["index"]).search("zh1", "资本充足率", k=1)


def test_an_index_built_before_checksums_is_trusted_then_sealed(built, capsys):
    for doc_id in ("zh1", "en1"):  # as an index built before this change
        meta_path = doc_folder(built["index"], doc_id) / "meta.json"
        meta = _meta(built["index"], doc_id)
        del meta[CHECKSUMS]
        meta_path.write_text(json.dumps(meta), encoding="utf-8")

    assert "0 built, 2 unchanged" in _rebuild(built, capsys)  # not rebuilt for lack of checksums
    assert CHECKSUMS in _meta(built["index"], "zh1") and CHECKSUMS in _meta(built["index"], "en1")
    assert not list(built["index"].rglob("meta.json.tmp"))

    (doc_folder(built["index"], "zh1") / "chunks.jsonl").write_text("", encoding="utf-8")
    assert "1 built, 1 unchanged" in _rebuild(built, capsys)  # sealed: later damage is caught
