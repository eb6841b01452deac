"""`collate catalog` and `retrievers.building.build` without --catalog, end to end on small filing-shaped PDFs."""

from __future__ import annotations

import json

import pytest

from collate.build import main as build
from collate.cli import main as collate
from fakes.chat_format import format_reply, parse_prompt
from fakes.filings import A_SHARE_ANNUAL_COVER, SEC_10K_COVER, write_filing
from fakes.server import FakeLMServer
from retrievers.catalog import Catalog
from retrievers.embedding.embedders import HASHING

REVIEW = "Acme Widgets Annual Review\nA letter to our shareholders on the year 2022.\nAcme Widgets, Inc. (NYSE: ACMW)"


@pytest.fixture
def pdfs(tmp_path):
    folder = tmp_path / "pdfs"
    folder.mkdir()
    write_filing(folder / "a1f3.pdf", [SEC_10K_COVER, "PART I\nItem 1. Business\nWe make widgets."])
    write_filing(folder / "9c0e.pdf", [A_SHARE_ANNUAL_COVER, "第一节 重要提示\n本行经营稳健。"])
    write_filing(folder / "review.pdf", [REVIEW])
    (folder / "empty.pdf").write_bytes(b"")
    return folder


def _rows(path) -> dict:
    return {json.loads(x)["id"]: json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()}


def test_catalog_command_drafts_lists_the_unsettled_and_never_overwrites_without_force(
    pdfs, tmp_path, capsys
):
    out = tmp_path / "catalog.jsonl"
    assert collate(["catalog", "--pdf-dir", str(pdfs), "--out", str(out)]) == 1  # two files unsettled
    printed = capsys.readouterr()
    assert "2 of 4 files settled" in printed.out and str(out) in printed.out
    assert "UNSETTLED empty.pdf: empty: the file has 0 bytes" in printed.out
    assert "UNSETTLED review.pdf: no year, no doctype found" in printed.out
    assert "set COLLATE_LM" in printed.err  # no LM configured: says how to let one try
    assert sorted(d.id for d in Catalog.load(out).documents()) == ["9c0e", "a1f3"]
    assert "review.pdf" in (tmp_path / "catalog.jsonl.unsettled.txt").read_text(encoding="utf-8")

    before = out.read_bytes()
    assert collate(["catalog", "--pdf-dir", str(pdfs), "--out", str(out)]) == 2
    assert "exists: pass --force" in capsys.readouterr().err and out.read_bytes() == before
    assert collate(["catalog", "--pdf-dir", str(pdfs), "--out", str(out), "--force"]) == 1


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--pdf-dir", "{tmp}/nowhere", "--out", "{tmp}/c.jsonl"], "is not a folder"),
        (["--pdf-dir", "{tmp}", "--out", "{tmp}/c.jsonl"], "no .pdf files"),
        (["--pdf-dir", "{pdfs}", "--out", "{tmp}/c.csv"], "must end in .jsonl"),
    ],
)
def test_catalog_command_bad_input_exits_2_naming_the_fix(pdfs, tmp_path, capsys, args, says):
    (tmp_path / "empty_dir").mkdir()
    argv = [a.format(tmp=tmp_path / "empty_dir", pdfs=pdfs) for a in args]
    assert collate(["catalog", *argv]) == 2
    assert says in capsys.readouterr().err


def _catalog_lm(messages, model):
    """A fake model that reads the year and kind of the review the way a person would."""
    asked = parse_prompt(messages).inputs
    assert "Annual Review" in asked["first_pages"]  # only the file the rules could not settle is asked
    return format_reply(
        {"symbol": "ACMW", "year": "2022", "doctype": "US Stock Annual Report", "company": ""}
    )


def test_configured_lm_settles_only_what_the_rules_could_not(pdfs, tmp_path, monkeypatch, capsys):
    out = tmp_path / "catalog.jsonl"
    with FakeLMServer(_catalog_lm) as server:
        for name, value in {**server.env(), "COLLATE_CACHE": "false"}.items():
            monkeypatch.setenv(name, value)
        code = collate(["catalog", "--pdf-dir", str(pdfs), "--out", str(out)])
        assert server.calls == 1  # review.pdf; empty.pdf cannot be read, the others are settled by rules
    assert code == 1  # empty.pdf stays unsettled
    assert "the LM settled 1 of 1" in capsys.readouterr().err
    rows = _rows(out)
    assert (rows["review"]["year"], rows["review"]["confidence"]) == (2022, "low")
    assert rows["review"]["source"]["year"] == "lm:checked-against-text"
    assert rows["a1f3"]["confidence"] == "high"


