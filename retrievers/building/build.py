"""Build an index folder: the catalog's copy, one hybrid index per document, a manifest of what happened.

Documents are parsed, chunked, embedded and indexed in parallel processes, or as tasks on a Ray
cluster (retrievers.building.ray; the index must then be on storage every node can write). A document
whose file bytes, embedder and tokenizer are unchanged since the last build is skipped (content-hash
cache, retrievers.building.jobs). A document that cannot be read is reported with what happened and
what to do; the rest goes on. Pages that are only images are read by OCR
(retrievers.building.ocr_build; BuildOptions.ocr="off" leaves them unread).

Nothing built is lost: each document's new index is written aside and swapped in complete
(retrievers.building.swap), so a failure, Ctrl-C or kill -9 leaves every document at its previous index
or its new one, and a document that fails now keeps the index it had. One build per index at a time
(retrievers.building.lock). The command is collate/build.py (`python -m retrievers.build`).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from pathlib import Path

from retrievers.building.jobs import DocResult, Job, build_document, cached_result, expected_cost
from retrievers.building.lock import build_lock
from retrievers.building.manifest import write_manifest
from retrievers.building.ocr_build import OCR_MODES, OcrProgress, resolve_ocr
from retrievers.building.ocr_cache import OcrCache
from retrievers.building.swap import recover
from retrievers.catalog import CATALOG_FILE, Catalog
from retrievers.embedding.dense_text import DENSE_CHUNKS
from retrievers.embedding.embedders import MINILM, model_in_use
from retrievers.indexing.lexical import NGRAM
from retrievers.indexing.store import DOCS_DIR, doc_folder, legacy_doc_folder, read_meta
from signatures.types import Document

DENSE_POLICIES = ("auto", "all", "none")
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class BuildOptions:
    """How an index is built: one value handed down instead of a dozen arguments (logged in the manifest)."""

    workers: int | None = None  # parallel processes; None: the core count
    embedder: str = MINILM
    tokenizer: str = NGRAM  # how BM25 reads Chinese
    dense: str = "auto"  # which documents get a dense side (wants_dense)
    dense_chunks: str = (
        "figures"  # which chunks of those the embedder reads (retrievers.embedding.dense_text)
    )
    ray_address: str | None = None  # index on this Ray cluster instead of local processes
    ocr: str = (
        "auto"  # pages that are only images: auto reads them by OCR when the engine is installed; off not
    )

    def __post_init__(self):
        if self.dense not in DENSE_POLICIES:
            raise ValueError(f"dense={self.dense!r}: use one of {', '.join(DENSE_POLICIES)}")
        if self.dense_chunks not in DENSE_CHUNKS:
            raise ValueError(f"dense_chunks={self.dense_chunks!r}: use one of {', '.join(DENSE_CHUNKS)}")
        if self.ocr not in OCR_MODES:
            raise ValueError(f"ocr={self.ocr!r}: use one of {', '.join(OCR_MODES)}")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers={self.workers}: use at least 1")


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


def wants_dense(doc: Document, policy: str) -> bool:
    """Whether a document gets a dense (MiniLM) side besides BM25.

    "auto" embeds English documents only. all-MiniLM-L6-v2 is English-centric: on the synthetic
    corpus its Chinese dense-only recall@5 is 0.28 and hybrid Chinese recall is 0.992 without it vs
    0.995 with it, while embedding Chinese chunks is ~70% of a build's time (bench/README.md).
    "all" embeds every document (for a multilingual embedder or to measure), "none" none.
    """
    return policy == "all" or (policy == "auto" and doc.language == "en")


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
    options: BuildOptions | None = None,
    *,
    catalog_dir: Path | None = None,
    progress: bool = True,
    **settings,
) -> BuildReport:
    """Index every catalog document into index_dir. `settings` are BuildOptions fields given one by one
    (build_index(..., workers=2)). Raises IndexLocked when another build holds it, BuildInterrupted on
    Ctrl-C (documents finished by then are kept); with a ray_address, RayBuildError when it cannot be used."""
    options = replace(options or BuildOptions(), **settings)
    ocr_engine = resolve_ocr(options.ocr)  # auto: the engine's key when it is installed, else None
    index_dir = Path(index_dir)
    index_dir.mkdir(parents=True, exist_ok=True)
    with build_lock(index_dir):
        recover(index_dir, index_dir / DOCS_DIR)  # what a killed build left half done
        results: list[DocResult] = []  # filled as documents finish, so an interruption can say what was saved
        try:
            return _build_locked(
                catalog, Path(pdf_dir), index_dir, options, catalog_dir, progress, results, ocr_engine
            )
        except KeyboardInterrupt:
            raise BuildInterrupted(_interrupted_message(results, len(catalog), index_dir)) from None


def _build_locked(
    catalog: Catalog,
    pdf_dir: Path,
    index_dir: Path,
    options: BuildOptions,
    catalog_dir: Path | None,
    progress: bool,
    results: list[DocResult],
    ocr_engine: str | None = None,
) -> BuildReport:
    from tqdm import tqdm

    start = time.perf_counter()
    workers = max(1, options.workers or os.cpu_count() or 1)
    jobs = [
        Job(
            d.id,
            str(resolve_pdf(d, pdf_dir, catalog_dir)),
            str(doc_folder(index_dir, d.id)),
            options.embedder if wants_dense(d, options.dense) else None,
            options.tokenizer,
            options.dense_chunks,
            ocr_engine,
        )
        for d in catalog.documents()
    ]
    _adopt_legacy_folders(index_dir, [job.doc_id for job in jobs])
    if not (index_dir / CATALOG_FILE).is_file():
        catalog.save(index_dir)  # an interrupted first build still opens, with the documents it finished
    bar = tqdm(total=len(jobs), desc="indexing", unit="doc", disable=not progress, file=sys.stderr)
    # "OCR 12 pages 118 s" after the count, counted as pages are read (from the index's OCR cache)
    bar = OcrProgress(bar, results, OcrCache(index_dir, ocr_engine) if ocr_engine else None)
    try:
        _run_jobs(jobs, workers, results, bar, options.ray_address)
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
    write_manifest(
        index_dir,
        report,
        options.embedder,
        options.tokenizer,
        options.dense,
        options.dense_chunks,
        sources,
        ocr_engine,
    )
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
        from retrievers.building.ray import run_on_ray  # imported only when asked for: Ray is optional

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
        futures = {
            pool.submit(build_document, job): job for job in sorted(stale, key=expected_cost, reverse=True)
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
        # copy behind (retrievers.building.swap), never a half-written index.
        workers_now = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in workers_now:
            process.terminate()
        for process in workers_now:
            process.join(5)
        # Let the pool's manager thread finish closing its wake-up pipe before the interpreter exits:
        # Python 3.11's exit hook (concurrent.futures.process._python_exit) writes to that pipe without
        # its lock, and racing the close it printed "OSError: Bad file descriptor" after "interrupted:"
        # (seen once in a suite run on a loaded machine; fixed in CPython 3.12)
        manager = getattr(pool, "_executor_manager_thread", None)
        if manager is not None:
            manager.join(5)
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
