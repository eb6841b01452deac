"""Nothing built is lost, nothing is attributed to the wrong document (issue 11, items 1, 2, 5, 6, 8).

Every test runs the real build (real PDFs, real index folders) and asserts what a user would check:
the files still there, the exit code, the message.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from collate import build, search
from retrievers.building import build as building
from retrievers.building import jobs
from retrievers.catalog import Catalog, CatalogError
from retrievers.indexing.document_index import DocumentIndex
from retrievers.indexing.store import DocumentNotIndexed, IndexStore, doc_folder

ROOT = Path(__file__).resolve().parents[2]
ZH = {"symbol": "600000", "year": 2022, "doctype": "A股年报", "language": "zh"}
EN = {"symbol": "AAPL", "year": 2022, "doctype": "US Stock Annual Report", "language": "en"}


def _args(catalog, pdf_dir, index, *extra):
    return [
        "--catalog",
        str(catalog),
        "--pdf-dir",
        str(pdf_dir),
        "--index",
        str(index),
        "--workers",
        "1",
        "--embedder",
        "hashing-256",
        "--no-progress",
        *extra,
    ]


def _jsonl(path: Path, rows: list[dict], encoding: str = "utf-8") -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding=encoding)
    return path


def _good_collection(tmp_path, writers) -> dict:
    """Two documents that build (zh1 Chinese, en1 English), nothing broken."""
    pdf_dir = tmp_path / "pdf"
    pdf_dir.mkdir()
    writers.cjk(pdf_dir / "zh1.pdf")
    writers.column(pdf_dir / "en1.pdf")
    catalog = _jsonl(tmp_path / "catalog.jsonl", [{"id": "zh1", **ZH}, {"id": "en1", **EN}])
    return {"catalog": catalog, "pdf_dir": pdf_dir, "index": tmp_path / "index"}


def _snapshot(index: Path) -> dict[str, bytes]:
    """Every file under docs/ with its bytes: equal snapshots mean nothing was removed or rewritten."""
    docs = index / "docs"
    return {str(p.relative_to(docs)): p.read_bytes() for p in sorted(docs.rglob("*")) if p.is_file()}


# ---- 1. a built index is never deleted by a later failure ---------------------------------------
def test_a_wrong_or_empty_pdf_dir_removes_nothing_and_exits_non_zero(tmp_path, writers, capsys):
    c = _good_collection(tmp_path, writers)
    assert build.main(_args(c["catalog"], c["pdf_dir"], c["index"])) == 0
    before = _snapshot(c["index"])
    empty = tmp_path / "empty"
    empty.mkdir()
    capsys.readouterr()
    assert build.main(_args(c["catalog"], empty, c["index"])) == 1
    captured = capsys.readouterr()
    assert "0 built, 0 unchanged, 2 failed" in captured.out
    assert "2 of 2 documents failed: zh1, en1" in captured.err
    assert (
        f"is --pdf-dir {empty} the folder" in captured.err
        and "nothing already indexed was removed" in captured.err
    )
    assert "previous index is kept" in captured.out
    assert _snapshot(c["index"]) == before
    store = IndexStore.open(c["index"])
    assert "15.44%" in store.search("zh1", "资本充足率", k=1)[0].text
    assert store.manifest["failures"]["zh1"]["kept_previous_index"] is True
    assert [p.doc_id for p in store.search_pooled("total assets", k=1)] == ["en1"]  # still pooled
    assert [p.doc_id for p in store.search_pooled("total assets", k=1, doc_ids=["en1"])] == ["en1"]


def test_a_document_that_now_fails_keeps_its_last_good_index(tmp_path, writers):
    c = _good_collection(tmp_path, writers)
    assert build.main(_args(c["catalog"], c["pdf_dir"], c["index"])) == 0
    writers.corrupt(c["pdf_dir"] / "zh1.pdf")  # the file is replaced by a broken download
    report = building.build_index(
        Catalog.load(c["catalog"]),
        c["pdf_dir"],
        c["index"],
        workers=1,
        embedder="hashing-256",
        progress=False,
    )
    zh1 = report.results[0]
    assert (zh1.status, zh1.kind, zh1.kept_previous) == ("failed", "corrupt", True)
    store = IndexStore.open(c["index"])
    assert "15.44%" in store.search("zh1", "资本充足率", k=1)[0].text
    assert len(store.catalog.get("zh1").content_hash) == 64  # the catalog describes the index it keeps


def test_a_save_that_fails_midway_leaves_the_old_index_in_place(tmp_path, writers, monkeypatch):
    c = _good_collection(tmp_path, writers)
    assert build.main(_args(c["catalog"], c["pdf_dir"], c["index"])) == 0
    before = _snapshot(c["index"])
    writers.column(c["pdf_dir"] / "zh1.pdf")  # zh1 changes, so it is rebuilt
    real_save = DocumentIndex.save

    def save_then_fail(self, folder):
        real_save(self, folder)
        (Path(folder) / "meta.json").unlink()
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(DocumentIndex, "save", save_then_fail)
    assert build.main(_args(c["catalog"], c["pdf_dir"], c["index"])) == 1
    assert _snapshot(c["index"]) == before
    assert not any((c["index"] / ".staging").iterdir())  # the partial copy is gone too
    assert "15.44%" in IndexStore.open(c["index"]).search("zh1", "资本充足率", k=1)[0].text


@pytest.mark.parametrize(
    "bad_id, needle",
    [
        ("..", "names a folder, not a document"),
        (".", "names a folder, not a document"),
        ("reports/2022", "contains a path separator"),
        ("a\\b", "contains a path separator"),
        ("   ", "an empty id: give every document an id"),
    ],
)
def test_unusable_ids_are_refused_before_anything_is_written(tmp_path, writers, capsys, bad_id, needle):
    c = _good_collection(tmp_path, writers)
    assert build.main(_args(c["catalog"], c["pdf_dir"], c["index"])) == 0
    before = _snapshot(c["index"])
    bad = _jsonl(tmp_path / "bad.jsonl", [{"id": "zh1", **ZH}, {"id": bad_id, **ZH}])
    capsys.readouterr()
    assert build.main(_args(bad, c["pdf_dir"], c["index"])) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: bad.jsonl line 2") and needle in err and len(err.strip().splitlines()) == 1
    assert _snapshot(c["index"]) == before and (c["index"] / "catalog.sqlite").is_file()


def test_an_id_with_only_spaces_or_separators_is_named_in_the_error(tmp_path):
    with pytest.raises(CatalogError, match=r"line 1: id '\.\.' names a folder.*file name without \.pdf"):
        Catalog.load(_jsonl(tmp_path / "c.jsonl", [{"id": "..", **ZH}]))
    with pytest.raises(CatalogError, match=r"path separator.*e\.g\. 'a_b'.*path column"):
        Catalog.load(_jsonl(tmp_path / "c.jsonl", [{"id": "a/b", **ZH}]))


# ---- 2. one folder per id ----------------------------------------------------------------------
def test_ids_that_differed_only_by_a_space_get_folders_of_their_own(tmp_path, writers):
    pdf_dir = tmp_path / "pdf"
    pdf_dir.mkdir()
    writers.cjk(pdf_dir / "zh.pdf")
    writers.column(pdf_dir / "en.pdf")
    catalog = _jsonl(
        tmp_path / "c.jsonl",
        [
            {"id": "doc one", **ZH, "path": "zh.pdf"},
            {"id": "doc_one", **EN, "path": "en.pdf"},
            {"id": "年报", **ZH, "path": "zh.pdf"},
            {"id": "公告", **EN, "path": "en.pdf"},
        ],
    )
    assert build.main(_args(catalog, pdf_dir, tmp_path / "index")) == 0
    store = IndexStore.open(tmp_path / "index")
    assert "15.44%" in store.search("doc one", "资本充足率", k=1)[0].text
    assert "Net income" in store.search("doc_one", "net income", k=1)[0].text
    assert "15.44%" in store.search("年报", "资本充足率", k=1)[0].text
    assert "Net income" in store.search("公告", "net income", k=1)[0].text
    assert len({doc_folder(tmp_path / "index", i) for i in ("doc one", "doc_one", "年报", "公告")}) == 4


def test_ids_that_differ_only_in_case_are_an_error_naming_both(tmp_path):
    with pytest.raises(
        CatalogError, match=r"ids 'AAPL-2022' and 'aapl-2022' differ only in letter case.*rename one"
    ):
        Catalog.load(_jsonl(tmp_path / "c.jsonl", [{"id": "AAPL-2022", **EN}, {"id": "aapl-2022", **EN}]))


def test_an_index_built_with_the_old_folder_names_still_loads_and_is_not_rebuilt(tmp_path, writers):
    pdf_dir = tmp_path / "pdf"
    pdf_dir.mkdir()
    writers.cjk(pdf_dir / "doc one.pdf")
    catalog = _jsonl(tmp_path / "c.jsonl", [{"id": "doc one", **ZH}])
    index = tmp_path / "index"
    assert build.main(_args(catalog, pdf_dir, index)) == 0
    os.rename(doc_folder(index, "doc one"), index / "docs" / "doc_one")  # where an earlier version put it
    assert "15.44%" in IndexStore.open(index).search("doc one", "资本充足率", k=1)[0].text
    again = building.build_index(
        Catalog.load(catalog), pdf_dir, index, workers=1, embedder="hashing-256", progress=False
    )
    assert [r.status for r in again.results] == ["cached"]
    assert (doc_folder(index, "doc one") / "meta.json").is_file() and not (
        index / "docs" / "doc_one"
    ).exists()


# ---- 5. catalog encodings ----------------------------------------------------------------------
_CSV = "id,symbol,year,doctype,language\n浦发银行2022,600000,2022,A股年报,zh\n招商银行2022,600036,2022,A股年报,zh\n"


@pytest.mark.parametrize("encoding", ["gbk", "gb18030", "utf-8", "utf-8-sig", "utf-16"])
def test_a_chinese_csv_loads_in_the_encodings_excel_saves(tmp_path, encoding):
    path = tmp_path / "c.csv"
    path.write_bytes(_CSV.encode(encoding))
    docs = Catalog.load(path).documents()
    assert [(d.id, d.symbol, d.doctype) for d in docs] == [
        ("浦发银行2022", "600000", "A股年报"),
        ("招商银行2022", "600036", "A股年报"),
    ]


@pytest.mark.parametrize("encoding", ["utf-8-sig", "gbk"])
def test_jsonl_and_json_catalogs_load_with_a_bom_or_in_gbk(tmp_path, encoding):
    rows = [{"id": "浦发银行2022", **ZH}, {"id": "b", **EN}]
    jsonl = _jsonl(tmp_path / "c.jsonl", rows, encoding=encoding)
    dataset = tmp_path / "dataset.json"
    dataset.write_text(
        json.dumps([{"question": "?", "metadata": rows}], ensure_ascii=False), encoding=encoding
    )
    for path in (jsonl, dataset):
        assert [d.id for d in Catalog.load(path).documents()] == ["浦发银行2022", "b"]


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv"])
def test_a_latin1_catalog_reads_its_accented_names(tmp_path, suffix):
    rows = [
        {
            "id": "socgen-2022",
            "symbol": "Société Générale",
            "year": 2022,
            "doctype": "Rapport annuel",
            "language": "en",
        }
    ]
    path = tmp_path / f"c{suffix}"
    if suffix == ".jsonl":
        _jsonl(path, rows, encoding="latin-1")
    elif suffix == ".json":
        path.write_text(json.dumps([{"metadata": rows}], ensure_ascii=False), encoding="latin-1")
    else:
        path.write_text(
            "id,symbol,year,doctype,language\nsocgen-2022,Société Générale,2022,Rapport annuel,en\n",
            encoding="latin-1",
        )
    assert Catalog.load(path).get("socgen-2022").symbol == "Société Générale"


def test_a_catalog_in_no_known_encoding_is_one_line_naming_the_fix(tmp_path, writers, capsys):
    path = tmp_path / "c.jsonl"
    path.write_bytes(json.dumps({"id": "a", **ZH}, ensure_ascii=False).encode("utf-16-le"))  # no BOM
    (tmp_path / "pdf").mkdir()
    assert build.main(_args(path, tmp_path / "pdf", tmp_path / "index")) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "neither UTF-8, GB18030/GBK nor Latin-1" in err and "save it as UTF-8" in err


# ---- 6. one bad file never sinks a build -------------------------------------------------------
def test_a_truncated_meta_json_rebuilds_that_document_only(tmp_path, writers, capsys):
    c = _good_collection(tmp_path, writers)
    assert build.main(_args(c["catalog"], c["pdf_dir"], c["index"])) == 0
    meta = doc_folder(c["index"], "zh1") / "meta.json"
    meta.write_text(meta.read_text()[:20])  # as a crash mid-write of an older version left it
    with pytest.raises(DocumentNotIndexed, match=r"damaged index.*rebuild it with collate build"):
        IndexStore.open(c["index"]).search("zh1", "资本充足率")
    assert IndexStore.open(c["index"]).search("en1", "net income", k=1)  # the other document is fine
    capsys.readouterr()
    assert build.main(_args(c["catalog"], c["pdf_dir"], c["index"], "--json")) == 0
    out = capsys.readouterr().out
    statuses = {r["doc_id"]: r["status"] for r in json.loads(out[: out.rindex("]") + 1])}
    assert statuses == {"zh1": "built", "en1": "cached"}
    assert "15.44%" in IndexStore.open(c["index"]).search("zh1", "资本充足率", k=1)[0].text


def test_a_truncated_manifest_neither_stops_the_store_nor_the_build(tmp_path, writers):
    c = _good_collection(tmp_path, writers)
    assert build.main(_args(c["catalog"], c["pdf_dir"], c["index"])) == 0
    manifest = c["index"] / "manifest.json"
    manifest.write_text(manifest.read_text()[:30])
    assert "15.44%" in IndexStore.open(c["index"]).search("zh1", "资本充足率", k=1)[0].text
    assert build.main(_args(c["catalog"], c["pdf_dir"], c["index"])) == 0
    assert json.loads(manifest.read_text())["counts"] == {"built": 0, "cached": 2, "failed": 0}


# ---- 8. quiet failures made loud ---------------------------------------------------------------
def _write_text_then_scan(path: Path) -> Path:
    """A fine report whose second page is a scan (an image, no text layer)."""
    from PIL import Image
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    image = path.with_suffix(".png")
    Image.new("RGB", (200, 100), (200, 200, 200)).save(image)
    c = canvas.Canvas(str(path), pagesize=A4)
    c.drawString(72, 780, "Item 7. Revenue grew to $ 5,000 million in fiscal 2022.")
    c.showPage()
    c.drawImage(str(image), 72, 600, width=400, height=200)
    c.save()
    return path


def test_a_page_without_text_is_reported_in_the_summary_on_every_build(tmp_path, writers, capsys):
    pdf_dir = tmp_path / "pdf"
    pdf_dir.mkdir()
    _write_text_then_scan(pdf_dir / "mixed.pdf")
    catalog = _jsonl(tmp_path / "c.jsonl", [{"id": "mixed", **EN}])
    for status in ("1 built", "1 unchanged"):  # the first build and a cached rerun
        assert build.main(_args(catalog, pdf_dir, tmp_path / "index")) == 0
        out = capsys.readouterr().out
        assert status in out
        assert "NOTE mixed: 1 of 2 pages have no text layer (page 2)" in out and "ocrmypdf" in out


def test_search_says_an_empty_query_is_empty(tmp_path, capsys):
    assert search.main(["--index", str(tmp_path), "--doc", "a", "--query", ""]) == 2
    assert capsys.readouterr().err.strip() == "error: --query is empty: give the text to search for"
    assert search.main(["--index", str(tmp_path), "--doc", "a", "--query", "   "]) == 2
    assert "--query is empty" in capsys.readouterr().err


_HOLD_LOCK = """
import sys, time
from pathlib import Path
from retrievers.building.lock import build_lock
with build_lock(Path(sys.argv[1])):
    print("held", flush=True)
    time.sleep(3600)  # until the test kills it, however slowly the machine runs the test meanwhile
