"""A document's text page by page, as the fact check searches it: {page number (1-based): text}.

A quote can come from either reading of a page, so a page's text here holds both:
- the parsed reading (retrievers.documents.pdf.parse_pdf): lines rebuilt from positions, ruled tables rendered
  as "2022年 | 资本充足率 | 15.44%". It is what the extractor read in its chunks, so what an LM quotes.
- pdfium's own text layer in its reading order: what a person selecting text in a viewer copies,
  what the page's running headers still hold, and what FinanceBench's annotators marked.
A quote is then found if it is on the page in either reading. From a built index, the chunks give
the parsed reading only (page_texts_from_chunks); a chunk that runs over a page break counts for
each page it covers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import pypdfium2 as pdfium

from retrievers.documents.chunking import Chunk
from retrievers.documents.ocr_lines import OcrLine, rows
from retrievers.documents.pdf import parse_pdf


def raw_page_texts(path: str | Path) -> dict[int, str]:
    """pdfium's text layer of every page (fast: no table detection)."""
    pdf = pdfium.PdfDocument(str(path))
    try:
        texts = {}
        for i in range(len(pdf)):
            page = pdf[i]
            textpage = page.get_textpage()
            try:
                texts[i + 1] = textpage.get_text_range()
            finally:
                textpage.close()
                page.close()
        return texts
    finally:
        pdf.close()


def read_page_texts(path: str | Path, layout: bool = True) -> dict[int, str]:
    """Both readings of every page of a PDF; layout=False skips the parsed one (pdfium's text only)."""
    raw = raw_page_texts(path)
    if not layout:
        return raw
    parsed = {p.number: p.text for p in parse_pdf(path).pages}
    return {n: f"{parsed.get(n, '')}\n{text}" for n, text in raw.items()}


# pdfium is not thread-safe, and the extractor checks facts of several documents at once
_PDFIUM = threading.Lock()


class OwnPages(Mapping[int, str]):
    """pdfium's text layer of each page of a PDF, read when first asked for: what is printed on that page
    and no other (a chunk over a page break is in both pages' texts)."""

    def __init__(self, path: str | Path, count: int, ocr: Mapping[int, list[OcrLine]] | None = None):
        self.path, self.count = str(path), count
        self.ocr = ocr or {}  # pages without a text layer: what OCR read on them is what they print
        self._texts: dict[int, str] = {}

    def __getitem__(self, number: int) -> str:
        if not 1 <= number <= self.count:
            raise KeyError(number)
        if number not in self._texts:
            with _PDFIUM:
                pdf = pdfium.PdfDocument(self.path)
                try:
                    page = pdf[number - 1]
                    textpage = page.get_textpage()
                    self._texts[number] = textpage.get_text_range()
                    textpage.close()
                    page.close()
                finally:
                    pdf.close()
            if not self._texts[number].strip() and self.ocr.get(number):
                # a scanned page: its own text is what OCR read there, row by row as the parsed page reads
                lines = rows(self.ocr[number])
                self._texts[number] = "\n".join(" ".join(x.text for x in row) for row in lines)
        return self._texts[number]

    def __iter__(self) -> Iterator[int]:
        return iter(range(1, self.count + 1))

    def __len__(self) -> int:
        return self.count


class PageTexts(dict):
    """{page: text} plus `own`, each page's own text (OwnPages), when the PDF is at hand (else None), and
    `period`, the document's fiscal year (the catalog's): the column of a statement the fact check expects."""

    def __init__(
        self, texts: Mapping[int, str], own: Mapping[int, str] | None = None, period: int | None = None
    ):
        super().__init__(texts)
        self.own, self.period = own, period


def page_texts_with_own(
    chunks: Iterable[Chunk],
    pdf: str | Path | None,
    period: int | None = None,
    ocr: Mapping[int, list[OcrLine]] | None = None,
) -> PageTexts:
    """The chunks' reading of each page (page_texts_from_chunks) and, from the PDF, each page's own text:
    the fact check reads the page a quote is printed on from the latter (factcheck.check.printed_on).
    `ocr`: the lines OCR read on the pages without a text layer ({page: lines}, ocr_lines), their own text."""
    texts = page_texts_from_chunks(chunks)
    if pdf is None or not Path(pdf).is_file():
        return PageTexts(texts, period=period)
    with _PDFIUM:
        document = pdfium.PdfDocument(str(pdf))
        count = len(document)
        document.close()
    return PageTexts(texts, OwnPages(pdf, count, ocr), period)


def page_texts_from_chunks(chunks: Iterable[Chunk]) -> dict[int, str]:
    """The parsed reading of each page, from a built index's chunks (DocumentIndex.chunks)."""
    texts: dict[int, list[str]] = {}
    for chunk in chunks:
        for number in range(chunk.page, max(chunk.page, chunk.page_end) + 1):
            texts.setdefault(number, []).append(chunk.text)
    return {n: "\n".join(parts) for n, parts in sorted(texts.items())}
