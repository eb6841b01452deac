"""OCR results kept with the index, so a rebuild never reads the same page twice.

    <index>/ocr/<engine key>/<file sha256>/<page>.json    one page's lines: [[text, left, bottom, right, top, score], ...]

Keyed by the file's hash, the page number and the engine key (engine, its version, onnxruntime's
version, resolution, our OCR_VERSION: retrievers.documents.ocr.engine_key): the same bytes read the same way give the same lines, so a
document re-indexed for any other reason (a parser or chunker change, another embedder) reuses them,
and a file moved or renamed does too. One file per page, written whole (temp file + rename): a build
interrupted in the middle of a long scan resumes at the first page it had not read. Ray workers write
here as well (the index is on storage every node mounts).

A built document also keeps its OCR'd pages' lines in its own folder (retrievers.documents.ocr_lines
DOCUMENT_FILE), which the audit report reads to box quotes on those pages: the index serves them
without the cache.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from retrievers.documents.ocr_lines import OcrLine
from signatures import environment

log = logging.getLogger(__name__)

OCR_DIR = "ocr"


class OcrCache:
    def __init__(self, index_dir: str | Path, engine_key: str):
        self.root = Path(index_dir) / OCR_DIR / engine_key

    def _path(self, content_hash: str, number: int) -> Path:
        return self.root / content_hash / f"{number}.json"

    def get(self, content_hash: str, number: int) -> list[OcrLine] | None:
        """The cached lines of a page; None when it was never read (or its file is damaged)."""
        try:
            rows = json.loads(self._path(content_hash, number).read_text(encoding="utf-8"))
            return [OcrLine.from_list(row) for row in rows]
        except (OSError, ValueError, TypeError, IndexError):
            return None

    def pages_written_since(self, start: float) -> int:
        """Pages read and cached since `start` (time.time()), by any process: a build's live OCR count.

        Only folders changed since then are listed (a file added touches its folder), so an index holding
        thousands of OCR'd documents costs one stat each of theirs."""
        written = 0
        try:
            folders = list(os.scandir(self.root))
        except OSError:
            return 0  # nothing read yet
        for folder in folders:
            try:
                if not folder.is_dir() or folder.stat().st_mtime < start:
                    continue
                for entry in os.scandir(folder.path):
                    if entry.name.endswith(".json") and entry.stat().st_mtime >= start:
                        written += 1
            except OSError:
                continue  # removed meanwhile
        return written

    def put(self, content_hash: str, number: int, lines: list[OcrLine]) -> None:
        path = self._path(content_hash, number)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps([x.to_list() for x in lines], ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)


def pages_at_once() -> int:
    """How many pages one document reads side by side (COLLATE_OCR_PAGES; default the machine's cores, at most 2).

    A document is one process's work, so without this a 300-page scan used one core of two for most of an
    hour; onnxruntime lets go of the GIL while it runs, so threads of one process read pages in parallel."""
    return environment.positive_int("COLLATE_OCR_PAGES", max(1, min(2, os.cpu_count() or 1)))


_POOL: tuple[int, int, ThreadPoolExecutor] | None = None  # (pid, threads, pool): one per process, kept
_POOL_LOCK = threading.Lock()


def _reading_pool(threads: int) -> ThreadPoolExecutor:
    """The threads that read pages, kept for the process's life so each loads its engine once (~0.5 s)."""
    global _POOL
    with _POOL_LOCK:
        # a forked build worker inherits the parent's pool object but none of its threads: made anew there
        if _POOL is None or _POOL[0] != os.getpid() or _POOL[1] != threads:
            _POOL = (os.getpid(), threads, ThreadPoolExecutor(threads, thread_name_prefix="ocr-page"))
        return _POOL[2]


class PageOcr:
    """The OCR step of one document, for retrievers.documents.pdf.parse_pdf(ocr=...): each image-only page from
    the cache, else read and cached. Keeps what it gave (lines), and counts what it did.

    parse_pdf asks for one page at a time; the engine reads `at_once` pages side by side: asked for a page,
    this renders it and the next image-only pages not cached (pdfium is only called from the caller's thread)
    and hands them to the reading threads; each page is cached as soon as it is read. What a page reads
    does not depend on which thread read it or when. A given `read` (tests) reads one page at a time."""

    def __init__(
        self, cache: OcrCache, content_hash: str, read: Callable | None = None, at_once: int | None = None
    ):
        from retrievers.documents.ocr import read_page

        self.side_by_side = read is None
        self.cache, self.content_hash = cache, content_hash
        self.read: Callable = read or read_page
        self.at_once = at_once or pages_at_once()
        self.lines: dict[int, list[OcrLine]] = {}
        self.cached = 0  # pages taken from the cache
        self.seconds = 0.0  # time spent reading pages now, summed over pages (threads read them side by side)
        self.failed: dict[int, str] = {}  # page -> what went wrong (the page stays without text)
        self._ahead: dict[int, Future] = {}  # page -> its reading, handed out before parse_pdf asked
        self._looked = 0  # pages up to this one were considered for reading ahead

    def __call__(self, page, number: int) -> list[OcrLine]:
        hit = None if number in self._ahead else self.cache.get(self.content_hash, number)
        if hit is not None:
            self.cached += 1
            self.lines[number] = hit
            return hit
        from retrievers.documents.ocr import OcrUnavailable

        start = time.perf_counter()
        try:
            if self.at_once > 1 and self.side_by_side:
                lines, spent = self._side_by_side(page, number)
                self.seconds += spent
            else:
                try:
                    lines = self.read(page)
                finally:
                    self.seconds += time.perf_counter() - start
                self.cache.put(self.content_hash, number, lines)
        except OcrUnavailable:
            raise  # no page can be read: the document fails with the fix
        except Exception as exc:  # one odd image must not sink the document's other pages
            log.warning("OCR failed on page %d: %s: %s", number, type(exc).__name__, exc)
            self.failed[number] = f"{type(exc).__name__}: {exc}"
            return []
        self.lines[number] = lines
        return lines

    def _side_by_side(self, page, number: int) -> tuple[list[OcrLine], float]:
        from retrievers.documents import ocr

        pool = _reading_pool(self.at_once)
        if number not in self._ahead:
            self._ahead[number] = pool.submit(self._read_rendered, ocr.render(page), number)
        self._looked = max(self._looked, number)
        document = page.pdf
        while len(self._ahead) < self.at_once + 1 and self._looked < len(document):
            self._looked += 1
            ahead = self._looked
            if self.cache.get(self.content_hash, ahead) is None and _image_only(document, ahead):
                other = document[ahead - 1]
                try:
                    self._ahead[ahead] = pool.submit(self._read_rendered, ocr.render(other), ahead)
                finally:
                    other.close()
        return self._ahead.pop(number).result()

    def _read_rendered(self, picture, number: int) -> tuple[list[OcrLine], float]:
        from retrievers.documents import ocr

        start = time.perf_counter()
        lines = ocr.recognise(picture)
        spent = time.perf_counter() - start
        self.cache.put(self.content_hash, number, lines)  # now: the build's progress counts it (OcrProgress)
        return lines, spent


def _image_only(document, number: int) -> bool:
    """Whether a page holds no text but an image: parse_pdf's rule for the pages it hands to OCR."""
    from retrievers.documents.ruling import page_shapes

    page = document[number - 1]
    try:
        textpage = page.get_textpage()
        try:
            if textpage.count_chars() > 0:
                return False
        finally:
            textpage.close()
        return page_shapes(page).images > 0
    finally:
        page.close()
