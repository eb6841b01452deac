"""A disk that fills up during a rebuild (issue 22 item 10): one line naming the fix, nothing lost.

Before: saving the catalog on a full disk ended in a sqlite traceback and left `catalog.tmp` behind.
The disk is a real tmpfs of 1 MB (we run as root in CI; the tests skip where mounting is not permitted).
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest

from collate import build
from retrievers.building.build import BuildReport
from retrievers.building.jobs import DocResult, Job, build_document
from retrievers.building.manifest import write_manifest
from retrievers.catalog import CATALOG_FILE, Catalog
from retrievers.indexing.store import IndexStore, doc_folder

ZH = {"symbol": "600000", "year": 2022, "doctype": "A股年报", "language": "zh"}
EN = {"symbol": "AAPL", "year": 2022, "doctype": "US Stock Annual Report", "language": "en"}
PAGE = 4096  # tmpfs allocates whole pages


@pytest.fixture
def small_disk(tmp_path):
    """A 1 MB tmpfs mounted at tmp_path/disk, unmounted afterwards."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True, text=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mounted.stderr.strip() or 'not permitted'})")
    try:
        yield disk
    finally:
        if subprocess.run(["umount", str(disk)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def _fill(disk: Path, leave: int = 0) -> Path:
    """Write a file until the disk is full, then give back `leave` bytes."""
    filler = disk / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * PAGE)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    finally:
        os.close(fd)
    if leave:
        os.truncate(filler, filler.stat().st_size - leave)
    return filler


def _collection(tmp_path, writers, disk: Path) -> dict:
    pdf_dir = tmp_path / "pdf"
    pdf_dir.mkdir()
    writers.cjk(pdf_dir / "zh1.pdf")
    writers.column(pdf_dir / "en1.pdf")
    writers.cjk(pdf_dir / "zh2.pdf")
    catalog = tmp_path / "catalog.jsonl"
    rows = [{"id": "zh1", **ZH}, {"id": "en1", **EN}]
    catalog.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return {"catalog": catalog, "pdf_dir": pdf_dir, "index": disk / "index"}


def _args(c: dict, catalog: Path | None = None) -> list[str]:
    return [
        *(
            "--catalog",
            str(catalog or c["catalog"]),
            "--pdf-dir",
            str(c["pdf_dir"]),
            "--index",
            str(c["index"]),
        ),
        *("--workers", "1", "--embedder", "hashing-256", "--no-progress"),
    ]


def _files(index: Path) -> dict[str, bytes]:
    return {str(p.relative_to(index)): p.read_bytes() for p in sorted(index.rglob("*")) if p.is_file()}


def test_a_full_disk_while_saving_the_catalog_says_so_and_loses_nothing(
    tmp_path, writers, small_disk, capsys
):
    c = _collection(tmp_path, writers, small_disk)
    assert build.main(_args(c)) == 0
    before = _files(c["index"])
    _fill(small_disk, leave=PAGE)  # room for the build lock's pid, none for a new catalog
    capsys.readouterr()

    code = build.main(_args(c))
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"error: no space left on the disk of {c['index']}")
    assert err.rstrip().endswith("free space and rerun (nothing indexed was lost)")
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    after = _files(c["index"])
    assert not [name for name in after if name.startswith("catalog.tmp")]
    assert {k: v for k, v in after.items() if k != ".build.lock"} == {
        k: v for k, v in before.items() if k != ".build.lock"
    }
    store = IndexStore.open(c["index"])  # the old catalog, and every document, still there
    assert [d.id for d in store.catalog.documents()] == ["zh1", "en1"]
    assert "15.44%" in store.search("zh1", "资本充足率", k=1)[0].text


def test_a_document_that_meets_a_full_disk_names_the_fix_and_keeps_the_rest(
    tmp_path, writers, small_disk, capsys
):
    c = _collection(tmp_path, writers, small_disk)
    assert build.main(_args(c)) == 0
    more = tmp_path / "more.jsonl"
    more.write_text(
        c["catalog"].read_text(encoding="utf-8") + json.dumps({"id": "zh2", **ZH}) + "\n", encoding="utf-8"
    )
    _fill(small_disk, leave=PAGE)
    capsys.readouterr()

    code = build.main(_args(c, more))
    captured = capsys.readouterr()
    assert code == 2 and "Traceback" not in captured.err
    assert "free space and rerun (nothing indexed was lost)" in captured.err
    assert not list(c["index"].rglob("*.tmp")) and not any((c["index"] / ".staging").iterdir())
    assert [d.id for d in Catalog.open(c["index"]).documents()] == ["zh1", "en1"]

    # the document's own result (what the build prints when the catalog still fits) names the fix
    job = Job("zh2", str(c["pdf_dir"] / "zh2.pdf"), str(doc_folder(c["index"], "zh2")), None, "ngram")
    result = build_document(job)
    assert (result.status, result.kind) == ("failed", "disk full")
    assert result.fix == "free space and rerun (its previous index, if any, is kept)"


def test_a_manifest_that_does_not_fit_leaves_no_partial_copy(tmp_path, small_disk):
    index = small_disk / "index"
    index.mkdir()
    (index / "manifest.json").write_text("{}", encoding="utf-8")
    results = [DocResult(f"doc-{i}", "built", pages=3, chunks=9, content_hash="f" * 64) for i in range(200)]
    _fill(small_disk, leave=PAGE)  # a page for the start of the new manifest, not for the whole
    with pytest.raises(OSError) as caught:
        write_manifest(index, BuildReport(results, 1.0), "hashing-256", "ngram", "auto", "figures", {})
    assert caught.value.errno == errno.ENOSPC
    assert sorted(p.name for p in index.iterdir()) == ["manifest.json"]
    assert (index / "manifest.json").read_text(encoding="utf-8") == "{}"


def test_the_catalog_save_is_atomic_whatever_sqlite_raises(tmp_path, monkeypatch):
    """Without a tmpfs: sqlite's own 'disk is full' error, raised mid-save, leaves the old catalog whole."""
    rows = [{"id": "a", **ZH}]
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps(rows[0], ensure_ascii=False) + "\n", encoding="utf-8")
    catalog = Catalog.load(path)
    index = tmp_path / "index"
    catalog.save(index)
    good = (index / CATALOG_FILE).read_bytes()

    real_connect = sqlite3.connect

    class FullDisk:
        def __init__(self, *args, **kwargs):
            self.conn = real_connect(*args, **kwargs)

        def execute(self, *args):
            return self.conn.execute(*args)

        def executemany(self, *args):
            error = sqlite3.OperationalError("database or disk is full")
            error.sqlite_errorcode = 13  # SQLITE_FULL
            raise error

        def commit(self):
            self.conn.commit()

        def close(self):
            self.conn.close()

    monkeypatch.setattr(sqlite3, "connect", FullDisk)
    with pytest.raises(OSError) as caught:
        catalog.save(index)
    assert caught.value.errno == errno.ENOSPC and str(index / CATALOG_FILE) in str(caught.value)
    assert sorted(p.name for p in index.iterdir()) == [CATALOG_FILE]
    assert (index / CATALOG_FILE).read_bytes() == good
