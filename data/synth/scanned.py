"""A PDF's pages as pictures only: the "scanned" copy of a filing, with no text layer, to test OCR against.

Each page is rendered by pdfium at `dpi` in grays and the pictures are written as a new PDF by Pillow
(one JPEG image per page, nothing else): what a scanner or a "print to image" leaves. The original keeps
its text layer, so what OCR reads can be compared with what the page says.
"""

from __future__ import annotations

from pathlib import Path

SCAN_DPI = 150


def image_only_pdf(
    source: str | Path, target: str | Path, dpi: int = SCAN_DPI, pages: list[int] | None = None
) -> Path:
    """Write `target`: the given 1-based pages of `source` (all by default) as images without text."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(source))
    try:
        numbers = pages or list(range(1, len(pdf) + 1))
        images = []
        for number in numbers:
            page = pdf[number - 1]
            try:
                images.append(page.render(scale=dpi / 72, grayscale=True).to_pil().convert("L"))
            finally:
                page.close()
    finally:
        pdf.close()
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    images[0].save(target, "PDF", save_all=True, append_images=images[1:], resolution=float(dpi))
    return target
