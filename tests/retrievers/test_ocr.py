"""OCR of pages without a text layer (issue 23): image-only PDFs are indexed, fact-checked and boxed.

The scans are made here: small filing pages written with reportlab (tests/retrievers/conftest.py),
rendered at 150 dpi and wrapped into PDFs that hold nothing but the pictures (data.synth.scanned). One
build OCRs their three pages with the real engine (RapidOCR, loaded once in this process, ~10 s in
all); every other test reuses that index and its OCR cache, and the tests that must not OCR again
replace the engine with one that fails.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
import pytest

from collate import build as build_cli
from collate.errors import Exit
from data.synth.scanned import image_only_pdf
from factcheck.check import VALUE_NOT_IN_QUOTE, VERIFIED, check_fact
from programs.audit_report import render_report
from retrievers.building import build, jobs
from retrievers.building.ocr_build import OcrProgress, outdated, resolve_ocr, summary
from retrievers.building.ocr_cache import OcrCache, PageOcr
from retrievers.catalog import Catalog
from retrievers.documents import ocr
from retrievers.documents.ocr_lines import OcrLine, quote_rects, rows
from retrievers.documents.pdf import ParseError, parse_pdf
from retrievers.indexing.store import IndexStore, doc_folder

ROWS = [
    {"id": "scan_zh", "symbol": "600000", "year": 2022, "doctype": "A股年报", "language": "zh"},
    {"id": "mixed", "symbol": "AAPL", "year": 2022, "doctype": "US Stock Annual Report", "language": "en"},
]


def _merge(target: Path, *sources: Path) -> Path:
    merged = pdfium.PdfDocument.new()
    for source in sources:
        src = pdfium.PdfDocument(str(source))
        merged.import_pages(src)
        src.close()
    merged.save(str(target))
    merged.close()
    return target


def _build(index: Path, collection: dict, ocr_mode: str = "auto"):
    return build.build_index(
        Catalog.load(collection["catalog"]),
        collection["pdf_dir"],
        index,
        workers=1,  # in this process: the OCR engine is loaded once for the whole module
        embedder="hashing-256",
        progress=False,
        ocr=ocr_mode,
    )


@pytest.fixture(scope="module")
def collection(tmp_path_factory, writers_module) -> dict:
    """scan_zh: a two-page Chinese report as pictures only; mixed: an English page with its text layer,
    then the picture of a table page."""
    root = tmp_path_factory.mktemp("scans")
    pdf_dir = root / "pdf"
    pdf_dir.mkdir()
    cjk = writers_module.cjk(root / "cjk.pdf")
    column = writers_module.column(root / "column.pdf")
    image_only_pdf(cjk, pdf_dir / "scan_zh.pdf")
    _merge(pdf_dir / "mixed.pdf", cjk, image_only_pdf(column, root / "column-scan.pdf"))
    catalog = root / "catalog.jsonl"
    catalog.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS), encoding="utf-8")
    return {"catalog": catalog, "pdf_dir": pdf_dir, "root": root}


@pytest.fixture(scope="module")
def writers_module():
    from types import SimpleNamespace

    from tests.retrievers.conftest import write_cjk_report, write_column_table

    return SimpleNamespace(cjk=write_cjk_report, column=write_column_table)


@pytest.fixture(scope="module")
def built(collection) -> dict:
    """The one build that runs the OCR engine (3 pages)."""
    index = collection["root"] / "index"
    report = _build(index, collection)
    return {"index": index, "report": report, "results": {r.doc_id: r for r in report.results}}


@pytest.fixture
def copied(built, tmp_path) -> Path:
    """A copy of the built index (with its OCR cache) that a test may rebuild."""
    return Path(shutil.copytree(built["index"], tmp_path / "index"))


@pytest.fixture
def no_engine(monkeypatch):
    """OCR that fails the test if called: what must come from the OCR cache."""

    def fail(*args):
        raise AssertionError("a page was OCR'd again")

    monkeypatch.setattr(ocr, "read_page", fail)
    monkeypatch.setattr(ocr, "recognise", fail)  # pages read side by side (PageOcr)


# ---- the build ------------------------------------------------------------------------------
def test_an_image_only_document_is_indexed_by_ocr_and_found_by_its_figures(built):
    result = built["results"]["scan_zh"]
    assert (result.status, result.ocr_page_numbers, result.scanned_pages) == ("built", [1, 2], 0)
    assert result.ocr_engine == ocr.engine_key() and result.ocr_cached == 0 and result.ocr_seconds > 0
    store = IndexStore.open(built["index"])
    top = store.search("scan_zh", "资本充足率", k=1)[0]
    assert top.page == 1 and re.search(r"资本充足率 15\.44% 14\.12%", top.text)
    assert "毕马威华振会计师事务所" in store.page_texts("scan_zh")[2]


def test_a_mixed_document_keeps_its_text_layer_and_ocrs_only_its_image_page(built):
    result = built["results"]["mixed"]
    assert (result.status, result.ocr_page_numbers, result.pages) == ("built", [3], 3)
    texts = IndexStore.open(built["index"]).page_texts("mixed")
    # page 1 read from its text layer: the ruled table rendered cell by cell, which OCR never produces
    assert "2022年 | 资本充足率 | 15.44%" in texts[1]
    assert re.search(r"Total assets \$ ?1,234,567", texts[3])


def test_facts_on_ocr_pages_are_checked_against_what_ocr_read(built):
    pages = IndexStore.open(built["index"]).page_texts("scan_zh")
    assert check_fact("15.44", "%", "资本充足率 15.44%", 1, pages).status == VERIFIED
    assert check_fact("15.45", "%", "资本充足率 15.44%", 1, pages).status == VALUE_NOT_IN_QUOTE
    assert check_fact("14.12", "%", "资本充足率 15.44% 14.12%", 2, pages).page == 1


def test_a_scanned_pages_own_text_is_what_ocr_read_there(built):
    """The fact check reads the page a quote is printed on, and its scale words, from each page's own text:
    for a page without a text layer that is what OCR read, not pdfium's empty text layer."""
    pages = IndexStore.open(built["index"]).page_texts("scan_zh")
    assert re.search(r"资本充足率 15\.44% 14\.12%", pages.own[1])
    assert "毕马威华振会计师事务所" in pages.own[2]
    mixed = IndexStore.open(built["index"]).page_texts("mixed")
    assert "资本充足率" in mixed.own[1]  # a text-layer page keeps pdfium's text
    assert re.search(r"Total assets \$ ?1,234,567", mixed.own[3])


