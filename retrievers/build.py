"""Build the index folder: catalog copy, one hybrid index per document, a manifest of what happened.

    python -m retrievers.build --catalog CATALOG --pdf-dir DIR --index DIR [--workers N] [--ray [ADDRESS]]
        [--ocr auto|off]

Documents are parsed, chunked, embedded and indexed in parallel processes, or as tasks on a Ray
cluster with --ray (retrievers.ray_build; the index must then be on storage every node can write). A document whose file
bytes, embedder and tokenizer are unchanged since the last build is skipped (content-hash cache).
A document that cannot be read is reported with what happened and what to do; the rest goes on.
Pages that are only images are read by OCR (retrievers.ocr_build; --ocr off leaves them unread).

Nothing built is lost: each document's new index is written aside and swapped in complete
(retrievers.swap), so a failure, Ctrl-C or kill -9 leaves every document at its previous index or
its new one, and a document that fails now keeps the index it had. One build per index at a time
(retrievers.build_lock). Exit codes: 0 every document indexed; 1 some failed (named); 2 bad input;
75 another build holds the index; 130 interrupted (what was saved is kept; rerun to finish).
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import logging
import multiprocessing
import os
import shutil
import signal
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple

from retrievers.build_lock import IndexLocked, build_lock
from retrievers.catalog import CATALOG_FILE, Catalog, CatalogError
from retrievers.chunking import CHUNKER_VERSION
from retrievers.dense_text import DENSE_CHUNKS, DENSE_TEXT_VERSION
from retrievers.embedding import HASHING, MINILM, model_in_use
from retrievers.index import FORMAT_VERSION, DocumentIndex
from retrievers.lexical import JIEBA, LEXICAL_VERSION, NGRAM
from retrievers.ocr_build import (
    OCR_MODES,
    OcrProgress,
    manifest_fields,
    outdated,
    page_reader,
    resolve_ocr,
    scanned_fix,
)
from retrievers.ocr_build import summary as ocr_summary
from retrievers.ocr_cache import save_document_lines
from retrievers.pdf import PARSER_VERSION
from retrievers.store import DOCS_DIR, MANIFEST_FILE, doc_folder, legacy_doc_folder, read_meta
from retrievers.swap import recover, staging_folder, swap_in
from signatures.types import Document

log = logging.getLogger(__name__)

DENSE_POLICIES = ("auto", "all", "none")
# Part of the cache key: a document is re-parsed when the parser or chunker changes, not only its bytes.
PIPELINE = f"pdf{PARSER_VERSION}.chunk{CHUNKER_VERSION}.lex{LEXICAL_VERSION}"
EXIT_FAILED, EXIT_BAD_INPUT, EXIT_LOCKED, EXIT_INTERRUPTED = 1, 2, 75, 130  # 75: EX_TEMPFAIL, try later
_PR_SET_PDEATHSIG = 1


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
    ocr_engine: str | None = None  # what read its image-only pages (retrievers.ocr); None: OCR off or absent
    ocr_pages: int = 0  # pages read by OCR (from the OCR cache or now)
    ocr_page_numbers: list[int] = field(default_factory=list)
    ocr_cached: int = 0  # of those, taken from the OCR cache
    ocr_seconds: float = 0.0  # time spent reading pages by OCR now


@dataclass
class BuildReport:
    results: list[DocResult]
    seconds: float
    pages: int = 0

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)

    @property
    def failures(self) -> list[DocResult]:
        return [r for r in self.results if r.status == "failed"]


class BuildInterrupted(Exception):
    """Ctrl-C during a build; the message says what was saved."""


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def resolve_pdf(doc: Document, pdf_dir: Path, catalog_dir: Path | None = None) -> Path:
    """The catalog's path if it gives one (absolute, or relative to the catalog or the pdf folder), else DIR/<id>.pdf."""
    if doc.path:
        given = Path(doc.path)
        if given.is_absolute():
            return given
        for base in (catalog_dir, pdf_dir):
            if base is not None and (base / given).is_file():
                return base / given
        return pdf_dir / given
    return pdf_dir / f"{doc.id}.pdf"


class Job(NamedTuple):
    """One document to index: what cached_result and build_document read (a tuple: it pickles to workers)."""

    doc_id: str
    pdf: str
    folder: str
    embedder_name: str | None  # None: BM25 only
    tokenizer: str
    dense_chunks: str = "figures"  # which chunks the embedder reads (retrievers/dense_text.py)
    ocr_engine: str | None = None  # reads image-only pages (retrievers.ocr_build.resolve_ocr); None: not read


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


