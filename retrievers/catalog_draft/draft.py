"""Draft a catalog from a folder of PDFs: each file's identity read from its first pages by rules.

A row is settled when the rules found its symbol, year and doctype; its `confidence` says how:
  high    every field on the first pages, by a rule that reads where the filing must state it (the SEC
          cover, the A-share title)
  medium  some field inferred ("under the symbol" in Item 5, a notice number's year) or read past the
          first pages: check it
  low     some field from the LM fallback (programs.catalog_lm), verified against the text: check it
and its `source` names the rule behind each field. A file that cannot be read, or whose fields the rules
cannot all find, is unsettled: left out of the catalog (which must load as it is) and listed with what
is missing and the row to complete. No LM here: retrievers/ never calls one.
"""

from __future__ import annotations

import json
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import pypdfium2 as pdfium

from retrievers.catalog_draft.duplicates import identical_files
from retrievers.catalog_draft.finding import Finding
from retrievers.catalog_draft.rules_en import cover_contradicts_content, read_us_filing, symbol_in_prose
from retrievers.catalog_draft.rules_zh import read_a_share
from retrievers.catalog_draft.same_company import symbols_from_folder
from retrievers.doc_ids import folder_name, id_problem
from retrievers.documents.pdf import ParseError, is_han, parse_first_pages
from signatures.errors import CollateError

# The cover and what follows it: an 8-K's symbol table is on its second page (PepsiCo's of 2023-05-05).
FIRST_PAGES = 3
# Read when the first pages leave a field unfound: a 10-K filed before 2019 has no symbol table on its
# cover, and Item 5 names the symbol by page 35 in all 22 FinanceBench dev filings (Adobe 2015: page 33);
# an annual report may open with a glossy section before its 10-K cover, an A-share report print its
# code only in 公司简介. Fields found there are marked for a check. pdfium's raw text costs ~3 ms a page
# (all 3,482 dev pages, with the symbol search: 10.8 s).
LATER_PAGES = 60
# Read for the symbol alone when the 60 pages did not name it: Item 5 comes after Item 1A's risk
# factors, which in a long 10-K run it to page 81 (AES 2015) or 86 (AES 2016).
SYMBOL_PAGES = 150
# Letters and digits among the visible characters of the first pages: 0.90-0.97 in 85 of the 86 real
# filings (dev and financebench-more), 0.35 in the one whose font has no Unicode map (McDonald's Q4 2022
# release).
GARBLED_LETTERS = 0.5
REQUIRED = ("symbol", "year", "doctype")
# A text is Chinese when this share of its letters are Han characters: the synthetic A-share filings'
# first pages measure 0.99-1.00, the synthetic 10-Ks and all 22 real dev filings 0.
HAN_SHARE = 0.3
CONFIDENCE = ("high", "medium", "low")


@dataclass
class DraftRow:
    """One file's drafted identity; `text` (its first pages) is kept for the LM fallback, never written."""

    file: Path
    id: str
    found: dict[str, Finding] = field(default_factory=dict)
    problem: str = ""  # why the file could not be read, with the fix (a ParseError's text)
    duplicate_of: DraftRow | None = None  # a byte-identical file drafted first: this one is left out
    conflict: str = ""  # two readings of the file that disagree (its cover's and its content's), both named
    notes: list[str] = field(default_factory=list)  # e.g. what the LM answered that the text did not bear out
    text: str = ""

    def missing(self) -> list[str]:
        return [name for name in REQUIRED if name not in self.found]

    @property
    def settled(self) -> bool:
        return not self.problem and not self.missing() and self.duplicate_of is None and not self.conflict

    @property
    def confidence(self) -> str:
        rules = [self.found[name] for name in REQUIRED if name in self.found]
        if any(f.rule.startswith("lm:") for f in rules):
            return "low"
        return "high" if all(f.sure for f in rules) else "medium"

    def row(self, catalog_dir: Path) -> dict:
        """The catalog row: the loader's columns, then company, confidence and source (which it ignores)."""
        values = {name: f.value for name, f in self.found.items()}
        return {
            "id": self.id,
            "symbol": values.get("symbol"),
            "year": values.get("year"),
            "doctype": values.get("doctype"),
            "language": values.get("language"),
            "company": values.get("company"),
            "path": _path_from(catalog_dir, self.file),
            "confidence": self.confidence if self.settled else None,
            "source": {name: f.rule for name, f in self.found.items()},
        }