def test_the_manifest_records_the_pages_read_by_ocr(built):
    manifest = json.loads((built["index"] / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["ocr"] == {"scan_zh": [1, 2], "mixed": [3]}
    assert manifest["ocr_pages"] == manifest["ocr_pages_read_now"] == 3
    assert manifest["ocr_engine"].startswith("rapidocr-onnxruntime-") and manifest["ocr_seconds"] > 0


def test_a_rebuild_reads_no_page_twice_and_off_then_auto_round_trips_through_the_cache(
    built, copied, collection, no_engine
):
    again = _build(copied, collection)
    assert {r.doc_id: r.status for r in again.results} == {"scan_zh": "cached", "mixed": "cached"}

    off = {r.doc_id: r for r in _build(copied, collection, "off").results}
    assert off["scan_zh"].status == "failed" and off["scan_zh"].kind == "scanned"
    assert "--ocr auto" in off["scan_zh"].fix and off["scan_zh"].kept_previous
    # mixed was read with OCR: rebuilt without it, its image page now unread
    assert off["mixed"].status == "built" and off["mixed"].scanned_page_numbers == [3]

    back = {r.doc_id: r for r in _build(copied, collection).results}
    # scan_zh kept its OCR'd index through the failure; mixed is OCR'd again, from the cache
    assert (back["scan_zh"].status, back["mixed"].status) == ("cached", "built")
    assert back["mixed"].ocr_page_numbers == [3] and back["mixed"].ocr_cached == 1
    assert summary(back.values()).endswith(
        "1 page(s) of 1 document(s) without a text layer read by OCR, 0 now in 0.0 s; 1 from the OCR cache"
    )


def test_an_onnxruntime_upgrade_reads_the_ocr_pages_again_once(built, copied, collection, monkeypatch):
    """onnxruntime computes what RapidOCR's models output: another version may read a page otherwise, so
    the cache another version filled serves it nothing; its own cache then serves the next build."""
    installed = ocr.importlib.metadata.version
    monkeypatch.setattr(
        ocr.importlib.metadata,
        "version",
        lambda name: "99.0.0" if name == "onnxruntime" else installed(name),
    )
    read = []

    def reading(*args, **kwargs):  # what the upgraded runtime reads (the real engine is not needed here)
        read.append(1)
        return [OcrLine("read again", 72, 600, 300, 620)]

    monkeypatch.setattr(ocr, "read_page", reading)
    monkeypatch.setattr(ocr, "recognise", reading)
    upgraded = {r.doc_id: r for r in _build(copied, collection).results}
    assert "onnxruntime-99.0.0" in ocr.engine_key()
    assert {d: r.status for d, r in upgraded.items()} == {"scan_zh": "built", "mixed": "built"}
    assert len(read) == 3 and all(r.ocr_cached == 0 for r in upgraded.values())
    again = {r.doc_id: r.status for r in _build(copied, collection).results}
    assert again == {"scan_zh": "cached", "mixed": "cached"} and len(read) == 3


def test_the_command_line_says_how_many_pages_were_ocrd(built, copied, collection, no_engine, capsys):
    shutil.rmtree(copied / "docs")  # every document rebuilt, its pages from the OCR cache
    code = build_cli.main(
        [
            *("--catalog", str(collection["catalog"]), "--pdf-dir", str(collection["pdf_dir"])),
            *("--index", str(copied), "--workers", "1", "--embedder", "hashing-256", "--no-progress"),
            *("--ocr", "auto"),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "OCR: 3 page(s) of 2 document(s) without a text layer read by OCR" in out
    code = build_cli.main(
        [
            *("--catalog", str(collection["catalog"]), "--pdf-dir", str(collection["pdf_dir"])),
            *("--index", str(copied), "--workers", "1", "--embedder", "hashing-256", "--no-progress"),
            *("--ocr", "off"),
        ]
    )
    out = capsys.readouterr().out
    assert code == Exit.FAILED
    assert "FAILED scan_zh: scanned" in out and "NOTE mixed: 1 of 3 pages have no text layer (page 3)" in out


def test_without_the_engine_the_document_fails_with_the_install_fix(collection, tmp_path, monkeypatch):
    monkeypatch.setattr(ocr, "installed_version", lambda: None)
    ocr._load_once.cache_clear()
    try:
        job = jobs.Job(
            "scan_zh",
            str(collection["pdf_dir"] / "scan_zh.pdf"),
            str(doc_folder(tmp_path / "index", "scan_zh")),
            None,
            "ngram",
            ocr_engine="rapidocr-onnxruntime-1.4.4.150dpi.v3",  # the parent had it; this worker has not
        )
        result = jobs.build_document(job)
    finally:
        ocr._load_once.cache_clear()  # the next test loads the real engine again
    assert (result.status, result.kind) == ("failed", "ocr")
    assert "pip install 'rapidocr-onnxruntime==" in result.fix and "--ocr off" in result.fix
    assert resolve_ocr("auto") is None  # auto without an engine: image pages stay unread


@pytest.mark.parametrize(
    ("breakage", "fix"),
    [("import", "apt-get install libgl1 libglib2.0-0"), ("models", "--force-reinstall")],
)
def test_an_engine_that_cannot_load_names_the_fix(monkeypatch, breakage, fix):
    import sys

    import rapidocr_onnxruntime

    if breakage == "import":  # as when opencv misses a system library (libGL.so.1)
        for name in [m for m in sys.modules if m.startswith("rapidocr_onnxruntime")]:
            monkeypatch.delitem(sys.modules, name)  # imported afresh, and so is opencv
        monkeypatch.setitem(sys.modules, "cv2", None)
    else:

        def damaged(**settings):
            raise RuntimeError("Load model ch_PP-OCRv4_det_infer.onnx failed")

        monkeypatch.setattr(rapidocr_onnxruntime, "RapidOCR", damaged)
    ocr._load_once.cache_clear()
    try:
        with pytest.raises(ocr.OcrUnavailable) as info:
            ocr.engine()
    finally:
        ocr._load_once.cache_clear()
    assert info.value.kind == "ocr" and fix in info.value.fix


# ---- the folded models ----------------------------------------------------------------------
def _model_inputs(collection) -> dict[str, np.ndarray]:
    """What each network reads, from a scanned page: the page for detection, a strip of print for recognition."""
    scan = pdfium.PdfDocument(str(collection["pdf_dir"] / "scan_zh.pdf"))
    picture = ocr.render(scan[0]).image
    scan.close()
    normed = (picture[:320, :640].astype(np.float32) / 255 - 0.5) / 0.5
    rows = np.flatnonzero(picture.min(axis=(1, 2)) < ocr.INK)
    strip = (picture[rows[0] : rows[0] + 24].astype(np.float32) / 255 - 0.5) / 0.5
    strip = np.repeat(np.repeat(strip, 2, axis=0), 2, axis=1)[
        :48, :960
    ]  # 48 pixels high, as RapidOCR feeds it
    return {"det": normed.transpose(2, 0, 1)[None], "rec": strip.transpose(2, 0, 1)[None].copy()}


def test_the_folded_models_compute_what_the_wheels_models_compute_in_fewer_operations(collection):
    import onnx
    import onnxruntime

    from retrievers.documents import ocr_models

    inputs = _model_inputs(collection)
    for part, path in ocr_models.wheel_models().items():
        original = onnx.load(str(path))
        model, folds = ocr_models.folded(onnx.load(str(path)))
        # every affine block and hardswish rewritten: most element-wise passes between convolutions are gone
        assert folds["affine after a convolution"] == 28 and folds["hardswish"] >= 24, (part, folds)
        passes = [
            sum(n.op_type in {"Mul", "Add", "Clip", "Div"} for n in m.graph.node) for m in (original, model)
        ]
        assert passes[1] < 0.5 * passes[0] and "Clip" not in {n.op_type for n in model.graph.node}, passes
        outputs = [
            onnxruntime.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(
                None, {"x": inputs[part]}
            )[0]
            for m in (original, model)
        ]
        assert outputs[0].shape == outputs[1].shape and np.abs(outputs[0] - outputs[1]).max() < 1e-4, part


def test_the_shipped_engine_reads_a_page_as_the_unfolded_models_do_and_names_the_fold(collection):
    assert ocr.SETTINGS.fold and ocr.SETTINGS.key().endswith(".fold")
    unfolded = replace(ocr.SETTINGS, fold=False)
    assert unfolded.key() != ocr.SETTINGS.key()
    scan = pdfium.PdfDocument(str(collection["pdf_dir"] / "scan_zh.pdf"))
    try:
        picture = ocr.render(scan[0])
    finally:
        scan.close()
    folded, plain = ocr.recognise(picture), ocr.recognise(picture, unfolded)
    assert [x.text for x in folded] == [x.text for x in plain] and len(folded) >= 3
    corners = [[(x.left, x.bottom, x.right, x.top) for x in lines] for lines in (folded, plain)]
    assert np.allclose(corners[0], corners[1], atol=0.01)  # points


# ---- the audit report -----------------------------------------------------------------------
def test_the_audit_report_boxes_a_quote_on_an_ocr_page_where_it_is_printed(built, collection, tmp_path):
    store = IndexStore.open(built["index"])
    fact = {"doc_id": "scan_zh", "field": "car", "value": "15.44", "unit": "%", "page": 1}
    facts = [
        {**fact, "quote": "资本充足率 15.44%"},
        {**fact, "field": "other", "quote": "净利润 99,999"},  # not on the page: no box
    ]
    path = render_report(
        tmp_path / "audit.html",
        "资本充足率是多少？",
        "15.44%",
        facts=facts,
        pdf_lookup=lambda d: collection["pdf_dir"] / f"{d}.pdf",
        ocr_lookup=store.ocr_lines,
    )
    html = path.read_text(encoding="utf-8")
    sections = html.split('<section class="quote"')[1:]
    boxes = [
        [tuple(float(v) for v in m) for m in re.findall(r"left:([\d.]+)px;top:([\d.]+)px", s)]
        for s in sections
    ]
    assert boxes[1] == []
    # reportlab drew "资本充足率" at x=76 and "15.44%" at x=256, baseline y=666 (A4: 842 pt high); the
    # report's image is at 100 dpi
    scale, lefts = 100 / 72, sorted(x for x, _ in boxes[0])
    assert len(lefts) == 2 and abs(lefts[0] - 76 * scale) < 6 and abs(lefts[1] - 256 * scale) < 6
    assert all(abs(top - (842 - 676) * scale) < 8 for _, top in boxes[0])


def test_quote_rects_cover_the_quoted_part_of_each_line_of_a_row():
    lines = [
        OcrLine("Total assets", 70, 736, 130, 750),
        OcrLine("$1,234,567", 300, 737, 360, 750),
        OcrLine("Net income $98,765", 70, 700, 250, 714),
    ]
    assert [[x.text for x in row] for row in rows(lines)] == [
        ["Total assets", "$1,234,567"],
        ["Net income $98,765"],
    ]
    assert quote_rects(lines, "Total assets $ 1,234,567") == [(70, 736, 130, 750), (300, 737, 360, 750)]
    (left, bottom, right, top), *rest = quote_rects(lines, "$98,765")  # the last 7 of 18 characters
    assert not rest and (bottom, top) == (700, 714) and left == pytest.approx(70 + 11 * 10) and right == 250
    assert quote_rects(lines, "Goodwill 12,345") == []


# ---- the pieces, without the engine -----------------------------------------------------------
def test_parse_pdf_reads_image_pages_with_the_given_ocr_and_keeps_text_pages(collection):
    calls = []

    def fake_ocr(page, number):
        calls.append(number)
        return [
            OcrLine("营业收入 328,781.16", 72, 700, 300, 712),
            OcrLine("Page .......... 3", 72, 60, 200, 70),
        ]

    doc = parse_pdf(collection["pdf_dir"] / "mixed.pdf", ocr=fake_ocr)
    assert calls == [3] and doc.ocr_pages == [3] and doc.scanned_pages == []
    assert doc.pages[2].text.split() == ["营业收入", "328,781.16", "Page", "3"]  # dot leaders dropped
    with pytest.raises(ParseError, match="OCR found no text") as info:
        parse_pdf(collection["pdf_dir"] / "scan_zh.pdf", ocr=lambda page, number: [])
    assert info.value.kind == "scanned"


def test_the_page_cache_reads_each_page_once_and_skips_a_page_that_fails(tmp_path, caplog):
    read = []

    def engine(page):
        read.append(page)
        if page == "bad":
            raise RuntimeError("odd image")
        return [OcrLine("资本充足率 15.44%", 1, 2, 3, 4, 0.99)]

    cache = OcrCache(tmp_path, "engine-1")
    first = PageOcr(cache, "hash", read=engine)
    assert first("p1", 1) == [OcrLine("资本充足率 15.44%", 1, 2, 3, 4, 0.99)]
    assert first("bad", 2) == [] and "odd image" in first.failed[2]
    second = PageOcr(cache, "hash", read=engine)
    assert second("p1", 1) == first.lines[1] and second.cached == 1
    second("bad", 2)  # a failure is not cached: tried again next time
    assert read == ["p1", "bad", "bad"]
    assert OcrCache(tmp_path, "engine-2").get("hash", 1) is None  # another engine reads again
    (tmp_path / "ocr" / "engine-1" / "hash" / "1.json").write_text("[[", encoding="utf-8")
    assert cache.get("hash", 1) is None  # damaged: read again


def test_a_document_is_rebuilt_when_its_image_pages_would_be_read_otherwise():
    assert outdated({"scanned_pages": 2}, "rapidocr-x")  # OCR now available
    assert outdated({"ocr_pages": 2, "ocr_engine": "rapidocr-x"}, None)  # OCR turned off
    assert outdated({"ocr_pages": 2, "ocr_engine": "rapidocr-x"}, "rapidocr-y")  # another engine
    assert not outdated({"ocr_pages": 2, "ocr_engine": "rapidocr-x"}, "rapidocr-x")
    assert not outdated({"scanned_pages": 0}, "rapidocr-x")  # text only: OCR never mattered


def test_the_progress_bar_shows_the_pages_ocrd_so_far():
    class Bar:
        postfix, n = "", 0

        def set_postfix_str(self, text, refresh=True):
            self.postfix = text

        def update(self, n=1):
            self.n += n

    results = [jobs.DocResult("a", "cached", ocr_pages=5), jobs.DocResult("b", "built")]
    bar = OcrProgress(Bar(), results)
    bar.update()
    assert bar.postfix == "" and bar.n == 1  # nothing OCR'd in this build yet
    results.append(jobs.DocResult("c", "built", ocr_pages=4, ocr_cached=1, ocr_seconds=31.2))
    bar.update()
    assert bar.postfix == "OCR 3 pages 31 s" and bar.n == 2


def test_an_empty_checkbox_read_as_a_character_is_a_box_again_only_beside_a_tick():
    assert ocr.cleaned(" 是否参照GRI标准编制：口是√否 ") == "是否参照GRI标准编制：□是√否"
    assert ocr.cleaned("√是 口否") == "√是 □否"
    assert ocr.cleaned("人口是否增长") == "人口是否增长"  # no tick: the word 人口 (population)


def test_a_job_keeps_its_ocr_engine_through_a_plain_tuple():
    job = jobs.Job("a", "a.pdf", "f", None, "ngram", "figures", "rapidocr-x")
    assert jobs.Job(*tuple(job)).ocr_engine == "rapidocr-x"  # how Ray hands it to a worker


def test_build_options_refuse_an_unknown_ocr_mode():
    assert build.BuildOptions(ocr="off").ocr == "off"
    with pytest.raises(ValueError, match="auto, off"):
        build.BuildOptions(ocr="tesseract")


def test_the_ocr_cache_counts_the_pages_written_since_a_moment(tmp_path):
    cache = OcrCache(tmp_path, "engine-1")
    assert cache.pages_written_since(0) == 0  # nothing read yet: no folder
    cache.put("old", 1, [])
    old = cache.root / "old"
    for path in (old / "1.json", old):
        os.utime(path, (1_000, 1_000))  # cached by an earlier build
    start = time.time() - 1
    cache.put("doc", 1, [OcrLine("a", 1, 2, 3, 4)])
    cache.put("doc", 2, [])
    (cache.root / "doc" / "3.json.123.tmp").write_text("[", encoding="utf-8")  # a page being written
    assert cache.pages_written_since(start) == 2
    cache.put("old", 2, [])  # a document read again after a change: its new page counts, its old one not
    assert cache.pages_written_since(start) == 3


def test_the_progress_bar_counts_pages_while_a_long_scan_is_still_being_read(
    collection, tmp_path, monkeypatch
):
    """Issue 33: a 300-page scan is one document for the bar; its pages are counted as they are read."""
    import tqdm

    postfixes: list[str] = []
    shown = {n: threading.Event() for n in range(1, 5)}

    class Bar:  # what build_index draws on: records the postfix it is given
        disable = False

        def __init__(self, *args, **kwargs):
            pass

        def set_postfix_str(self, text, refresh=True):
            postfixes.append(text)
            match = re.match(r"OCR (\d+) pages", text)
            if match:
                shown[int(match[1])].set()

        def update(self, n=1):
            pass

        def close(self):
            pass

    seen_before_next = []

    def read_page(page):
        done = len(seen_before_next)
        # the second and third pages wait until the bar has shown the pages before them: counted live
        seen_before_next.append(shown[done].wait(10) if done else True)
        return [OcrLine("营业收入 328,781.16", 72, 700, 300, 712)]

    monkeypatch.setattr(tqdm, "tqdm", Bar)
    monkeypatch.setenv("COLLATE_OCR_PAGES", "1")  # one page at a time: the waits above are in page order
    monkeypatch.setattr(ocr, "read_page", read_page)
    monkeypatch.setattr(OcrProgress, "TICK", 0.02)
    pdf_dir = tmp_path / "pdf"
    _merge(pdf_dir.mkdir() or pdf_dir / "long.pdf", *[collection["pdf_dir"] / "scan_zh.pdf"] * 2)
    catalog = tmp_path / "catalog.jsonl"
    catalog.write_text(json.dumps({**ROWS[0], "id": "long"}, ensure_ascii=False) + "\n", encoding="utf-8")
    report = build.build_index(
        Catalog.load(catalog), pdf_dir, tmp_path / "index", workers=1, embedder="hashing-256", ocr="auto"
    )
    assert report.results[0].ocr_page_numbers == [1, 2, 3, 4]
    assert seen_before_next == [True, True, True, True]
    assert postfixes[-1].startswith("OCR 4 pages")


def test_pages_read_side_by_side_read_as_one_at_a_time_and_are_each_cached(collection, tmp_path, monkeypatch):
    threads = set()

    def recognise(picture, settings=None):  # what a page "reads" depends on its picture alone
        threads.add(threading.current_thread().name)
        return [OcrLine(f"ink {int(picture.image.mean())} {picture.image.shape}", *picture.origin, 300, 700)]

    monkeypatch.setattr(ocr, "recognise", recognise)
    pdf = _merge(
        tmp_path / "long.pdf",
        collection["pdf_dir"] / "scan_zh.pdf",  # 2 image pages
        collection["pdf_dir"] / "mixed.pdf",  # 2 text pages, then an image page
        collection["pdf_dir"] / "scan_zh.pdf",
    )
    one = PageOcr(OcrCache(tmp_path / "one", "e"), "h", read=lambda page: ocr.recognise(ocr.render(page)))
    alone = parse_pdf(pdf, ocr=one)
    assert threads == {threading.current_thread().name}
    threads.clear()
    side = PageOcr(OcrCache(tmp_path / "side", "e"), "h", at_once=2)
    together = parse_pdf(pdf, ocr=side)
    assert together.ocr_pages == alone.ocr_pages == [1, 2, 5, 6, 7]
    assert side.lines == one.lines and [p.text for p in together.pages] == [p.text for p in alone.pages]
    assert threads and all(name.startswith("ocr-page") for name in threads)  # not the caller's thread
    assert side.cached == 0 and OcrCache(tmp_path / "side", "e").pages_written_since(0) == 5
    again = PageOcr(OcrCache(tmp_path / "side", "e"), "h", at_once=2)
    parse_pdf(pdf, ocr=again)
    assert again.cached == 5 and {n: [x.text for x in v] for n, v in again.lines.items()} == {
        n: [x.text for x in v] for n, v in one.lines.items()
    }


def test_a_page_that_fails_in_a_reading_thread_leaves_the_others_read(collection, tmp_path, monkeypatch):
    scan = pdfium.PdfDocument(str(collection["pdf_dir"] / "scan_zh.pdf"))
    odd = ocr.render(scan[1]).image  # page 2's picture
    scan.close()

    def recognise(picture, settings=None):
        if np.array_equal(picture.image, odd):
            raise RuntimeError("odd image")
        return [OcrLine("营业收入 328,781.16", 72, 700, 300, 712)]

    monkeypatch.setattr(ocr, "recognise", recognise)
    reader = PageOcr(OcrCache(tmp_path, "e"), "h", at_once=2)
    doc = parse_pdf(collection["pdf_dir"] / "scan_zh.pdf", ocr=reader)
    assert list(reader.failed) == [2] and "odd image" in reader.failed[2]
    assert doc.ocr_pages == [1] and OcrCache(tmp_path, "e").pages_written_since(0) == 1