def build_document(job: Job) -> DocResult:
    """Parse, chunk, embed (unless embedder_name is None) and save one document. Never raises.

    build_index checks the cache (cached_result, a hash of the whole file) before handing a
    document out, so it is not checked again here.
    """
    from retrievers.chunking import chunk_pages
    from retrievers.embedding import get_embedder
    from retrievers.pdf import ParseError, parse_pdf

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
            swap_in(aside, out)
        finally:
            if aside.exists():  # save or swap failed: drop the partial copy, keep the old index
                shutil.rmtree(aside, ignore_errors=True)
        result.status, result.chunks = "built", len(chunks)
    except ParseError as exc:
        result.kind, result.message, result.fix = exc.kind, exc.message, exc.fix
    except Exception as exc:  # one broken document must not sink the build
        result.kind, result.message = "error", f"{type(exc).__name__}: {exc}"
        result.fix = "report this with the file; the rest of the collection was indexed"
    finally:
        result.seconds = time.perf_counter() - start
        result.ocr_seconds = ocr.seconds if ocr else 0.0
        _release_memory()
    return result


def _release_memory() -> None:
    """Hand freed heap back to the OS: torch's varying tensor shapes fragment glibc's heap, and a
    worker's RSS otherwise creeps up document after document (measured: +30 MB per document)."""
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: nothing to do


def wants_dense(doc: Document, policy: str) -> bool:
    """Whether a document gets a dense (MiniLM) side besides BM25.

    "auto" embeds English documents only. all-MiniLM-L6-v2 is English-centric: on the synthetic
    corpus its Chinese dense-only recall@5 is 0.28 and hybrid Chinese recall is 0.992 without it vs
    0.995 with it, while embedding Chinese chunks is ~70% of a build's time (bench/README.md).
    "all" embeds every document (for a multilingual embedder or to measure), "none" none.
    """
    return policy == "all" or (policy == "auto" and doc.language == "en")


def _expected_cost(job: Job) -> tuple[bool, int]:
    path = Path(job.pdf)
    return bool(job.embedder_name), path.stat().st_size if path.is_file() else 0


def _worker_init(parent_pid: int):
    os.environ.setdefault("COLLATE_TORCH_THREADS", "1")  # one thread per process: the pool is the parallelism
    # Ctrl-C reaches the whole process group: the parent stops the workers, none prints a traceback
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A parent killed outright (kill -9, OOM) must not leave workers writing into the index behind it
    # (they would, blocked on a queue whose other end they hold too). Linux only; elsewhere a no-op.
    try:
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent_pid:  # the parent died before the line above
        os._exit(1)


def build_index(
    catalog: Catalog,
    pdf_dir: str | Path,
    index_dir: str | Path,
    workers: int | None = None,
    embedder: str = MINILM,
    tokenizer: str = NGRAM,
    dense: str = "auto",
    catalog_dir: Path | None = None,
    progress: bool = True,
    ray_address: str | None = None,
    dense_chunks: str = "figures",
    ocr: str = "auto",
) -> BuildReport:
    """Index every catalog document into index_dir. Raises IndexLocked when another build holds it,
    BuildInterrupted on Ctrl-C (documents finished by then are kept). With ray_address, changed
    documents are indexed on that Ray cluster (RayBuildError when it cannot be used)."""
    if dense not in DENSE_POLICIES:
        raise ValueError(f"dense={dense!r}: use one of {', '.join(DENSE_POLICIES)}")
    if dense_chunks not in DENSE_CHUNKS:
        raise ValueError(f"dense_chunks={dense_chunks!r}: use one of {', '.join(DENSE_CHUNKS)}")
    ocr_engine = resolve_ocr(ocr)  # auto: the engine when installed (retrievers.ocr_build)
    index_dir = Path(index_dir)
    index_dir.mkdir(parents=True, exist_ok=True)
    with build_lock(index_dir):
        recover(index_dir, index_dir / DOCS_DIR)  # what a killed build left half done
        results: list[DocResult] = []  # filled as documents finish, so an interruption can say what was saved
        try:
            return _build_locked(
                catalog,
                Path(pdf_dir),
                index_dir,
                workers,
                embedder,
                tokenizer,
                dense,
                catalog_dir,
                progress,
                results,
                ray_address,
                dense_chunks,
                ocr_engine,
            )
        except KeyboardInterrupt:
            raise BuildInterrupted(_interrupted_message(results, len(catalog), index_dir)) from None


