"""The catalog `retrievers.building.build --pdf-dir DIR` drafts when it is given no --catalog: <index>/catalog.draft.jsonl.

Drafted anew on every such build, so PDFs added to the folder get rows; but a draft a person has edited
since the build wrote it is never overwritten: the build stops and says to pass it with --catalog, or to
delete it. The build knows its own draft by the SHA-256 it keeps beside it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from retrievers.catalog_draft.draft import (
    DraftRow,
    DraftWriteError,
    copy_note,
    draft_catalog,
    summary,
    unsettled_path,
    why_unsettled,
    write_draft,
)
from signatures.errors import CollateError

DRAFT_FILE = "catalog.draft.jsonl"


class DraftProblem(CollateError):
    """The build cannot draft a catalog; the message names the fix."""

    exit_code = 2


def draft_for_build(
    pdf_dir: str | Path, index_dir: str | Path, keep_duplicates: bool = False
) -> tuple[Path, list[DraftRow]]:
    """Write the draft into the index folder; returns its path and the drafted rows."""
    out = Path(index_dir) / DRAFT_FILE
    stamp = out.with_name(out.name + ".sha256")
    rows = draft_catalog(pdf_dir, keep_duplicates)
    if not rows:
        raise DraftProblem(
            f"no .pdf files in {pdf_dir}: give the folder holding the PDFs, or a catalog with --catalog"
        )
    if out.exists() and (not stamp.is_file() or stamp.read_text().strip() != _sha256(out)):
        raise DraftProblem(
            f"{out} was edited since a build drafted it: pass it with --catalog {out} (PDFs added since "
            "then need rows of their own), or delete it to draft again"
        )
    try:
        write_draft(rows, out)
        stamp.write_text(_sha256(out) + "\n")
    except (DraftWriteError, OSError) as exc:
        raise DraftProblem(str(exc)) from exc
    if not any(r.settled for r in rows):
        raise DraftProblem(
            f"none of the {len(rows)} PDFs in {pdf_dir} could be settled by rules: complete their rows in "
            f"{unsettled_path(out)}, save them as a catalog and pass it with --catalog (or draft with an LM: "
            f"collate catalog --pdf-dir {pdf_dir} --out catalog.jsonl)"
        )
    return out, rows


def build_note(pdf_dir: str | Path, out: Path, rows: list[DraftRow]) -> str:
    """What the build prints about its draft: where it is, how sure, and the files it leaves out."""
    lines = [f"no --catalog: drafted one from {pdf_dir}: {summary(rows)} -> {out}"]
    for r in rows:
        if r.problem:  # the file itself needs fixing; a fixed file is drafted by the next build
            lines.append(f"NOT INDEXED {r.file.name}: {r.problem}; then build again")
        elif r.duplicate_of is not None:
            lines.append(f"IDENTICAL {r.file.name}: {copy_note(r, indexed=True)}")
        elif not r.settled:
            lines.append(
                f"NOT INDEXED {r.file.name}: {why_unsettled(r)}. Fix: complete its row in {unsettled_path(out)}, "
                "add it to the catalog and pass that with --catalog"
            )
    if any(r.settled and r.confidence != "high" for r in rows):
        lines.append(f"check the rows of confidence medium or low in {out} (their source column says why)")
    return "\n".join(lines)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
