"""The build's per-document work as Ray tasks on a cluster: python -m retrievers.build --ray [ADDRESS].

retrievers.building.build stays the driver: it takes the index lock, recovers what a killed build left, checks
the content-hash cache (an unchanged document is never sent), writes the catalog and the manifest and
shows the progress bar. Only each changed document's parse + chunk + embed + save runs here, as one
task calling the same build_document as the process pool: so the task writes the new index aside
and swaps it in itself (retrievers.building.swap), and a worker killed at any point leaves that document at
its previous index or its new one, exactly as a killed pool worker does.

Ray is optional (pip install 'collate[ray]'); nothing here imports it until a --ray build starts.
Every node must see the index and the PDFs at the same path (a shared file system): a probe task
on each node writes a file under the index that the driver must read back, or the build refuses.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from retrievers.building.jobs import PIPELINE, DocResult, Job, build_document, expected_cost
from retrievers.indexing.document_index import FORMAT_VERSION
from signatures import environment
from signatures.errors import CollateError

INSTALL_FIX = "pip install 'collate[ray]'"
ENV_ADDRESS = "COLLATE_RAY_ADDRESS"

# Resources, said once for every task. One CPU per document, like one pool process per core: a
# document's work is serial apart from torch, and torch gets as many threads as the task has CPUs.
TASK_CPUS = 1
# Memory reserved per task, so a node runs no more documents at once than fit: build_document's peak
# RSS on a 12-page English filing with MiniLM is 0.39 GB (ru_maxrss of a fresh process: torch + model +
# pdfium), plus Ray's worker; 1.5 GB is headroom for filings of hundreds of pages (not measured). Ray
# schedules by it (a reservation, not a cap); its memory monitor kills, then retries, a task whose node
# runs out anyway.
TASK_MEMORY = int(1.5 * 2**30)
# A worker that dies (kill -9, the OOM killer, a lost node) loses its one document, which Ray runs once
# more; a second death is reported as that document's failure, like a crashed pool process.
MAX_RETRIES = 1
# Documents in flight per cluster CPU: enough to keep every node busy, few enough that Ctrl-C cancels
# quickly and the driver holds no per-document state for a million-page catalog.
IN_FLIGHT_PER_CPU = 4


class RayBuildError(CollateError, RuntimeError):
    """The Ray build cannot start: Ray missing, no cluster, or a node that cannot reach the index."""

    exit_code = 2


@dataclass
class RayRun:
    address: str
    nodes: int
    cpus: float
    sent: int
    worker_pids: set[int]
    embedder_loads: int  # MiniLM loads summed over the worker processes (one per process at most)


def require_ray():
    """The ray module, or RayBuildError naming the install."""
    try:
        import ray
    except ImportError:
        raise RayBuildError(f"--ray needs Ray, which is not installed here: {INSTALL_FIX}") from None
    return ray


def resolve_address(flag: str | None) -> str | None:
    """The cluster to use: --ray ADDRESS, else COLLATE_RAY_ADDRESS, else "auto" for a bare --ray;
    None (the local process pool) when neither --ray nor the variable is given."""
    env = environment.read(ENV_ADDRESS)
    if flag is None:
        return env or None
    return flag.strip() or env or "auto"


def run_on_ray(stale: list[Job], address: str, results: list[DocResult], bar) -> RayRun | None:
    """Index the stale documents on the cluster, appending each result as it arrives (the driver's
    bar advances per document). Nothing is sent, and no cluster contacted, when nothing changed."""
    if not stale:
        _say(f"ray: nothing to send to the cluster, all {len(results)} documents are unchanged")
        return None
    # Ray prints its cluster events ("(raylet) A worker died ...") to stdout, which is the build's
    # summary and --json output: they go to stderr with the progress bar instead
    with contextlib.redirect_stdout(sys.stderr):
        return _run_on_ray(stale, address, results, bar)


def _run_on_ray(stale: list[Job], address: str, results: list[DocResult], bar) -> RayRun:
    ray = require_ray()
    index_dir = Path(stale[0].folder).parent.parent
    started_here = not ray.is_initialized()
    if started_here:
        _connect(ray, address)
    try:
        sample = next((job.pdf for job in stale if Path(job.pdf).is_file()), None)
        nodes = _probe_nodes(ray, index_dir, sample)
        cpus = ray.cluster_resources().get("CPU", 0)
        _say(
            f"ray: sending {len(stale)} document(s) to the cluster at {address} ({len(nodes)} node(s), "
            f"{cpus:g} CPUs); {len(results)} unchanged not sent"
        )
        run = RayRun(address, len(nodes), cpus, len(stale), set(), 0)
        _run_tasks(ray, stale, results, bar, run)
        _say(
            f"ray: {run.sent} document(s) indexed in {len(run.worker_pids)} worker process(es); "
            f"embedder loaded {run.embedder_loads} time(s)"
        )
        return run
    finally:
        if started_here:
            ray.shutdown()


def _connect(ray, address: str) -> None:
    try:
        _reachable(address)  # ray.init retries an address nobody answers at for minutes
        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise RayBuildError(
            f"no Ray cluster at {address} ({first}): start one with `ray start --head` (and "
            "`ray start --address HEAD:6379` on the other machines), then give its address to --ray "
            f"or {ENV_ADDRESS}, or build without --ray"
        ) from None


def _reachable(address: str) -> None:
    """ConnectionError unless HOST:PORT accepts a TCP connection within 5 s ("auto" is Ray's to find)."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise ConnectionError(f"nothing answers at {host}:{port}: {exc.strerror or exc}") from None


# ---- on the workers ---------------------------------------------------------------------------
def _index_document(job: tuple) -> tuple[DocResult, int, int]:
    """One document on a worker: the pool's build_document, plus the worker's pid and model loads.

    Ray reuses a worker process for task after task, so the embedder, loaded once per process
    (retrievers.embedding.embedders), serves every document that process indexes.
    """
    os.environ["COLLATE_TORCH_THREADS"] = str(TASK_CPUS)  # read at the process's first model load
    result = build_document(Job(*job))  # a plain tuple if the task's arguments lost the type
    from retrievers.embedding.embedders import _load_minilm_once

    return result, os.getpid(), _load_minilm_once.cache_info().misses


def _probe(index_dir: str, token: str, pdf: str | None) -> dict:
    """On one node: write and read back a file under the index, and look for a PDF."""
    path = Path(index_dir) / f".ray-probe-{token}"
    out = {"host": socket.gethostname(), "pipeline": PIPELINE, "format_version": FORMAT_VERSION}
    try:
        path.write_text(token, encoding="utf-8")
        out["read_back"] = path.read_text(encoding="utf-8") == token
    except OSError as exc:
        out["error"] = f"{exc.strerror or exc}: {exc.filename or path}"
    out["pdf_found"] = pdf is None or Path(pdf).is_file()
    return out


# ---- on the driver ----------------------------------------------------------------------------
def _probe_nodes(ray, index_dir: Path, sample_pdf: str | None) -> list[dict]:
    """Refuse (RayBuildError) unless every node with CPUs writes where the driver reads, sees the
    PDFs, and runs this version of the pipeline (else its indexes would never match the cache)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    probe = ray.remote(num_cpus=0, max_retries=0)(_probe)
    nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0]
    if not nodes:
        raise RayBuildError(
            "the Ray cluster has no node with CPUs: add one with `ray start --address HEAD:6379`"
        )
    tokens = [secrets.token_hex(8) for _ in nodes]
    refs = [
        probe.options(scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)).remote(
            str(index_dir), token, sample_pdf
        )
        for n, token in zip(nodes, tokens, strict=True)
    ]
    try:
        answers = ray.get(refs, timeout=300)
    except ray.exceptions.RayError as exc:
        raise RayBuildError(
            f"a Ray worker could not run the build ({_first_line(exc)}): install collate on every node "
            f"(pip install collate[ray]) with the same Python"
        ) from None
    where = "storage every node mounts at the same path (a shared file system such as NFS)"
    for answer, token in zip(answers, tokens, strict=True):
        path = index_dir / f".ray-probe-{token}"
        seen = path.is_file() and path.read_text(encoding="utf-8") == token
        path.unlink(missing_ok=True)
        host = answer["host"]
        if "error" in answer or not answer.get("read_back"):
            raise RayBuildError(
                f"node {host} cannot write the index {index_dir} ({answer.get('error', 'read back differs')}): "
                f"put the index on {where}, or build without --ray"
            )
        if not seen:
            raise RayBuildError(
                f"node {host} wrote {path} but this machine does not see it: {index_dir} is not shared; "
                f"put the index on {where}, or build without --ray"
            )
        if not answer["pdf_found"]:
            raise RayBuildError(
                f"node {host} does not see {sample_pdf}: put the PDFs on {where}, or build without --ray"
            )
        if (answer["pipeline"], answer["format_version"]) != (PIPELINE, FORMAT_VERSION):
            raise RayBuildError(
                f"node {host} runs another collate (pipeline {answer['pipeline']}, format "
                f"{answer['format_version']}; this one {PIPELINE}, {FORMAT_VERSION}): install the same "
                "collate version on every node"
            )
    return answers


def _run_tasks(ray, stale: list[Job], results: list[DocResult], bar, run: RayRun) -> None:
    task = ray.remote(num_cpus=TASK_CPUS, memory=TASK_MEMORY, max_retries=MAX_RETRIES)(_index_document)
    queue = sorted(stale, key=expected_cost, reverse=True)  # heaviest first: no long tail on one node
    queue.reverse()  # popped from the end
    pending: dict = {}
    loads: dict[int, int] = {}
    try:
        while queue or pending:
            window = max(1, int(IN_FLIGHT_PER_CPU * max(ray.cluster_resources().get("CPU", 1), 1)))
            while queue and len(pending) < window:
                job = queue.pop()
                pending[task.remote(tuple(job))] = job  # a plain tuple: Job may be __main__'s
            done, _ = ray.wait(list(pending), num_returns=len(pending), timeout=0.2)
            for ref in done:
                job = pending.pop(ref)
                try:
                    result, pid, model_loads = ray.get(ref)
                    run.worker_pids.add(pid)
                    loads[pid] = max(loads.get(pid, 0), model_loads)
                except ray.exceptions.RayError as exc:  # the worker died twice (or its node did)
                    result = _crashed(job, exc, died=not isinstance(exc, ray.exceptions.RayTaskError))
                results.append(result)
                bar.update()
    except BaseException:
        # Ctrl-C or a lost driver connection: stop the workers now; one killed mid-document leaves
        # only a staging copy behind (retrievers.building.swap), which the next build clears.
        for ref in pending:
            try:
                ray.cancel(ref, force=True)
            except Exception:  # already finished, or the cluster is gone: nothing left to stop
                pass
        raise
    run.embedder_loads = sum(loads.values())


def _crashed(job: Job, exc: BaseException, died: bool) -> DocResult:
    what = (
        f"the Ray worker indexing this file died {MAX_RETRIES + 1} times ({_first_line(exc)}): a parser "
        "crash, out of memory, or a lost node"
        if died
        else f"the Ray task failed on its worker ({_first_line(exc)})"
    )
    return DocResult(
        job.doc_id,
        "failed",
        kind="crashed",
        message=what,
        fix=(
            "check the file (qpdf --check FILE) and replace or repair it, or give the nodes more memory; "
            "the rest of the collection was indexed"
        ),
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0]}" if text else type(exc).__name__


def _say(line: str) -> None:
    from tqdm import tqdm

    tqdm.write(line, file=sys.stderr)  # above the progress bar, not through it