def _build_locked(
    catalog: Catalog,
    pdf_dir: Path,
    index_dir: Path,
    workers: int | None,
    embedder: str,
    tokenizer: str,
    dense: str,
    catalog_dir: Path | None,
    progress: bool,
    results: list[DocResult],
    ray_address: str | None = None,
    dense_chunks: str = "figures",
    ocr_engine: str | None = None,
) -> BuildReport:
    from tqdm import tqdm

    start = time.perf_counter()
    workers = max(1, workers or os.cpu_count() or 1)
    jobs = [
        Job(
            d.id,
            str(resolve_pdf(d, pdf_dir, catalog_dir)),
            str(doc_folder(index_dir, d.id)),
            embedder if wants_dense(d, dense) else None,
            tokenizer,
            dense_chunks,
            ocr_engine,
        )
        for d in catalog.documents()
    ]
    _adopt_legacy_folders(index_dir, [job.doc_id for job in jobs])
    if not (index_dir / CATALOG_FILE).is_file():
        catalog.save(index_dir)  # an interrupted first build still opens, with the documents it finished
    bar = tqdm(total=len(jobs), desc="indexing", unit="doc", disable=not progress, file=sys.stderr)
    bar = OcrProgress(bar, results)  # "OCR 12 pages 118 s" after the count, once a page was OCR'd
    try:
        _run_jobs(jobs, workers, results, bar, ray_address)
    finally:
        bar.close()  # ends the bar's line, so a message after it starts on its own
    order = {job.doc_id: i for i, job in enumerate(jobs)}
    results.sort(key=lambda r: order[r.doc_id])
    folders = {job.doc_id: Path(job.folder) for job in jobs}
    for r in results:
        previous = read_meta(folders[r.doc_id]) if r.status == "failed" else None
        if previous is not None:  # a failure never removes what an earlier build made
            r.kept_previous = True
            catalog.update(
                r.doc_id, pages=previous.get("pages") or None, content_hash=previous.get("content_hash")
            )
        elif r.status != "failed":
            catalog.update(r.doc_id, pages=r.pages or None, content_hash=r.content_hash)
    catalog.save(index_dir)
    report = BuildReport(results, time.perf_counter() - start, pages=sum(r.pages for r in results))
    sources = {job.doc_id: job.pdf for job in jobs}
    _write_manifest(index_dir, report, embedder, tokenizer, dense, dense_chunks, sources, ocr_engine)
    return report


def _run_jobs(
    jobs: list[Job], workers: int, results: list[DocResult], bar, ray_address: str | None = None
) -> None:
    """Fill `results` as documents finish (so an interruption knows what was saved)."""
    stale = []
    # the cache check is a hash of the file: cheap, done here so workers start only if needed
    for job in jobs:
        cached = cached_result(job)
        if cached is None:
            stale.append(job)
        else:
            results.append(cached)
            bar.update()
    if ray_address is not None:  # the same build_document, as Ray tasks (only changed documents are sent)
        from retrievers.ray_build import run_on_ray

        run_on_ray(stale, ray_address, results, bar)
        return
    if workers == 1 or len(stale) <= 1:
        for job in stale:
            results.append(build_document(job))
            bar.update()
        return
    pool = _pool(min(workers, len(stale)))
    crashed: list[Job] = []
    try:
        # heaviest first (embedded, then large files), so no worker is left with a long tail alone
        futures = {
            pool.submit(build_document, job): job for job in sorted(stale, key=_expected_cost, reverse=True)
        }
        for future in as_completed(futures):
            try:
                results.append(future.result())
            except BrokenProcessPool:  # a worker died (a parser crash, the OOM killer): which file is unknown
                crashed.append(futures[future])
                continue
            bar.update()
    except BaseException:
        # Stop now rather than finish the queue: a worker killed mid-document leaves only a staging
        # copy behind (retrievers.swap), never a half-written index.
        workers_now = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in workers_now:
            process.terminate()
        for process in workers_now:
            process.join(5)
        raise
    pool.shutdown()
    for job in crashed:  # one process each, so the file that kills its process fails alone
        results.append(_build_alone(job))
        bar.update()


