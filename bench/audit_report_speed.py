"""The audit report's page images: 16 grays by a lookup table vs PIL's median cut (the baseline).

    python -m bench.audit_report_speed [--pdf FILE] [--pages 12]

Renders the pages as the report does (100 dpi, grayscale), then makes each a 16-gray PNG both ways;
prints CPU ms a page, the PNG's mean size and the ratio. Default PDF: the first real filing under
../shared/realdocs, else a synthetic filing written with data.synth's layouts.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

import pypdfium2 as pdfium

from programs.audit_report import GRAYS, RENDER_SCALE, in_grays

ROOT = Path(__file__).resolve().parents[1]


def default_pdf() -> Path | None:
    found = sorted((ROOT.parent / "shared" / "realdocs").glob("*/pdf/*.pdf"))
    return found[0] if found else None


def measure(images, make) -> tuple[float, int]:
    start, size = time.process_time(), 0
    for image in images:
        buffer = io.BytesIO()
        make(image).save(buffer, format="PNG")
        size += len(buffer.getvalue())
    return (time.process_time() - start) / len(images) * 1000, size // len(images)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.audit_report_speed", description=__doc__.split("\n")[0])
    p.add_argument("--pdf", type=Path, default=None, help="a PDF (default: a real filing under ../shared)")
    p.add_argument("--pages", type=int, default=12)
    args = p.parse_args(argv)
    path = args.pdf or default_pdf()
    if path is None or not path.is_file():
        print(
            "error: no PDF: pass --pdf FILE (or place ../shared/realdocs beside the clone)", file=sys.stderr
        )
        return 2
    pdf = pdfium.PdfDocument(str(path))
    first = max(0, len(pdf) // 3)
    numbers = range(first, min(len(pdf), first + args.pages))
    images = [pdf[n].render(scale=RENDER_SCALE, grayscale=True).to_pil() for n in numbers]
    baseline = measure(images, lambda image: image.quantize(GRAYS))
    shipped = measure(images, in_grays)
    print(f"{path.name}, {len(images)} pages at 100 dpi")
    print(f"baseline, median cut ({GRAYS} colours): {baseline[0]:.1f} ms a page, {baseline[1]:,} bytes a PNG")
    print(f"shipped, {GRAYS} even grays:          {shipped[0]:.1f} ms a page, {shipped[1]:,} bytes a PNG")
    print(f"ratio: {baseline[0] / shipped[0]:.1f}x faster, PNG {shipped[1] / baseline[1]:.2f}x the size")
    return 0


if __name__ == "__main__":
    sys.exit(main())