def _path_from(catalog_dir: Path, file: Path) -> str:
    """Relative to the catalog when the file lies under its folder (the pair moves together), else absolute."""
    file, base = file.resolve(), catalog_dir.resolve()
    return file.relative_to(base).as_posix() if file.is_relative_to(base) else str(file)


def pdf_files(pdf_dir: str | Path) -> list[Path]:
    """The PDFs directly in the folder (.pdf in any letter case), in name order."""
    return sorted(p for p in Path(pdf_dir).iterdir() if p.is_file() and p.suffix.lower() == ".pdf")


def draft_catalog(pdf_dir: str | Path, keep_duplicates: bool = False) -> list[DraftRow]:
    """One row per PDF; a file byte-identical to one before it (name order) is drafted but left out of
    the catalog, named with the file kept, unless `keep_duplicates`."""
    files = pdf_files(pdf_dir)
    rows = [draft_file(path, doc_id) for path, doc_id in zip(files, file_ids(files), strict=True)]
    symbols_from_folder(rows)
    if not keep_duplicates:
        by_file = {r.file: r for r in rows}
        for copy, original in identical_files(files).items():
            by_file[copy].duplicate_of = by_file[original]
    return rows


def file_ids(files: list[Path]) -> list[str]:
    """Each file's id: its name without .pdf, made usable (retrievers.doc_ids) and unique across the
    folder, also where two names differ only in letter case (one index folder on macOS/Windows)."""
    ids, taken = [], set()
    for path in files:
        base = "doc" if id_problem(path.stem) else path.stem  # "..pdf": a stem that names a folder
        doc_id, n = base, 1
        while folder_name(doc_id).casefold() in taken:
            n += 1
            doc_id = f"{base}-{n}"
        taken.add(folder_name(doc_id).casefold())
        ids.append(doc_id)
    return ids


def draft_file(path: Path, doc_id: str) -> DraftRow:
    row = DraftRow(file=path, id=doc_id)
    if path.stat().st_size == 0:
        row.problem = "empty: the file has 0 bytes. Fix: copy or download it again (the copy did not finish)"
        return row
    try:
        pages = parse_first_pages(path, FIRST_PAGES)
    except ParseError as exc:
        row.problem = str(exc)
        return row
    row.text = unicodedata.normalize("NFKC", "\n".join(p.text for p in pages))
    later: list[str] = []  # pdfium's text of the pages after the first, read once and only if needed

    def later_text() -> str:
        if not later:
            later.append(_later_text(path, FIRST_PAGES, LATER_PAGES))
        return later[0]

    if garbled(row.text):  # a font with no Unicode map: the text layer is noise; the cover's image is not
        row.text, row.problem = _ocr_cover(path)
        if row.problem:
            return row
    blank_cover = not row.text.strip()
    if blank_cover:  # an image cover (common on ESG reports): the title may be printed further on
        row.text = later_text()
        if not row.text.strip():
            row.problem = "scanned: its pages hold no text layer. Fix: run OCR (e.g. ocrmypdf) on the file"
            return row
    language = "zh" if _han_share(row.text) >= HAN_SHARE else "en"
    row.found["language"] = Finding(language, "text:script", sure=True)

    def read(text: str) -> dict[str, Finding]:
        return read_a_share(text) if language == "zh" else read_us_filing(text, later_text)

    row.found.update(_later(read(row.text)) if blank_cover else read(row.text))
    if language == "en" and not blank_cover and len(pages) > 1:
        row.conflict = cover_contradicts_content(pages[0].text, "\n".join(p.text for p in pages[1:])) or ""
    if row.missing() and not blank_cover:
        cover_named_form = "doctype" in row.found
        for name, found in _later(read(later_text())).items():
            # a year read past the cover of a form the cover named would be the period of some other
            # text (a 10-Q whose fiscal year end is nowhere printed stays without one: not guessed)
            if name != "year" or not cover_named_form:
                row.found.setdefault(name, found)
    if language == "en" and "symbol" not in row.found:
        # Item 5's "under the symbol": by page 35 in the dev filings, page 85 in AES's 10-K for 2016
        prose = symbol_in_prose(later_text()) or symbol_in_prose(_later_text(path, LATER_PAGES, SYMBOL_PAGES))
        if prose:
            row.found["symbol"] = prose
    return row