def test_build_without_catalog_drafts_one_says_where_and_indexes_the_settled(pdfs, tmp_path, capsys):
    index = tmp_path / "index"
    argv = [
        "--pdf-dir",
        str(pdfs),
        "--index",
        str(index),
        "--embedder",
        HASHING,
        "--workers",
        "1",
        "--no-progress",
    ]
    assert build(argv) == 1  # two files not indexed: named
    printed = capsys.readouterr().out
    draft = index / "catalog.draft.jsonl"
    assert f"drafted one from {pdfs}" in printed and str(draft) in printed
    assert "NOT INDEXED empty.pdf" in printed and "NOT INDEXED review.pdf: no year, no doctype" in printed
    assert "2 built" in printed
    assert sorted(d.id for d in Catalog.open(index).documents()) == ["9c0e", "a1f3"]

    assert build(argv) == 1 and "2 unchanged" in capsys.readouterr().out  # its own draft: redrafted freely

    edited = draft.read_text(encoding="utf-8").replace("ACMW", "ACME")
    draft.write_text(edited, encoding="utf-8")
    assert build(argv) == 2
    assert f"pass it with --catalog {draft}" in capsys.readouterr().err
    assert draft.read_text(encoding="utf-8") == edited  # a person's edits are never overwritten
    assert build([*argv, "--catalog", str(draft)]) == 0
    assert Catalog.open(index).get("a1f3").symbol == "ACME"


# ---- where the catalog goes (issue 33 item 10) ----------------------------------------------------------
def _left_behind(folder) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith(".tmp") or "probe" in p.name)


@pytest.mark.parametrize("force", [[], ["--force"]])
def test_out_naming_a_folder_is_one_line_naming_the_fix_and_leaves_nothing(pdfs, tmp_path, capsys, force):
    folder = tmp_path / "catalog.jsonl"
    folder.mkdir()
    assert collate(["catalog", "--pdf-dir", str(pdfs), "--out", str(folder), *force]) == 2
    err = capsys.readouterr().err
    assert "is a folder: give a file name in it" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert _left_behind(tmp_path) == [] and list(folder.iterdir()) == []


def test_out_in_a_read_only_folder_is_one_line_naming_the_fix_and_leaves_nothing(pdfs, tmp_path, capsys):
    from tests.conftest import mount_tmpfs

    read_only = tmp_path / "ro"
    unmount = mount_tmpfs(read_only, "ro,size=64k")
    try:
        assert collate(["catalog", "--pdf-dir", str(pdfs), "--out", str(read_only / "c.jsonl")]) == 2
        err = capsys.readouterr().err
        assert "cannot write in" in err and "folder you can write to" in err and "Traceback" not in err
        assert list(read_only.iterdir()) == []
    finally:
        unmount()


def test_a_write_that_fails_at_the_end_leaves_no_tmp_and_names_the_fix(pdfs, tmp_path):
    from retrievers.catalog_draft.draft import DraftWriteError, draft_catalog, write_draft

    rows = draft_catalog(pdfs)
    out = tmp_path / "out" / "catalog.jsonl"
    out.mkdir(parents=True)  # made after the command's check: the replace at the end fails
    with pytest.raises(DraftWriteError, match="give a file path in a folder you can write to"):
        write_draft(rows, out)
    assert _left_behind(tmp_path) == [] and out.is_dir()


