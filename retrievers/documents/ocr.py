"""Read a page that has no text layer by OCR: RapidOCR, Chinese and English, on the CPU, offline.

RapidOCR (`rapidocr-onnxruntime` on PyPI) runs PaddleOCR's PP-OCRv4 detection and recognition models
on onnxruntime; the models ship inside the wheel, so nothing is downloaded at run time. Its one
recognition model reads Chinese and English (and digits, %, commas) alike: a synthetic A-share page
and a 10-K balance sheet came back with every figure right (bench/README.md). English words are at
times run together ("administrativeexpense"): the fact check folds spaces away (factcheck.quotes), so
quotes and values still match.

A page is rendered by pdfium at DPI and read; each box of text comes back as an OcrLine in page
coordinates (points, origin bottom-left), the system of pdfium's text layer, so retrievers.documents.pdf turns
OCR'd pages into Page objects like any other and the audit report boxes quotes on them.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.metadata
import importlib.util
import logging
import os
import re
import threading

import pypdfium2.raw as pdfium_c

from retrievers.documents.ocr_lines import OcrLine
from retrievers.documents.pdf import ParseError

log = logging.getLogger(__name__)

PACKAGE, MODULE, PINNED = "rapidocr-onnxruntime", "rapidocr_onnxruntime", "1.4.4"
INSTALL = f"pip install '{PACKAGE}=={PINNED}'"
# 150 dpi: what the trial used (all 15 numbers of 3 real A-share pages read right). On a synthetic 10-K
# page 120 dpi read the same 30 numbers in 0.9x the time: recognition, ~80% of a page's time, reads 48-px-high
# crops of each line whatever the resolution, so a lower one saves little and small print was not tried.
DPI = 150
# Bump when how a page is read changes (rendering, engine settings, coordinates): the OCR cache
# (retrievers.building.ocr_cache) is keyed by it with the engine's version, so cached pages are read again.
OCR_VERSION = 3  # 2: no angle classifier; 3: checkboxes
# An empty checkbox before 是/否 reads as the character 口 ("是否参照GRI标准编制：口是√否"); in a line that
# also holds a tick it can only be the box. 1 of 49 truth strings of the bench's scans was lost to it.
_CHECKBOX = re.compile(r"口(?=\s*[是否])")
_TICKS = "√☑✓■"


class OcrUnavailable(ParseError):
    """The OCR engine cannot be loaded: not installed, a system library missing, or damaged models."""

    def __init__(self, message: str, fix: str):
        super().__init__("ocr", message, fix)


def installed_version() -> str | None:
    """The installed RapidOCR's version, or None when it is not installed (checked without importing it)."""
    if importlib.util.find_spec(MODULE) is None:
        return None
    try:
        return importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        return None


def engine_key() -> str | None:
    """What names one way of reading pages (engine, its version, resolution, ours); None: no engine."""
    version = installed_version()
    return f"{PACKAGE}-{version}.{DPI}dpi.v{OCR_VERSION}" if version else None


_LOAD_LOCK = threading.Lock()


def engine():
    """The RapidOCR engine, loaded once per process (~0.5 s); OcrUnavailable with the fix when it cannot be."""
    with _LOAD_LOCK:  # two threads' first pages would load it twice
        return _load_once()


@functools.lru_cache(maxsize=1)
def _load_once():
    if installed_version() is None:
        raise OcrUnavailable(
            f"the OCR engine {PACKAGE} is not installed",
            f"{INSTALL} (its models ship inside the wheel: nothing is downloaded), or build with --ocr off",
        )
    try:
        from rapidocr_onnxruntime import RapidOCR
    except ImportError as exc:  # opencv needs libGL and glib from the system
        raise OcrUnavailable(
            f"{PACKAGE} is installed but cannot be imported ({exc})",
            "install the system libraries it needs (apt-get install libgl1 libglib2.0-0) and rebuild",
        ) from exc
    # One thread per process, like MiniLM's: the build's processes are the parallelism. On 2 busy cores a
    # page took 10.3 s on one thread and 18.8 s on two (bench/README.md).
    threads = int(os.environ.get("COLLATE_TORCH_THREADS", "1"))
    # Detection boxes at RapidOCR's own size (unclip_ratio 1.6): 2.0 read a figure touching a table rule
    # whole but lost more figures of real 10-K pages (762 vs 765 of 791 numbers on 14 pages, bench/README.md).
    try:
        return RapidOCR(intra_op_num_threads=threads, inter_op_num_threads=1)
    except Exception as exc:  # a model file missing or damaged
        raise OcrUnavailable(
            f"{PACKAGE} cannot load its models ({type(exc).__name__}: {exc})",
            f"reinstall it: {INSTALL} --force-reinstall",
        ) from exc


def read_page(page) -> list[OcrLine]:
    """The text of a pdfium page by OCR: one OcrLine per box the engine found, in page coordinates."""
    bitmap = page.render(scale=DPI / 72)
    try:
        image = bitmap.to_numpy()  # BGR, as opencv (and so RapidOCR) expects
        width, height = bitmap.width, bitmap.height
        # No angle classifier: it turned long upright lines of a scanned 10-K page upside down and they came
        # back as garbage ("s") or not at all: 21 of the page's 44 lines read right with it, 41 without (the other
        # 3 with one wrong letter each). Filings are printed upright; a page scanned upside down needs a
        # page-level rotation, which the classifier (one line at a time) does not give anyway.
        found, _elapsed = engine()(image, use_cls=False)
    finally:
        bitmap.close()
    lines = []
    for quad, text, score in found or []:
        text = cleaned(str(text))
        if not text:
            continue
        xs, ys = [p[0] for p in quad], [p[1] for p in quad]
        corners = [_to_page(page, width, height, x, y) for x, y in ((min(xs), min(ys)), (max(xs), max(ys)))]
        (x0, y0), (x1, y1) = corners
        lines.append(OcrLine(text, min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1), float(score)))
    return lines


def cleaned(text: str) -> str:
    """What the engine read, with the misreadings known to be safe to undo put right (checkboxes)."""
    text = text.strip()
    return _CHECKBOX.sub("□", text) if any(tick in text for tick in _TICKS) else text


def _to_page(page, width: int, height: int, x: float, y: float) -> tuple[float, float]:
    """A pixel of the rendered image in page points: pdfium's own mapping (page rotation and origin included)."""
    px, py = ctypes.c_double(), ctypes.c_double()
    ok = pdfium_c.FPDF_DeviceToPage(
        page.raw, 0, 0, width, height, 0, round(x), round(y), ctypes.byref(px), ctypes.byref(py)
    )
    if not ok:  # never seen; the plain scale for an unrotated page
        return x * 72 / DPI, page.get_height() - y * 72 / DPI
    return px.value, py.value
