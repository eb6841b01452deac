"""python -m retrievers.build --ray (issue 15) on a real two-node Ray cluster on this machine.

The cluster tests are slow (the cluster alone starts in ~20 s here) and skip when Ray is not
installed; the error paths that need no cluster run in the default suite.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from collate import build
from collate.errors import Exit
from retrievers.building import ray as ray_build
from retrievers.building.build import build_index
from retrievers.catalog import Catalog
from retrievers.indexing.store import IndexStore, read_meta

ROOT = Path(__file__).resolve().parents[2]
TASK_TITLE = b"ray::_index_document"  # Ray's process title for a worker running that task
QUERIES = ["total revenue", "资本充足率", "net income", "营业收入", "auditor"]


def test_without_ray_installed_the_flag_is_a_one_line_error_and_nothing_is_written(
    tmp_path, monkeypatch, capsys
):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    catalog = tmp_path / "c.jsonl"
    catalog.write_text(
        json.dumps({"id": "a", "symbol": "X", "year": 2022, "doctype": "10-K", "language": "en"}) + "\n"
    )
    (tmp_path / "pdf").mkdir()
    code = build.main(
        [
            "--catalog",
            str(catalog),
            "--pdf-dir",
            str(tmp_path / "pdf"),
            "--index",
            str(tmp_path / "index"),
            "--ray",
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code == Exit.BAD_INPUT
    assert err.splitlines() == [err] and "pip install 'collate[ray]'" in err
    assert not (tmp_path / "index").exists()


def test_the_address_comes_from_the_flag_then_the_variable_then_auto(monkeypatch):
    monkeypatch.delenv(ray_build.ENV_ADDRESS, raising=False)
    assert ray_build.resolve_address(None) is None  # no --ray, no variable: the process pool
    assert ray_build.resolve_address("") == "auto"
    assert ray_build.resolve_address("10.0.0.5:6379") == "10.0.0.5:6379"
    monkeypatch.setenv(ray_build.ENV_ADDRESS, "head:6379")
    assert ray_build.resolve_address(None) == "head:6379"
    assert ray_build.resolve_address("") == "head:6379"
    assert ray_build.resolve_address("other:1") == "other:1"


def test_an_address_nobody_answers_at_is_refused_at_once(tmp_path, writers, capsys, monkeypatch):
    ray = pytest.importorskip("ray")
    # "At once": refused before ray.init, which retries an address nobody answers at for minutes.
    # Observed by a spy, not by the clock (a loaded machine makes any bound on seconds flaky).
    init_calls = []
    monkeypatch.setattr(ray, "init", lambda *a, **kw: init_calls.append(kw) or ray_init_unreachable())
    (tmp_path / "pdf").mkdir()
    writers.column(tmp_path / "pdf" / "a.pdf")
    catalog = tmp_path / "c.jsonl"
    catalog.write_text(
        json.dumps({"id": "a", "symbol": "X", "year": 2022, "doctype": "10-K", "language": "en"}) + "\n"
    )
    c = {"catalog": catalog, "pdf_dir": tmp_path / "pdf"}
    code = build.main([*_args(c, tmp_path / "index"), "--ray", "127.0.0.1:1"])
    err = capsys.readouterr().err.strip()
    assert code == Exit.BAD_INPUT and init_calls == []
    assert err.startswith("error: no Ray cluster at 127.0.0.1:1") and "ray start --head" in err


def ray_init_unreachable():
    raise ConnectionError("ray.init was called for an address nobody answers at")


# ---- on a real cluster ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("corpus")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "data.synth",
            "--companies",
            "2",
            "--years",
            "2022",
            "--pages",
            "6",
            "--out",
            str(out),
            "-q",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    return {"catalog": out / "catalog.jsonl", "pdf_dir": out / "pdf"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Two nodes of one CPU each, started as a user would (`ray start --head`, `ray start --address`).

    The drivers are build subprocesses: this test process connects to nothing but loopback, and Ray's
    driver reaches the head at this machine's own address. Yields the head's address.
    """
    pytest.importorskip("ray")
    ray_cli = str(Path(sys.executable).parent / "ray")
    temp = tempfile.mkdtemp(prefix="/tmp/rb")  # Ray's socket paths must stay short
    port = 20000 + os.getpid() % 20000
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the workers import this checkout
    common = ["--num-cpus", "1", "--block"]
    nodes = [
        subprocess.Popen(
            [
                ray_cli,
                "start",
                "--head",
                "--port",
                str(port),
                "--temp-dir",
                temp,
                "--include-dashboard",
                "false",
                *common,
            ],
            env=env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
    address = f"127.0.0.1:{port}"
    try:
        _wait_for_port(port, 120)
        nodes.append(
            subprocess.Popen(
                [ray_cli, "start", "--address", address, *common],
                env=env,
                start_new_session=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        wait = (
            f"import ray, time; ray.init(address={address!r}, logging_level='ERROR'); t = time.time()\n"
            "while sum(n['Alive'] for n in ray.nodes()) < 2 and time.time() - t < 120: time.sleep(0.5)"
        )
        subprocess.run([sys.executable, "-c", wait], env=env, check=True, timeout=180)
        yield address
    finally:
        for node in reversed(nodes):  # `ray start --block` stops its node's processes on SIGTERM
            node.terminate()
        for node in nodes:
            try:
                node.wait(60)
            except subprocess.TimeoutExpired:
                node.kill()
        shutil.rmtree(temp, ignore_errors=True)


def _wait_for_port(port: int, timeout: float) -> None:
    import socket

    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert time.monotonic() < deadline, "the Ray head did not start"
            time.sleep(0.5)


def _build(c: dict, index: Path, address: str) -> tuple[int, str, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "retrievers.build", *_args(c, index), "--ray", address],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=280,
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture(scope="module")
def local_index(corpus, tmp_path_factory) -> Path:
    index = tmp_path_factory.mktemp("local") / "index"
    report = build_index(Catalog.load(corpus["catalog"]), corpus["pdf_dir"], index, workers=2, progress=False)
    assert report.count("built") == 5
    return index


@pytest.mark.slow
def test_the_cluster_build_equals_the_local_build_and_a_second_run_sends_nothing(
    corpus, cluster, local_index, tmp_path
):
    index = tmp_path / "index"
    code, out, err = _build(corpus, index, cluster)
    assert code == 0, err
    assert "ray: sending 5 document(s) to the cluster" in err and "(2 node(s), 2 CPUs)" in err
    _assert_same_index(local_index, index)
    # the embedder is loaded once per worker process, not once per document
    pids, loads = _ints(err, "in ", " worker process"), _ints(err, "embedder loaded ", " time")
    assert loads <= pids

    code, out, err = _build(corpus, index, cluster)
    assert code == 0 and "ray: nothing to send to the cluster, all 5 documents are unchanged" in err
    assert out.startswith("0 built, 5 unchanged, 0 failed")

    changed = _rewrite_one(corpus, tmp_path)  # one file changes: only it is sent
    code, out, err = _build(changed, index, cluster)
    assert code == 0 and "ray: sending 1 document(s)" in err and "4 unchanged not sent" in err
    assert out.startswith("1 built, 4 unchanged, 0 failed")


@pytest.mark.slow
def test_a_worker_killed_mid_document_loses_nothing(corpus, cluster, local_index, tmp_path):
    index = tmp_path / "index"
    killed = []
    with _killing(TASK_TITLE, killed, times=1):
        code, out, err = _build(corpus, index, cluster)
    assert len(killed) == 1, "no task was caught running"
    assert code == 0 and out.startswith("5 built, 0 unchanged, 0 failed"), err  # Ray ran it again
    _assert_same_index(local_index, index)
    assert not any((index / ".staging").iterdir())  # the killed attempt's staging copy, if any, is gone


@pytest.mark.slow
def test_a_document_whose_worker_dies_twice_is_reported_and_keeps_its_index(corpus, cluster, tmp_path):
    one = _subset(corpus, tmp_path, language="en")
    index = tmp_path / "index"
    assert _build(one, index, cluster)[0] == 0
    before = read_meta(next((index / "docs").iterdir()))
    changed = _rewrite_one(one, tmp_path / "v2")
    killed = []
    with _killing(TASK_TITLE, killed, times=10):
        code, out, err = _build(changed, index, cluster)
    assert len(killed) == ray_build.MAX_RETRIES + 1
    assert code == Exit.FAILED and "died 2 times" in out and "previous index is kept" in out
    assert read_meta(next((index / "docs").iterdir())) == before  # the previous index is still searched
    (failure,) = json.loads((index / "manifest.json").read_text())["failures"].values()
    assert failure["kind"] == "crashed" and failure["kept_previous_index"] is True


# ---- helpers ----------------------------------------------------------------------------------
def _args(c: dict, index: Path) -> list[str]:
    return [
        "--catalog",
        str(c["catalog"]),
        "--pdf-dir",
        str(c["pdf_dir"]),
        "--index",
        str(index),
        "--no-progress",
    ]


def _subset(c: dict, tmp_path: Path, language: str) -> dict:
    rows = [json.loads(line) for line in c["catalog"].read_text().splitlines() if line]
    row = next(r for r in rows if r["language"] == language)
    catalog = tmp_path / "one.jsonl"
    catalog.write_text(json.dumps(row, ensure_ascii=False) + "\n")
    return {"catalog": catalog, "pdf_dir": c["pdf_dir"]}


def _rewrite_one(c: dict, out: Path) -> dict:
    """The same catalog over a copy of the PDFs in which the first document's file has changed."""
    rows = [json.loads(line) for line in c["catalog"].read_text().splitlines() if line]
    pdf_dir = out / "pdf2"
    shutil.copytree(c["pdf_dir"], pdf_dir)
    target = pdf_dir / f"{rows[0]['id']}.pdf"
    target.write_bytes(target.read_bytes() + b"\n%changed\n")  # same pages, new bytes: a new hash
    return {"catalog": c["catalog"], "pdf_dir": pdf_dir}


def _assert_same_index(a: Path, b: Path) -> None:
    files_a = sorted(p.relative_to(a) for p in (a / "docs").rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in (b / "docs").rglob("*") if p.is_file())
    assert files_a == files_b and files_a
    for rel in files_a:
        # bm25s numbers its vocabulary in set order, which differs between any two processes (two local
        # builds differ too): the BM25 side is compared by its scores below
        if "bm25" not in rel.parts:
            assert (a / rel).read_bytes() == (b / rel).read_bytes(), f"{rel} differs"
    ma, mb = (json.loads((x / "manifest.json").read_text()) for x in (a, b))
    for m in (ma, mb):
        del m["built_at"], m["seconds"]
    assert ma == mb
    sa, sb = IndexStore.open(a), IndexStore.open(b)
    for doc_id in sa.indexed_ids():
        for query in QUERIES:
            assert (
                sa.index(doc_id).lexical.scores(query).tolist()
                == sb.index(doc_id).lexical.scores(query).tolist()
            )
            assert [(p.text, p.score) for p in sa.search(doc_id, query)] == [
                (p.text, p.score) for p in sb.search(doc_id, query)
            ]
    for query in QUERIES:
        ranked = [
            [(p.doc_id, p.text, round(p.score, 6)) for p in s.search_pooled(query, k=10)] for s in (sa, sb)
        ]
        assert ranked[0] == ranked[1] and ranked[0]


def _ints(text: str, before: str, after: str) -> int:
    line = next(x for x in text.splitlines() if before in x and after in x)
    return int(line.split(before, 1)[1].split(after, 1)[0])


class _killing:
    """kill -9, from a thread, up to `times` processes of ours whose title is `title` (a Ray worker
    running that task): one process per task attempt, each killed once, while the block runs."""

    def __init__(self, title: bytes, killed: list[int], times: int):
        self.title, self.killed, self.times = title, killed, times
        self.stop = threading.Event()

    def __enter__(self):
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()

    def _watch(self):
        while not self.stop.is_set() and len(self.killed) < self.times:
            for pid in _descendants(os.getpid()):
                try:
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                except OSError:
                    continue
                if cmdline.startswith(self.title) and pid not in self.killed:
                    os.kill(pid, signal.SIGKILL)
                    self.killed.append(pid)
            time.sleep(0.01)


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    found, stack = [], list(children.get(root, []))
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found