def garbled(text: str) -> bool:
    """A text layer that is noise: control characters and symbols where words should be (a font embedded
    without its Unicode map; McDonald's release for Q4 2022 reads '!"#$!%&'( )' *+,(-')."""
    visible = [ch for ch in text if not ch.isspace()]
    if len(visible) < 200:
        return False
    letters = sum(1 for ch in visible if ch.isalnum())
    return letters / len(visible) < GARBLED_LETTERS


def _ocr_cover(path: Path) -> tuple[str, str]:
    """(the first page's text read by OCR, "") or ("", the problem with its fix)."""
    from retrievers.documents.ocr import read_page

    fix = "its text layer is unreadable (a font without a Unicode map). Fix: run OCR on it (ocrmypdf --force-ocr)"
    try:
        pdf = pdfium.PdfDocument(str(path))
        try:
            page = pdf[0]
            lines = read_page(page)
            page.close()
        finally:
            pdf.close()
    except ParseError as exc:  # the OCR engine is not installed or cannot load: its own fix
        return "", f"{fix}, or {exc}"
    except pdfium.PdfiumError as exc:
        return "", f"{fix} ({exc})"
    lines.sort(key=lambda line: (-round(line.top / 4), line.left))  # top to bottom, left to right
    text = unicodedata.normalize("NFKC", "\n".join(line.text for line in lines))
    return (text, "") if text.strip() else ("", fix)


def _later(found: dict[str, Finding]) -> dict[str, Finding]:
    """Findings past the first pages, marked for a check: there a rule may read some other document's
    words (an exhibit, a subsidiary's notice)."""
    return {name: f._replace(rule=f"{f.rule}@later-pages", sure=False) for name, f in found.items()}


def _han_share(text: str) -> float:
    letters = [ch for ch in text if ch.isalpha()]
    return sum(1 for ch in letters if is_han(ch)) / len(letters) if letters else 0.0


def _later_text(path: Path, start: int, stop: int) -> str:
    """pdfium's own text of pages start..stop-1 (0-based): enough to find a sentence, 10x cheaper than
    parsing the pages' layout."""
    pdf = pdfium.PdfDocument(str(path))
    try:
        texts = []
        for i in range(start, min(stop, len(pdf))):
            page = pdf[i]
            textpage = page.get_textpage()
            texts.append(textpage.get_text_range())
            textpage.close()
            page.close()
        return unicodedata.normalize("NFKC", "\n".join(texts))
    finally:
        pdf.close()


# ---- writing -----------------------------------------------------------------------------------------
def unsettled_path(out: Path) -> Path:
    return out.with_name(out.name + ".unsettled.txt")


def catalog_text(rows: list[DraftRow], catalog_dir: Path) -> str:
    return "".join(json.dumps(r.row(catalog_dir), ensure_ascii=False) + "\n" for r in rows if r.settled)