# ---- the same filing under two names (issue 33 item 5) --------------------------------------------------
def test_identical_pdfs_are_drafted_once_and_the_copy_named(pdfs, tmp_path, capsys):
    (pdfs / "zz-copy.pdf").write_bytes((pdfs / "a1f3.pdf").read_bytes())
    out = tmp_path / "catalog.jsonl"
    assert collate(["catalog", "--pdf-dir", str(pdfs), "--out", str(out), "--no-lm"]) == 1  # review, empty
    printed = capsys.readouterr().out
    assert (
        "IDENTICAL zz-copy.pdf: a byte-identical copy of a1f3.pdf (id a1f3): kept once, as a1f3; "
        "pass --keep-duplicates to keep both\n"
    ) in printed
    assert "1 byte-identical to another file, kept once" in printed
    assert sorted(d.id for d in Catalog.load(out).documents()) == ["9c0e", "a1f3"]
    # the list keeps the copy apart from the files to complete: it has nothing to fill in
    to_complete, copies = (tmp_path / "catalog.jsonl.unsettled.txt").read_text().split("\n# ")
    assert to_complete.startswith("# 2 file(s) the draft could not settle") and "zz-copy" not in to_complete
    assert copies.startswith("1 file(s) left out of catalog.jsonl as byte-identical copies")
    assert "zz-copy.pdf: a byte-identical copy of a1f3.pdf (id a1f3)" in copies and "?" not in copies

    kept = ["catalog", "--pdf-dir", str(pdfs), "--out", str(out), "--no-lm", "--force", "--keep-duplicates"]
    assert collate(kept) == 1
    assert sorted(d.id for d in Catalog.load(out).documents()) == ["9c0e", "a1f3", "zz-copy"]


def test_build_indexes_identical_pdfs_of_a_given_catalog_once_and_names_them(pdfs, tmp_path, capsys):
    (pdfs / "copy.pdf").write_bytes((pdfs / "a1f3.pdf").read_bytes())
    catalog = tmp_path / "catalog.jsonl"
    rows = [
        {"id": "GLEN_2022", "symbol": "ACMW", "year": 2022, "doctype": "10K", "path": "a1f3.pdf"},
        {"id": "GLEN_2022_copy", "symbol": "ACMW", "year": 2022, "doctype": "10K", "path": "copy.pdf"},
    ]
    rows.append(
        {"id": "GLEN_2022_again", "symbol": "ACMW", "year": 2022, "doctype": "10K", "path": "a1f3.pdf"}
    )
    catalog.write_text("".join(json.dumps(r) + "\n" for r in rows))
    index = tmp_path / "index"
    argv = ["--catalog", str(catalog), "--pdf-dir", str(pdfs), "--index", str(index), "--embedder", HASHING]
    assert build([*argv, "--workers", "1", "--no-progress"]) == 0
    printed = capsys.readouterr().out
    # one line each: which row and file is the copy, of which row and file, and the flag
    assert (
        "IDENTICAL GLEN_2022_copy: its file copy.pdf is a byte-identical copy of GLEN_2022's a1f3.pdf: "
        "indexed once, as GLEN_2022; pass --keep-duplicates to index both\n"
    ) in printed
    assert (  # a row naming the same file is no "copy": it is the same file
        "IDENTICAL GLEN_2022_again: names the same file as GLEN_2022, a1f3.pdf: indexed once, as GLEN_2022; "
        "pass --keep-duplicates to index both\n"
    ) in printed
    assert [d.id for d in Catalog.open(index).documents()] == ["GLEN_2022"]


def test_a_drafting_build_names_the_copy_it_indexes_once_and_exits_0(tmp_path, capsys):
    folder = tmp_path / "pdfs"
    folder.mkdir()
    write_filing(folder / "a1f3.pdf", [SEC_10K_COVER, "PART I\nItem 1. Business\nWe make widgets."])
    (folder / "zz-copy.pdf").write_bytes((folder / "a1f3.pdf").read_bytes())
    index = tmp_path / "index"
    argv = ["--pdf-dir", str(folder), "--index", str(index), "--embedder", HASHING, "--workers", "1"]
    assert build([*argv, "--no-progress"]) == 0  # nothing failed: the copy is indexed as a1f3
    printed = capsys.readouterr().out
    assert (
        "IDENTICAL zz-copy.pdf: a byte-identical copy of a1f3.pdf (id a1f3): indexed once, as a1f3; "
        "pass --keep-duplicates to index both\n"
    ) in printed
    listing = (index / "catalog.draft.jsonl.unsettled.txt").read_text()
    assert listing.startswith("# 1 file(s) left out of catalog.draft.jsonl as byte-identical copies")
    assert "could not settle" not in listing
