"""One document's build: its job, the content-hash cache check, parse + chunk + embed + save, its result.

What a worker process (or a Ray task, retrievers.building.ray) runs; the collection-level build
(retrievers.building.build) hands jobs out and collects results.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from retrievers.building.ocr_build import outdated, page_reader
from retrievers.building.swap import staging_folder, swap_in
from retrievers.documents.chunking import CHUNKER_VERSION
from retrievers.documents.ocr_lines import save_document_lines
from retrievers.documents.pdf import PARSER_VERSION
from retrievers.embedding.dense_text import DENSE_TEXT_VERSION
from retrievers.indexing.checksums import CHECKSUMS, damaged_files, seal, sha256_of
from retrievers.indexing.document_index import FORMAT_VERSION, DocumentIndex
from retrievers.indexing.lexical import LEXICAL_VERSION
from retrievers.indexing.store import read_meta

log = logging.getLogger(__name__)

# Part of the cache key: a document is re-parsed when the parser or chunker changes, not only its bytes.
PIPELINE = f"pdf{PARSER_VERSION}.chunk{CHUNKER_VERSION}.lex{LEXICAL_VERSION}"


@dataclass
class DocResult:
    doc_id: str
    status: str  # built | cached | failed
    pages: int = 0
    chunks: int = 0
    content_hash: str | None = None
    scanned_pages: int = 0
    scanned_page_numbers: list[int] = field(default_factory=list)
    kept_previous: bool = False  # failed now, its last good index stays in place (and is searched)
    kind: str = ""
    message: str = ""
    fix: str = ""
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    ocr_engine: str | None = (
        None  # what read its image-only pages (retrievers.documents.ocr); None: OCR off or absent
    )
    ocr_pages: int = 0  # pages read by OCR (from the OCR cache or now)
    ocr_page_numbers: list[int] = field(default_factory=list)
    ocr_cached: int = 0  # of those, taken from the OCR cache
    ocr_seconds: float = 0.0  # time spent reading pages by OCR now


def file_hash(path: Path) -> str:
    return sha256_of(path)


class Job(NamedTuple):
    """One document to index: what cached_result and build_document read (a tuple: it pickles to workers)."""

    doc_id: str
    pdf: str
    folder: str
    embedder_name: str | None  # None: BM25 only
    tokenizer: str
    dense_chunks: str = "figures"  # which chunks the embedder reads (retrievers/dense_text.py)
    ocr_engine: str | None = (
        None  # reads image-only pages (retrievers.building.ocr_build.resolve_ocr); None: not read
    )


def cached_result(job: Job) -> DocResult | None:
    """The result of an earlier build when the file, embedder (and what it reads), tokenizer and pipeline
    are unchanged."""
    doc_id, embedder_name, tokenizer = job.doc_id, job.embedder_name, job.tokenizer
    pdf_path = Path(job.pdf)
    meta = read_meta(Path(job.folder))  # None when never built, or unreadable (then rebuilt)
    if meta is None or not pdf_path.is_file():
        return None
    content_hash = file_hash(pdf_path)
    key = ("format_version", "pipeline", "content_hash", "embedder", "tokenizer")
    if tuple(meta.get(k) for k in key) != (FORMAT_VERSION, PIPELINE, content_hash, embedder_name, tokenizer):
        return None
    if embedder_name and (meta.get("dense_chunks"), meta.get("dense_text")) != (
        job.dense_chunks,
        DENSE_TEXT_VERSION,
    ):
        return None  # the embedder would read other chunks, or read them otherwise: re-embed
    if outdated(meta, job.ocr_engine):
        return None  # its image-only pages would be read otherwise (OCR on or off, another engine)
    if not _files_intact(job.doc_id, Path(job.folder), meta):
        return None
    return DocResult(
        doc_id,
        "cached",
        pages=meta.get("pages", 0),
        chunks=meta["chunks"],
        content_hash=content_hash,
        scanned_pages=meta.get("scanned_pages", 0),
        scanned_page_numbers=meta.get("scanned_page_numbers", []),
        ocr_engine=meta.get("ocr_engine"),
        ocr_pages=meta.get("ocr_pages", 0),
        ocr_page_numbers=meta.get("ocr_page_numbers", []),
    )


def _files_intact(doc_id: str, folder: Path, meta: dict) -> bool:
    """Whether the index files are the ones its build wrote (their checksums, retrievers.indexing.checksums).

    An index built before checksums is trusted as before and sealed now, so damage from here on is
    caught (rebuilding every such index on upgrade would cost a collection's whole build)."""
    recorded = meta.get(CHECKSUMS)
    if recorded is None:
        try:
            seal(folder, meta)
        except OSError as exc:  # a read-only or full disk: the index is still usable, unsealed
            log.warning(
                "%s: could not record its index checksums (%s); it stays trusted as built", doc_id, exc
            )
        return True
    damaged = damaged_files(folder, recorded)
    if damaged:
        log.warning(
            "%s: index file(s) %s changed on disk since they were built: rebuilding it",
            doc_id,
            ", ".join(damaged),
        )
    return not damaged


def build_document(job: Job) -> DocResult:
    """Parse, chunk, embed (unless embedder_name is None) and save one document. Never raises.

    build_index checks the cache (cached_result, a hash of the whole file) before handing a
    document out, so it is not checked again here.
    """
    from retrievers.documents.chunking import chunk_pages
    from retrievers.documents.pdf import ParseError, parse_pdf
    from retrievers.embedding.embedders import get_embedder

    start = time.perf_counter()
    pdf_path, out = Path(job.pdf), Path(job.folder)
    result = DocResult(job.doc_id, "failed", ocr_engine=job.ocr_engine)
    ocr = None
    try:
        if pdf_path.is_file():  # a missing file is parse_pdf's to report, with its fix
            result.content_hash = file_hash(pdf_path)
        ocr = page_reader(job.ocr_engine, out.parent.parent, result.content_hash)  # cached in <index>/ocr
        parsed = parse_pdf(pdf_path, ocr=ocr)
        chunks = chunk_pages(parsed.pages)
        result.pages, result.scanned_pages, result.scanned_page_numbers, result.warnings = (
            len(parsed.pages),
            len(parsed.scanned_pages),
            list(parsed.scanned_pages),
            parsed.warnings,
        )
        result.ocr_page_numbers, result.ocr_pages = parsed.ocr_pages, len(parsed.ocr_pages)
        if ocr is not None:
            result.ocr_cached = ocr.cached
            result.warnings += [f"OCR failed on page {n}: {why}" for n, why in ocr.failed.items()]
        index = DocumentIndex.build(
            job.doc_id,
            chunks,
            get_embedder(job.embedder_name) if job.embedder_name else None,
            job.tokenizer,
            result.content_hash,
            job.dense_chunks,
        )
        index.meta.update(
            pipeline=PIPELINE,
            pages=result.pages,
            scanned_pages=result.scanned_pages,
            scanned_page_numbers=result.scanned_page_numbers,
            ocr_engine=job.ocr_engine,
            ocr_pages=result.ocr_pages,
            ocr_page_numbers=result.ocr_page_numbers,
        )
        aside = staging_folder(out)
        try:
            index.save(aside)  # the old index stays in place until the new one is complete
            if ocr is not None and ocr.lines:  # the audit report boxes quotes on OCR'd pages from them
                save_document_lines(aside, ocr.lines)
            seal(aside, index.meta)  # its files' checksums: a later build notices damage (_files_intact)
            swap_in(aside, out)
        finally:
            if aside.exists():  # save or swap failed: drop the partial copy, keep the old index
                shutil.rmtree(aside, ignore_errors=True)
        result.status, result.chunks = "built", len(chunks)
    except ParseError as exc:
        result.kind, result.message, result.fix = exc.kind, exc.message, exc.fix
    except Exception as exc:  # one broken document must not sink the build
        result.kind, result.message, result.fix = _failure(exc, out)
    finally:
        result.seconds = time.perf_counter() - start
        result.ocr_seconds = ocr.seconds if ocr else 0.0
        _release_memory()
    return result


def _failure(exc: Exception, folder: Path) -> tuple[str, str, str]:
    """(kind, message, fix) of an unexpected error: a full disk is the user's to fix, not a bug to report."""
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        return (
            "disk full",
            f"no space left on the disk of the index while writing {exc.filename or folder}",
            "free space and rerun (its previous index, if any, is kept)",
        )
    return (
        "error",
        f"{type(exc).__name__}: {exc}",
        "report this with the file; the rest of the collection was indexed",
    )


def _release_memory() -> None:
    """Hand freed heap back to the OS: torch's varying tensor shapes fragment glibc's heap, and a
    worker's RSS otherwise creeps up document after document (measured: +30 MB per document)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: nothing to do


def expected_cost(job: Job) -> tuple[bool, int]:
    """Heaviest first: embedded documents, then large files (so no worker is left with a long tail)."""
    path = Path(job.pdf)
    return bool(job.embedder_name), path.stat().st_size if path.is_file() else 0