def write_draft(rows: list[DraftRow], out: Path) -> Path | None:
    """Write the settled rows to `out` (JSONL) and the unsettled ones to `<out>.unsettled.txt`; a stale
    list from an earlier draft is removed. Returns the list's path, None when every row settled.
    A write that fails (a read-only disk, a folder named like the file, a full disk) leaves no `.tmp`
    behind and `out` as it was, and raises DraftWriteError naming the fix."""
    tmp = out.with_name(out.name + ".tmp")
    listing = unsettled_path(out)
    unsettled = [r for r in rows if not r.settled]
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(catalog_text(rows, out.parent), encoding="utf-8")
        tmp.replace(out)
        if not unsettled:
            listing.unlink(missing_ok=True)
            return None
        listing.write_text(unsettled_report(unsettled, out), encoding="utf-8")
    except OSError as exc:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:  # the folder itself cannot be written: no .tmp was made in it
            pass
        raise DraftWriteError(
            f"cannot write the catalog {out} ({exc.strerror or exc}): give a file path in a folder you can "
            "write to, on a disk with free space"
        ) from exc
    return listing


class DraftWriteError(CollateError):
    """The drafted catalog could not be written; the message names the fix."""

    exit_code = 2


def unsettled_report(rows: list[DraftRow], out: Path) -> str:
    """The rows left out of `out`: the files to complete by hand, then the byte-identical copies (nothing to
    fill in: each names the file it copies; a list that called them "could not settle" beside a summary of
    "0 unsettled" read as a contradiction)."""
    lines = []
    for group, header in (
        (
            [r for r in rows if r.duplicate_of is None],
            "file(s) the draft could not settle, left out of {out}. For each: what is missing, then its row; "
            "fill in the ? fields and add the line to the catalog.",
        ),
        (
            [r for r in rows if r.duplicate_of is not None],
            "file(s) left out of {out} as byte-identical copies of a file it holds: nothing to fill in. To "
            "keep one too, add its row to the catalog, or draft with --keep-duplicates.",
        ),
    ):
        if group:
            lines.append(f"# {len(group)} " + header.format(out=out.name))
        for r in group:
            row = r.row(out.parent)
            row.pop("confidence")
            row["source"] = {**row["source"], **{name: "by hand" for name in r.missing()}}
            for name in r.missing():
                row[name] = "?"
            lines += [
                f"{r.file.name}: {why_unsettled(r)}",
                *(f"  note: {n}" for n in r.notes),
                "  " + json.dumps(row, ensure_ascii=False),
            ]
    return "\n".join(lines) + "\n"


def copy_note(row: DraftRow, indexed: bool = False) -> str:
    """A file left out as a byte-identical copy, in one line: the file it copies, the row kept, the flag."""
    original = row.duplicate_of
    assert original is not None
    done, verb = ("indexed once", "index") if indexed else ("kept once", "keep")
    return (
        f"a byte-identical copy of {original.file.name} (id {original.id}): {done}, as {original.id}; "
        f"pass --keep-duplicates to {verb} both"
    )


def why_unsettled(row: DraftRow) -> str:
    if row.problem:
        return row.problem
    if row.conflict:
        return f"{row.conflict}. Fix: read the file, and complete its row by hand"
    if row.duplicate_of is not None:
        return copy_note(row)
    where = "its first pages"
    if row.missing() == ["symbol"]:
        where += ", its Item 5, or another filing of its company in the folder"
    return f"no {', no '.join(row.missing())} found in {where}"


def summary(rows: list[DraftRow]) -> str:
    settled = [r for r in rows if r.settled]
    counts = {c: sum(1 for r in settled if r.confidence == c) for c in CONFIDENCE}
    copies = sum(1 for r in rows if r.duplicate_of is not None)
    return (
        f"{len(settled)} of {len(rows)} files settled (confidence: "
        + ", ".join(f"{n} {c}" for c, n in counts.items())
        + f"); {len(rows) - len(settled) - copies} unsettled"
        + (f"; {copies} byte-identical to another file, kept once" if copies else "")
    )