def _pool(workers: int) -> ProcessPoolExecutor:
    # fork is cheap, but unsafe once torch has run (its thread pools do not survive a fork)
    method = "spawn" if model_in_use() else "fork"
    return ProcessPoolExecutor(
        workers,
        mp_context=multiprocessing.get_context(method),
        initializer=_worker_init,
        initargs=(os.getpid(),),
    )


def _build_alone(job: Job) -> DocResult:
    pool = _pool(1)
    try:
        return pool.submit(build_document, job).result()
    except BrokenProcessPool:
        return DocResult(
            job.doc_id,
            "failed",
            kind="crashed",
            message="the process indexing this file died (a parser crash, or out of memory)",
            fix="check the file (qpdf --check FILE) and replace or repair it; the rest of the collection was indexed",
        )
    finally:
        pool.shutdown()


def _adopt_legacy_folders(index_dir: Path, doc_ids: list[str]) -> None:
    """Move a document's folder from its pre-injective name to its own (retrievers.doc_ids), so an
    index built before keeps its documents (and its cache) instead of rebuilding or losing them."""
    for doc_id in doc_ids:
        target = doc_folder(index_dir, doc_id)
        old = legacy_doc_folder(index_dir, doc_id)
        if old is not None and not target.exists():
            os.rename(old, target)


def _interrupted_message(results: list[DocResult], total: int, index_dir: Path) -> str:
    built, cached = (sum(1 for r in results if r.status == s) for s in ("built", "cached"))
    return (
        f"interrupted: {built} document(s) indexed now and {cached} unchanged are saved in {index_dir}; "
        f"the other {total - built - cached} keep their previous index, if any. Run the same command again "
        "to finish (saved documents are not redone)"
    )


