"""Read a page that has no text layer by OCR: RapidOCR, Chinese and English, on the CPU, offline.

RapidOCR (`rapidocr-onnxruntime` on PyPI) runs PaddleOCR's PP-OCRv4 detection and recognition models
on onnxruntime; the models ship inside the wheel, so nothing is downloaded at run time. Its one
recognition model reads Chinese and English (and digits, %, commas) alike: a synthetic A-share page
and a 10-K balance sheet came back with every figure right (bench/README.md). English words are at
times run together ("administrativeexpense"): the fact check folds spaces away (factcheck.quotes), so
quotes and values still match.

A page is rendered by pdfium at SETTINGS.dpi (render: pdfium is called from one thread at a time) and read
(recognise: any thread, an engine each); each box of text comes back as an OcrLine in page coordinates
(points, origin bottom-left), the system of pdfium's text layer, so retrievers.documents.pdf turns OCR'd pages
into Page objects like any other and the audit report boxes quotes on them. How a page is read (resolution,
detection size, recognition batch, cropping to the print, the models folded) is an OcrSettings, named in the OCR
cache's key.
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
from dataclasses import dataclass

import numpy as np
import pypdfium2.raw as pdfium_c

from retrievers.documents import ocr_models
from retrievers.documents.ocr_lines import OcrLine
from retrievers.documents.pdf import ParseError

log = logging.getLogger(__name__)

PACKAGE, MODULE, PINNED = "rapidocr-onnxruntime", "rapidocr_onnxruntime", "1.4.4"
INSTALL = f"pip install '{PACKAGE}=={PINNED}'"
# The onnxruntime builds RapidOCR may run on (PyPI distributions that install the module `onnxruntime`): the
# runtime computes the models' outputs, so another runtime or version can read a page otherwise (other
# kernels, other rounding), and names one way of reading as much as RapidOCR's own version does.
RUNTIMES = ("onnxruntime", "onnxruntime-gpu", "onnxruntime-directml", "onnxruntime-openvino")
# Bump when how a page is read changes in a way OcrSettings.key() does not name (coordinates, cleaning): the OCR
# cache (retrievers.building.ocr_cache) is keyed by it, the engine's and the runtime's versions and the settings,
# so cached pages are read again.
OCR_VERSION = 4  # 2: no angle classifier; 3: checkboxes; 4: boxes mapped to points without rounding to pixels


@dataclass(frozen=True)
class OcrSettings:
    """How a page is read: what changes the text read is in key() (and so in the OCR cache's key)."""

    dpi: int = 150
    det_limit_type: str = (
        "min"  # RapidOCR's: "min" scales the image up to det_limit_side_len, "max" down to it
    )
    det_limit_side_len: int = 736
    rec_batch: int = 6  # text boxes recognised in one onnxruntime call
    crop: bool = False  # detect and recognise within the page's inked area only (blank margins skipped)
    # the models with their affine blocks folded into the convolutions (retrievers.documents.ocr_models): the
    # same function (outputs within 1e-5), named in the key all the same since float rounding is not the same
    fold: bool = False

    def key(self) -> str:
        det = f"det-{self.det_limit_type}{self.det_limit_side_len}"
        return (
            f"{self.dpi}dpi.{det}.rec{self.rec_batch}"
            + (".crop" if self.crop else "")
            + (".fold" if self.fold else "")
        )


# What RapidOCR does by itself, at the 150 dpi the trial used: the baseline bench/ocr.py measures against.
UNTOUCHED = OcrSettings()
# What the build reads with (bench/README.md, "OCR speed"): text boxes recognised one at a time (RapidOCR's
# batches of 6 are padded to their widest box, and the recogniser's cost grows faster than its input's width:
# 0.55x the CPU), detection on the inked area only, scaled down to 960 pixels at most (~0.1 s a page each), and
# both models folded (0.69x a page again, the same boxes and text).
SETTINGS = OcrSettings(rec_batch=1, crop=True, det_limit_type="max", det_limit_side_len=960, fold=True)
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


def runtime_version() -> str:
    """The installed onnxruntime build and version ("onnxruntime-1.20.1"), from its metadata (not imported);
    "onnxruntime-unknown" when no known distribution provides it (RapidOCR then fails to load, and says so)."""
    for name in RUNTIMES:
        try:
            return f"{name}-{importlib.metadata.version(name)}"
        except importlib.metadata.PackageNotFoundError:
            continue
    return "onnxruntime-unknown"


def engine_key() -> str | None:
    """What names one way of reading pages (engine and its version, the runtime and its version, resolution,
    ours); None: no engine. An upgrade of either package reads each OCR'd page again, once."""
    version = installed_version()
    if not version:
        return None
    return f"{PACKAGE}-{version}.{runtime_version()}.{SETTINGS.key()}.v{OCR_VERSION}"


_LOAD_LOCK = threading.Lock()


def engine(settings: OcrSettings | None = None):
    """The RapidOCR engine, loaded once per process (~0.5 s) and once more per other thread that reads pages
    (its Python side keeps per-call state); OcrUnavailable with the fix when it cannot be loaded."""
    with _LOAD_LOCK:  # two threads' first pages would load it twice
        return _load_once(settings or SETTINGS, threading.get_ident())


@functools.lru_cache(maxsize=8)
def _load_once(settings: OcrSettings, thread: int):
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
    make = functools.partial(
        RapidOCR,
        intra_op_num_threads=threads,
        inter_op_num_threads=1,
        det_limit_type=settings.det_limit_type,
        det_limit_side_len=settings.det_limit_side_len,
        rec_batch_num=settings.rec_batch,
    )
    try:
        return ocr_models.load_folded(make) if settings.fold else make()
    except Exception as exc:  # a model file missing or damaged
        raise OcrUnavailable(
            f"{PACKAGE} cannot load its models ({type(exc).__name__}: {exc})",
            f"reinstall it: {INSTALL} --force-reinstall",
        ) from exc


@dataclass(frozen=True)
class PageImage:
    """A page rendered for OCR, with what maps its pixels to page points: made where pdfium may be called (one
    thread at a time), read anywhere (recognise)."""

    image: np.ndarray | None  # BGR, as opencv (and so RapidOCR) expects; None: a blank page
    origin: tuple[float, float]  # page point of pixel (0, 0) of the image
    x_axis: tuple[float, float]  # page points one pixel to the right moves
    y_axis: tuple[float, float]  # page points one pixel down moves


def read_page(page, settings: OcrSettings | None = None) -> list[OcrLine]:
    """The text of a pdfium page by OCR: one OcrLine per box the engine found, in page coordinates."""
    settings = settings or SETTINGS
    return recognise(render(page, settings), settings)


def render(page, settings: OcrSettings | None = None) -> PageImage:
    """A pdfium page as the picture OCR reads (cropped to its print when settings.crop)."""
    settings = settings or SETTINGS
    bitmap = page.render(scale=settings.dpi / 72)
    try:
        image = bitmap.to_numpy()
        width, height = bitmap.width, bitmap.height
        left, top = 0, 0
        if settings.crop:
            box = inked_box(image)
            if box is None:
                image = None  # a blank page: nothing to read
            else:
                left, top, right, bottom = box
                image = image[top:bottom, left:right]
        image = None if image is None else np.array(image)  # its own copy: the bitmap is closed below
    finally:
        bitmap.close()
    # pdfium's own mapping (page rotation and origin included), taken at three pixels: it is affine
    origin = _to_page(page, width, height, left, top, settings.dpi)
    right_end = _to_page(page, width, height, left + width, top, settings.dpi)
    bottom_end = _to_page(page, width, height, left, top + height, settings.dpi)
    x_axis = ((right_end[0] - origin[0]) / width, (right_end[1] - origin[1]) / width)
    y_axis = ((bottom_end[0] - origin[0]) / height, (bottom_end[1] - origin[1]) / height)
    return PageImage(image, origin, x_axis, y_axis)


def recognise(picture: PageImage, settings: OcrSettings | None = None) -> list[OcrLine]:
    """What OCR reads on a rendered page; safe to call from several threads at once (an engine each)."""
    settings = settings or SETTINGS
    if picture.image is None:
        return []
    # No angle classifier: it turned long upright lines of a scanned 10-K page upside down and they came
    # back as garbage ("s") or not at all: 21 of the page's 44 lines read right with it, 41 without (the other
    # 3 with one wrong letter each). Filings are printed upright; a page scanned upside down needs a
    # page-level rotation, which the classifier (one line at a time) does not give anyway.
    found, _elapsed = engine(settings)(picture.image, use_cls=False)
    lines = []
    for quad, text, score in found or []:
        text = cleaned(str(text))
        if not text:
            continue
        xs, ys = [float(p[0]) for p in quad], [float(p[1]) for p in quad]
        corners = [_mapped(picture, x, y) for x, y in ((min(xs), min(ys)), (max(xs), max(ys)))]
        (x0, y0), (x1, y1) = corners
        lines.append(OcrLine(text, min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1), float(score)))
    return lines


