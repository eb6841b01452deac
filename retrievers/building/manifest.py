"""The build's manifest.json: what happened to each document, what the index was built with."""

from __future__ import annotations

import json
import time
from pathlib import Path

from retrievers.building.jobs import PIPELINE
from retrievers.building.ocr_build import manifest_fields
from retrievers.indexing.document_index import FORMAT_VERSION
from retrievers.indexing.store import MANIFEST_FILE


def write_manifest(
    index_dir: Path,
    report,  # BuildReport
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
        **manifest_fields(
            report.results, ocr_engine
        ),  # engine, pages read now and in all, time, per document
    }
    tmp = index_dir / (MANIFEST_FILE + ".tmp")
    try:
        tmp.write_text(json.dumps(manifest, ensure_ascii=False, indent=1), encoding="utf-8")
        tmp.replace(index_dir / MANIFEST_FILE)
    finally:
        tmp.unlink(
            missing_ok=True
        )  # a failed write (a full disk) leaves the old manifest and no partial copy