def _write_manifest(
    index_dir: Path,
    report: BuildReport,
    embedder: str,
    tokenizer: str,
    dense: str,
    dense_chunks: str,
    sources: dict[str, str],
    ocr_engine: str | None = None,
) -> None:
    manifest = {
        "format_version": FORMAT_VERSION,
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "embedder": embedder,
        "tokenizer": tokenizer,
        "dense": dense,
        "dense_chunks": dense_chunks,
        "pipeline": PIPELINE,
        "seconds": round(report.seconds, 3),
        "counts": {s: report.count(s) for s in ("built", "cached", "failed")},
        "pages": report.pages,
        "scanned_pages": sum(r.scanned_pages for r in report.results),
        "documents": {
            r.doc_id: {
                "status": r.status,
                "pages": r.pages,
                "chunks": r.chunks,
                "content_hash": r.content_hash,
                # where the PDF was read from (absolute): audit reports render its pages
                "pdf": str(Path(sources[r.doc_id]).resolve()) if r.doc_id in sources else None,
            }
            for r in report.results
            if r.status != "failed"
        },
        "failures": {
            r.doc_id: {
                "kind": r.kind,
                "message": r.message,
                "fix": r.fix,
                "kept_previous_index": r.kept_previous,
            }
            for r in report.failures
        },
        "scanned": {r.doc_id: r.scanned_page_numbers for r in report.results if r.scanned_page_numbers},
        "warnings": {r.doc_id: r.warnings for r in report.results if r.warnings},
        **manifest_fields(report.results, ocr_engine),
    }
    tmp = index_dir / (MANIFEST_FILE + ".tmp")
    tmp.write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")
    tmp.replace(index_dir / MANIFEST_FILE)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m retrievers.build", description=__doc__.splitlines()[0])
    p.add_argument("--catalog", required=True, help="dataset.json (MuDABench), catalog .csv or .jsonl")
    p.add_argument("--pdf-dir", required=True, help="folder holding <id>.pdf files")
    p.add_argument("--index", required=True, help="index folder to create or update")
    p.add_argument(
        "--workers", type=int, default=os.cpu_count(), help="parallel processes (default: core count)"
    )
    p.add_argument("--embedder", default=MINILM, choices=[MINILM, HASHING], help=argparse.SUPPRESS)
    p.add_argument(
        "--dense",
        default="auto",
        choices=DENSE_POLICIES,
        help="which documents get MiniLM embeddings besides BM25 (auto: English ones)",
    )
    p.add_argument(
        "--dense-chunks",
        default="figures",
        choices=DENSE_CHUNKS,
        help="which chunks of those documents MiniLM reads (figures: the ones stating amounts, about a third "
        "of a 10-K's, for ~3x less embedding; all: every chunk, for questions about prose)",
    )
    p.add_argument(
        "--ocr",
        default="auto",
        choices=OCR_MODES,
        help="pages that are only images (scans): auto reads them by OCR when rapidocr-onnxruntime is "
        "installed (~10 s a page, cached in the index); off leaves them unread",
    )
    p.add_argument("--tokenizer", default=NGRAM, choices=[NGRAM, JIEBA], help="Chinese tokenization for BM25")
    p.add_argument(
        "--ray",
        nargs="?",
        const="",
        metavar="ADDRESS",
        help="index on a Ray cluster (HOST:PORT, or auto for this machine's; default $COLLATE_RAY_ADDRESS or "
        "auto); the index and PDFs must be on storage every node can reach",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the per-document results as JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # before the build started (reading the catalog): nothing written
        print("interrupted before the build started: nothing was written", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args.workers is not None and args.workers < 1:
        print("error: --workers must be at least 1", file=sys.stderr)
        return EXIT_BAD_INPUT
    if not Path(args.pdf_dir).is_dir():
        print(
            f"error: --pdf-dir {args.pdf_dir} is not a folder: give the folder holding <id>.pdf",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    try:
        catalog = Catalog.load(args.catalog)
    except CatalogError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    from retrievers.ray_build import RayBuildError, require_ray, resolve_address

    ray_address = resolve_address(args.ray)
    try:
        if ray_address is not None:
            require_ray()  # before anything is written
        report = build_index(
            catalog,
            args.pdf_dir,
            args.index,
            workers=args.workers,
            embedder=args.embedder,
            tokenizer=args.tokenizer,
            dense=args.dense,
            dense_chunks=args.dense_chunks,
            catalog_dir=Path(args.catalog).resolve().parent,
            progress=not args.no_progress,
            ray_address=ray_address,
            ocr=args.ocr,
        )
    except RayBuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except IndexLocked as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_LOCKED
    except OSError as exc:  # the index folder itself (each document's own errors are in its result)
        print(
            f"error: cannot write the index {args.index} ({exc.strerror or exc}: {exc.filename or args.index}): "
            "give a folder you can write to, on a disk with free space",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    except BuildInterrupted as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_INTERRUPTED
    if args.json:
        print(json.dumps([asdict(r) for r in report.results], ensure_ascii=False, indent=1))
    print(
        f"{report.count('built')} built, {report.count('cached')} unchanged, {report.count('failed')} failed; "
        f"{report.pages} pages in {report.seconds:.1f} s -> {args.index}"
    )
    if ocr_line := ocr_summary(report.results):
        print(ocr_line)
    for r in report.failures:
        kept = " (its previous index is kept and still searched)" if r.kept_previous else ""
        print(f"FAILED {r.doc_id}: {r.kind}: {r.message}. Fix: {r.fix}{kept}")
    for r in report.results:
        if r.status != "failed" and r.scanned_pages:
            numbers = (
                f" (page {', '.join(map(str, r.scanned_page_numbers[:10]))}"
                + (", ...)" if len(r.scanned_page_numbers) > 10 else ")")
                if r.scanned_page_numbers
                else ""
            )
            print(
                f"NOTE {r.doc_id}: {r.scanned_pages} of {r.pages} pages have no text layer{numbers} and cannot "
                f"be searched. Fix: {scanned_fix(r.ocr_engine)}"
            )
    return _exit_code(report, args.pdf_dir)


def _exit_code(report: BuildReport, pdf_dir: str) -> int:
    """0 only when every document is indexed; else 1, with the failed ids on stderr for a script's log."""
    failed = report.failures
    if not failed:
        return 0
    ids = ", ".join(r.doc_id for r in failed[:20]) + (
        f", ... ({len(failed)} in all)" if len(failed) > 20 else ""
    )
    print(f"error: {len(failed)} of {len(report.results)} documents failed: {ids}", file=sys.stderr)
    if len(failed) == len(report.results) and all(r.kind == "missing" for r in failed):
        print(
            f"error: none of the files was found: is --pdf-dir {pdf_dir} the folder holding them? "
            "(nothing already indexed was removed)",
            file=sys.stderr,
        )
    return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
