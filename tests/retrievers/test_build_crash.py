"""kill -9 a build at random points: every document stays at its previous index or its new one, and a
rerun finishes the job without redoing what was already saved (issue 11, the crash test)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

from retrievers.building.build import build_index
from retrievers.catalog import Catalog
from retrievers.indexing.store import IndexStore, read_meta

ROOT = Path(__file__).resolve().parents[2]
DOCS, ROUNDS, SEED = 10, 4, 11  # a round is ~1-5 s, mostly the build's start-up
# Each of the two versions of a document is recognisable in its index by a phrase only it contains.
MARKER = {
    "cjk": ("资本充足率", "15.44%"),
    "column": ("total assets", "Total assets"),
    "dividend": ("dividend", "1.23"),
}


def _start_build(catalog: Path, pdf_dir: Path, index: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "retrievers.build",
            "--catalog",
            str(catalog),
            "--pdf-dir",
            str(pdf_dir),
            "--index",
            str(index),
            "--workers",
            "2",
            "--embedder",
            "hashing-256",
            "--no-progress",
            # the documents share three files' bytes on purpose (each moves between versions): keep every id
            "--keep-duplicates",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _wait_for_group_to_end(pgid: int, timeout: float = 120) -> None:
    """The killed build's workers die with it (they must not go on writing into the index). The
    deadline only guards against a worker that never ends; how fast they go is not timed here."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        assert time.monotonic() < deadline, "a worker outlived its killed build"
        time.sleep(0.02)


def _wait_until_new(index: Path, new_hash: dict[str, str], count: int, proc: subprocess.Popen) -> None:
    """Until `count` documents hold their new index (or the build ended, or 240 s passed: a hang guard,
    the build's start-up alone takes many seconds on a loaded machine)."""
    deadline = time.monotonic() + 240
    while proc.poll() is None and time.monotonic() < deadline:
        metas = {d: read_meta(index / "docs" / d) or {} for d in new_hash}
        if sum(1 for d, m in metas.items() if m.get("content_hash") == new_hash[d]) >= count:
            return
        time.sleep(0.005)


def _check_consistent(index: Path, by_hash: dict[str, str]) -> dict[str, str]:
    """Every document's index is whole and of a known version; returns doc id -> version held."""
    store = IndexStore.open(index)  # the index loads
    held = {}
    for doc_id in (d.id for d in store.catalog.documents()):
        meta = read_meta(index / "docs" / doc_id)
        assert meta is not None, f"{doc_id} lost its index"
        assert meta["content_hash"] in by_hash, f"{doc_id} holds an index of no version"
        version = by_hash[meta["content_hash"]]
        query, phrase = MARKER[version]
        top = store.search(doc_id, query, k=1)  # every file of the folder is read: none is partial
        assert phrase in top[0].text, f"{doc_id}: meta says {version}, chunks say otherwise"
        held[doc_id] = version
    return held


def _write_dividend_note(path: Path) -> Path:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    c = canvas.Canvas(str(path), pagesize=A4)
    c.drawString(72, 780, "Note 12. Dividend per share was raised to 1.23 for the year.")
    c.save()
    return path


def test_kill_9_at_random_points_never_leaves_a_document_half_built(tmp_path, writers):
    # three versions, each written once: a document moves to another one each round, so the version
    # it holds after a kill must be the one before or the one after, never the third
    versions = {}
    for version, writer in (
        ("cjk", writers.cjk),
        ("column", writers.column),
        ("dividend", _write_dividend_note),
    ):
        versions[version] = writer(tmp_path / f"{version}.pdf").read_bytes()
    by_hash = {hashlib.sha256(data).hexdigest(): v for v, data in versions.items()}
    hash_of = {v: h for h, v in by_hash.items()}
    pdf_dir, index = tmp_path / "pdf", tmp_path / "index"
    pdf_dir.mkdir()
    held = {f"d{i}": ("cjk", "column", "dividend")[i % 3] for i in range(DOCS)}
    for doc_id, version in held.items():
        (pdf_dir / f"{doc_id}.pdf").write_bytes(versions[version])
    catalog = tmp_path / "catalog.jsonl"
    catalog.write_text(
        "".join(
            json.dumps({"id": d, "symbol": "600000", "year": 2022, "doctype": "A股年报"}, ensure_ascii=False)
            + "\n"
            for d in held
        )
    )
    build_index(Catalog.load(catalog), pdf_dir, index, workers=2, embedder="hashing-256", progress=False)
    assert _check_consistent(index, by_hash) == held

    rng = random.Random(SEED)
    outcomes = []
    for _ in range(ROUNDS):
        target = {d: rng.choice([v for v in versions if v != held[d]]) for d in held}  # every file changes
        for doc_id, version in target.items():
            (pdf_dir / f"{doc_id}.pdf").write_bytes(versions[version])
        proc = _start_build(catalog, pdf_dir, index)
        # a random point of the build's work (start-up dominates its wall time on a busy machine):
        # once a random number of documents is swapped in, then a random few milliseconds more
        _wait_until_new(index, {d: hash_of[v] for d, v in target.items()}, rng.randrange(DOCS), proc)
        time.sleep(rng.uniform(0, 0.05))
        proc.kill()  # SIGKILL to the build itself, as the OOM killer or `kill -9 PID` would
        proc.wait()
        _wait_for_group_to_end(proc.pid)
        after = _check_consistent(index, by_hash)
        for doc_id, version in after.items():
            assert version in (held[doc_id], target[doc_id]), f"{doc_id}: {version}, neither before nor after"
        outcomes.append(sum(after[d] == target[d] for d in target))
        held = after
    assert any(0 < n < DOCS for n in outcomes), f"no kill landed mid-build: new versions per round {outcomes}"

    # the rerun finishes: documents already at their new version are not redone
    done_before = {d for d in held if held[d] == target[d]}
    report = build_index(
        Catalog.load(catalog), pdf_dir, index, workers=2, embedder="hashing-256", progress=False
    )
    assert {r.doc_id for r in report.results if r.status == "cached"} == done_before
    assert {r.doc_id for r in report.results if r.status == "built"} == set(target) - done_before
    assert _check_consistent(index, by_hash) == target
    assert not any((index / ".staging").iterdir())  # what the killed builds left was cleaned up
    assert hash_of[target["d0"]] == Catalog.open(index).get("d0").content_hash
