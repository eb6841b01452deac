"""What the index build does about pages without a text layer (`--ocr auto|off`), and how it says so.

auto: pages that are only images are read by OCR (retrievers.documents.ocr) when the engine is installed; pages
with a text layer keep it, so a mixed document is OCR'd only where it must be. off: they stay unread,
and a document of nothing but such pages fails with the fix (the behaviour before OCR).

OCR costs seconds of CPU a page against milliseconds for a text layer (bench/README.md): the progress
bar counts the pages OCR'd as they are read (a 300-page scan is one document for the bar: without the
count it would sit still for most of an hour), and the build's summary says how many pages were OCR'd
and how long it took, so a slow build explains itself.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from pathlib import Path

from retrievers.building.ocr_cache import OcrCache, PageOcr
from retrievers.documents.ocr import engine_key

OCR_MODES = ("auto", "off")
NO_ENGINE_FIX = (
    "build with --ocr auto after pip install 'rapidocr-onnxruntime==1.4.4', or run OCR (e.g. ocrmypdf) on the "
    "file, and rebuild"
)
ILLEGIBLE_FIX = (
    "OCR found no text there: check the scan is legible (not blank), or read it with another OCR tool "
    "(e.g. ocrmypdf) and rebuild"
)


def resolve_ocr(mode: str) -> str | None:
    """The engine key the build reads image-only pages with; None: they are not read (off, or no engine)."""
    if mode not in OCR_MODES:
        raise ValueError(f"ocr={mode!r}: use one of {', '.join(OCR_MODES)}")
    return engine_key() if mode == "auto" else None


def page_reader(engine: str | None, index_dir: Path, content_hash: str | None) -> PageOcr | None:
    """parse_pdf's OCR step for one document (cached in the index), or None when OCR is off."""
    if engine is None or content_hash is None:
        return None
    return PageOcr(OcrCache(index_dir, engine), content_hash)


def outdated(meta: dict, engine: str | None) -> bool:
    """Whether a built document must be rebuilt because its image-only pages were read otherwise
    (OCR turned on or off, another engine version). A document without such pages never is."""
    image_pages = meta.get("scanned_pages", 0) + meta.get("ocr_pages", 0)
    return bool(image_pages) and meta.get("ocr_engine") != engine


def scanned_fix(ocr_engine: str | None) -> str:
    """What to do about pages left without text: install or turn on OCR, or, if it ran, look at the scan."""
    return ILLEGIBLE_FIX if ocr_engine else NO_ENGINE_FIX


class OcrProgress:
    """The build's progress bar, with the pages OCR'd so far after the count ("OCR 12 pages 118 s").

    Wraps the tqdm bar both the process pool and the Ray build update once a document is done; it reads
    the results they append before each update (pages and OCR seconds of finished documents). Given the
    build's OCR cache, a thread also counts, every TICK seconds, the pages workers have cached since the
    build began: pages of documents still being read, which the results do not hold yet."""

    TICK = 2.0  # seconds between two looks at the cache: a page takes seconds to read

    def __init__(self, bar, results: list, cache: OcrCache | None = None):
        self.bar, self.results, self.seen = bar, results, 0
        self.pages, self.seconds = 0, 0.0  # of finished documents
        self.live = 0  # pages cached since the start, finished documents or not
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._watch = None
        if cache is not None and not getattr(bar, "disable", False):
            started = time.time() - 1  # a page cached in the build's first second is its own
            self._watch = threading.Thread(target=self._count, args=(cache, started), daemon=True)
            self._watch.start()

    def _count(self, cache: OcrCache, started: float) -> None:
        while not self._stop.wait(self.TICK):
            self.tick(cache.pages_written_since(started))

    def tick(self, live: int) -> None:
        """The number of pages OCR'd in this build so far, as counted in the cache."""
        with self._lock:
            if live > self.live:
                self.live = live
                self._show(refresh=True)

    def _show(self, refresh: bool) -> None:
        pages = max(self.pages, self.live)
        if pages:
            seconds = f" {self.seconds:.0f} s" if self.seconds else ""
            self.bar.set_postfix_str(f"OCR {pages} pages{seconds}", refresh=refresh)

    def update(self, n: int = 1):
        with self._lock:
            for result in self.results[self.seen :]:
                self.pages += result.ocr_pages - result.ocr_cached if result.status == "built" else 0
                self.seconds += result.ocr_seconds
            self.seen = len(self.results)
            self._show(refresh=False)
            return self.bar.update(n)

    def close(self):
        self._stop.set()
        if self._watch is not None:
            self._watch.join()
        return self.bar.close()

    def __getattr__(self, name):
        return getattr(self.bar, name)


def summary(results: Iterable) -> str | None:
    """One line for the build's summary, or None when no page was read by OCR."""
    built = [r for r in results if r.status == "built" and r.ocr_pages]
    if not built:
        return None
    pages = sum(r.ocr_pages for r in built)
    cached = sum(r.ocr_cached for r in built)
    seconds = sum(r.ocr_seconds for r in built)
    read = pages - cached
    rate = f", {read / seconds:.2f} pages/s" if read and seconds > 0 else ""
    reused = f"; {cached} from the OCR cache" if cached else ""
    return (
        f"OCR: {pages} page(s) of {len(built)} document(s) without a text layer read by OCR, "
        f"{read} now in {seconds:.1f} s{rate}{reused}"
    )


def manifest_fields(results: list, engine: str | None) -> dict:
    """The manifest's record of OCR: the engine, pages read (now and in all), time spent, pages per document."""
    return {
        "ocr_engine": engine,
        "ocr_pages": sum(r.ocr_pages for r in results if r.status != "failed"),
        "ocr_pages_read_now": sum(r.ocr_pages - r.ocr_cached for r in results if r.status == "built"),
        "ocr_seconds": round(sum(r.ocr_seconds for r in results), 3),
        "ocr": {r.doc_id: r.ocr_page_numbers for r in results if r.ocr_page_numbers and r.status != "failed"},
    }