"""


def test_a_second_build_refuses_while_one_holds_the_index_and_a_killed_holder_blocks_nothing(
    tmp_path, writers, capsys
):
    c = _good_collection(tmp_path, writers)
    c["index"].mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, str(c["index"])],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        assert build.main(_args(c["catalog"], c["pdf_dir"], c["index"])) == 75
        err = capsys.readouterr().err
        assert f"another build (pid {holder.pid}) is writing {c['index']}" in err
        assert not (c["index"] / "docs").exists()  # the refused build wrote nothing
    finally:
        holder.kill()  # SIGKILL: no cleanup runs, the kernel drops the lock
        holder.wait()
    assert build.main(_args(c["catalog"], c["pdf_dir"], c["index"])) == 0


def test_ctrl_c_stops_with_one_line_saying_what_was_saved(tmp_path, writers, capsys, monkeypatch):
    c = _good_collection(tmp_path, writers)
    real = jobs.build_document

    def interrupted_on_en1(job):
        if job.doc_id == "en1":
            raise KeyboardInterrupt
        return real(job)

    monkeypatch.setattr(building, "build_document", interrupted_on_en1)
    assert build.main(_args(c["catalog"], c["pdf_dir"], c["index"])) == 130
    err = capsys.readouterr().err.strip()
    assert (
        err.startswith("interrupted: 1 document(s) indexed now and 0 unchanged are saved") and "\n" not in err
    )
    assert "Run the same command again" in err
    monkeypatch.setattr(building, "build_document", real)
    report = building.build_index(
        Catalog.load(c["catalog"]),
        c["pdf_dir"],
        c["index"],
        workers=1,
        embedder="hashing-256",
        progress=False,
    )
    assert {r.doc_id: r.status for r in report.results} == {"zh1": "cached", "en1": "built"}


def test_ctrl_c_on_a_parallel_build_prints_no_traceback(tmp_path, writers):
    pdf_dir = tmp_path / "pdf"
    pdf_dir.mkdir()
    rows = []
    for i in range(24):
        (writers.cjk if i % 2 else writers.column)(pdf_dir / f"d{i}.pdf")
        rows.append({"id": f"d{i}", **ZH})
    catalog = _jsonl(tmp_path / "c.jsonl", rows)
    index = tmp_path / "index"
    argv = [sys.executable, "-m", "retrievers.build", *_args(catalog, pdf_dir, index)]
    argv[argv.index("--workers") + 1] = "2"
    proc = subprocess.Popen(
        argv,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 240  # only a hang guard: start-up is slow on a loaded machine
    while not (index / "docs").is_dir() or not any((index / "docs").iterdir()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGINT)  # what the terminal does: the parent and every worker
    out, err = proc.communicate(timeout=60)
    if proc.returncode == 0:
        pytest.skip("the build finished before the signal arrived")
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("interrupted: ")
    assert len(err.strip().splitlines()) == 1
    store = IndexStore.open(index)
    for doc_id in store.indexed_ids():
        assert store.search(doc_id, "资本充足率 net income", k=1)


def test_an_index_path_that_cannot_be_written_is_one_line_not_a_traceback(tmp_path, writers, capsys):
    c = _good_collection(tmp_path, writers)
    not_a_folder = tmp_path / "index.txt"
    not_a_folder.write_text("keep me")
    assert build.main(_args(c["catalog"], c["pdf_dir"], not_a_folder)) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(f"error: cannot write the index {not_a_folder}")
        and "give a folder you can write to" in err
    )
    assert len(err.strip().splitlines()) == 1 and not_a_folder.read_text() == "keep me"


def test_a_file_that_kills_its_worker_fails_alone(tmp_path, writers, monkeypatch):
    import retrievers.documents.pdf

    pdf_dir = tmp_path / "pdf"
    pdf_dir.mkdir()
    rows = []
    for i in range(6):
        (writers.cjk if i % 2 else writers.column)(pdf_dir / f"d{i}.pdf")
        rows.append({"id": f"d{i}", **ZH})
    real_parse = retrievers.documents.pdf.parse_pdf

    def parse_or_die(path, **options):  # as pdfium does on some malformed files: the process is gone
        if Path(path).stem == "d3":
            os.kill(os.getpid(), signal.SIGKILL)
        return real_parse(path, **options)

    monkeypatch.setattr(retrievers.documents.pdf, "parse_pdf", parse_or_die)  # the forked workers inherit it
    report = building.build_index(
        Catalog.load(_jsonl(tmp_path / "c.jsonl", rows)),
        pdf_dir,
        tmp_path / "index",
        workers=2,
        embedder="hashing-256",
        progress=False,
    )
    status = {r.doc_id: (r.status, r.kind) for r in report.results}
    assert status.pop("d3") == ("failed", "crashed")
    assert set(status.values()) == {("built", "")}
    assert "qpdf --check" in report.failures[0].fix


def test_without_an_atomic_exchange_a_swap_cut_short_is_put_back(tmp_path, writers, monkeypatch):
    """Where renameat2 cannot exchange (not Linux, some file systems) the old folder goes aside first;
    a build dying between the two renames leaves it there, and the next build puts it back."""
    import retrievers.building.swap as swap

    c = _good_collection(tmp_path, writers)
    assert build.main(_args(c["catalog"], c["pdf_dir"], c["index"])) == 0
    monkeypatch.setattr(swap, "_exchange", lambda a, b: False)
    writers.column(c["pdf_dir"] / "zh1.pdf")
    assert build.main(_args(c["catalog"], c["pdf_dir"], c["index"])) == 0  # the fallback swap works
    assert "Total assets" in IndexStore.open(c["index"]).search("zh1", "total assets", k=1)[0].text
    before = _snapshot(c["index"])
    # as a build killed between its two renames leaves it: zh1's folder aside, a new one unfinished
    folder = doc_folder(c["index"], "zh1")
    os.rename(folder, c["index"] / ".staging" / "zh1.4242.old")
    (c["index"] / ".staging" / "zh1.4242.new").mkdir()
    writers.cjk(c["pdf_dir"] / "en1.pdf")  # the next build has work to do on another document
    assert build.main(_args(c["catalog"], c["pdf_dir"], c["index"])) == 0
    assert {k: v for k, v in _snapshot(c["index"]).items() if k.startswith("zh1/")} == {
        k: v for k, v in before.items() if k.startswith("zh1/")
    }
    assert not any((c["index"] / ".staging").iterdir())
