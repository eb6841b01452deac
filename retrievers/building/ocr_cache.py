"""OCR results kept with the index, so a rebuild never reads the same page twice.

    <index>/ocr/<engine key>/<file sha256>/<page>.json    one page's lines: [[text, left, bottom, right, top, score], ...]

Keyed by the file's hash, the page number and the engine key (engine, its version, resolution, our
OCR_VERSION: retrievers.documents.ocr.engine_key): the same bytes read the same way give the same lines, so a
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
import time
from collections.abc import Callable
from pathlib import Path

from retrievers.documents.ocr_lines import OcrLine

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

    def put(self, content_hash: str, number: int, lines: list[OcrLine]) -> None:
        path = self._path(content_hash, number)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps([x.to_list() for x in lines], ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)


class PageOcr:
    """The OCR step of one document, for retrievers.documents.pdf.parse_pdf(ocr=...): each image-only page from
    the cache, else read by `read` and cached. Keeps what it gave (lines), and counts what it did."""

    def __init__(self, cache: OcrCache, content_hash: str, read: Callable | None = None):
        if read is None:
            from retrievers.documents.ocr import read_page as read
        self.cache, self.content_hash, self.read = cache, content_hash, read
        self.lines: dict[int, list[OcrLine]] = {}
        self.cached = 0  # pages taken from the cache
        self.seconds = 0.0  # time spent reading pages now
        self.failed: dict[int, str] = {}  # page -> what went wrong (the page stays without text)

    def __call__(self, page, number: int) -> list[OcrLine]:
        hit = self.cache.get(self.content_hash, number)
        if hit is not None:
            self.cached += 1
            self.lines[number] = hit
            return hit
        from retrievers.documents.ocr import OcrUnavailable

        if self.read is None:
            raise OcrUnavailable("this build reads no image-only page (--ocr off)", "rebuild with --ocr auto")
        start = time.perf_counter()
        try:
            lines = self.read(page)
        except OcrUnavailable:
            raise  # no page can be read: the document fails with the fix
        except Exception as exc:  # one odd image must not sink the document's other pages
            log.warning("OCR failed on page %d: %s: %s", number, type(exc).__name__, exc)
            self.failed[number] = f"{type(exc).__name__}: {exc}"
            return []
        finally:
            self.seconds += time.perf_counter() - start
        self.cache.put(self.content_hash, number, lines)
        self.lines[number] = lines
        return lines