def _mapped(picture: PageImage, x: float, y: float) -> tuple[float, float]:
    (ox, oy), (xx, xy), (yx, yy) = picture.origin, picture.x_axis, picture.y_axis
    return ox + x * xx + y * yx, oy + x * xy + y * yy


INK = 160  # a gray level below this is print (paper and scanner noise stay above it)
MARGIN = 12  # pixels kept around the inked area: detection needs some paper around a line to find its edge


def inked_box(image) -> tuple[int, int, int, int] | None:
    """(left, top, right, bottom) in pixels of the area holding print, with a margin; None: a blank page."""
    gray = image.min(axis=2) if image.ndim == 3 else image
    dark = gray < INK
    rows, cols = np.flatnonzero(dark.any(axis=1)), np.flatnonzero(dark.any(axis=0))
    if not len(rows):
        return None
    height, width = dark.shape
    return (
        max(0, int(cols[0]) - MARGIN),
        max(0, int(rows[0]) - MARGIN),
        min(width, int(cols[-1]) + 1 + MARGIN),
        min(height, int(rows[-1]) + 1 + MARGIN),
    )


def cleaned(text: str) -> str:
    """What the engine read, with the misreadings known to be safe to undo put right (checkboxes)."""
    text = text.strip()
    return _CHECKBOX.sub("□", text) if any(tick in text for tick in _TICKS) else text


def _to_page(page, width: int, height: int, x: float, y: float, dpi: int) -> tuple[float, float]:
    """A pixel of the rendered image in page points: pdfium's own mapping (page rotation and origin included)."""
    px, py = ctypes.c_double(), ctypes.c_double()
    ok = pdfium_c.FPDF_DeviceToPage(
        page.raw, 0, 0, width, height, 0, round(x), round(y), ctypes.byref(px), ctypes.byref(py)
    )
    if not ok:  # never seen; the plain scale for an unrotated page
        return x * 72 / dpi, page.get_height() - y * 72 / dpi
    return px.value, py.value
