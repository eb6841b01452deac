"""The two CLIs: output shapes and exit codes exactly as the issue states them."""

from __future__ import annotations

import json

from collate import build, search


def test_build_then_search_one_document_and_a_batch(tiny_collection, tmp_path, capsys):
    c = tiny_collection
    args = ["--catalog", str(c["catalog"]), "--pdf-dir", str(c["pdf_dir"]), "--index", str(c["index"])]
    # some documents failed: exit 1, each named (0 only when every document is indexed)
    assert build.main([*args, "--workers", "1", "--embedder", "hashing-256", "--no-progress"]) == 1
    captured = capsys.readouterr()
    out = captured.out
    assert "2 built, 0 unchanged, 5 failed" in out and "FAILED enc: encrypted" in out and "Fix:" in out
    assert "5 of 7 documents failed: enc, bad, blank, scan, missing" in captured.err

    assert (
        search.main(
            ["--index", str(c["index"]), "--doc", "zh1", "--query", "资本充足率", "-k", "2", "--json"]
        )
        == 0
    )
    hits = json.loads(capsys.readouterr().out)
    assert len(hits) == 2 and {"doc_id", "page", "text", "score"} <= set(hits[0])
    assert hits[0]["doc_id"] == "zh1" and hits[0]["page"] == 1 and "15.44%" in hits[0]["text"]
    assert hits[0]["score"] >= hits[1]["score"]

    queries = tmp_path / "q.jsonl"
    lines = [
        {"doc_id": "en1", "query": "net income"},
        {"doc_id": "enc", "query": "x"},
        {"doc_id": "zh1", "query": "毕马威"},
    ]
    queries.write_text("\n".join(json.dumps(q, ensure_ascii=False) for q in lines), encoding="utf-8")
    assert search.main(["--index", str(c["index"]), "--queries", str(queries), "-k", "1", "--json"]) == 0
    captured = capsys.readouterr()
    results = [json.loads(line) for line in captured.out.splitlines()]
    assert len(results) == 3 and results[1] == []
    assert "Net income" in results[0][0]["text"] and results[2][0]["page"] == 2
    assert "enc" in captured.err and "encrypted" in captured.err

    # a Chinese document is BM25-only by default: dense mode says so instead of failing
    assert (
        search.main(
            ["--index", str(c["index"]), "--doc", "zh1", "--query", "资本", "--mode", "dense", "--json"]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert json.loads(captured.out) == [] and "--dense all" in captured.err


def test_bad_arguments_and_missing_index_exit_non_zero(tiny_collection, tmp_path, capsys):
    c = tiny_collection
    assert (
        build.main(["--catalog", str(tmp_path / "no.jsonl"), "--pdf-dir", str(c["pdf_dir"]), "--index", "x"])
        == 2
    )
    assert "catalog file not found" in capsys.readouterr().err
    assert (
        build.main(["--catalog", str(c["catalog"]), "--pdf-dir", str(tmp_path / "no"), "--index", "x"]) == 2
    )
    assert "--pdf-dir" in capsys.readouterr().err
    assert search.main(["--index", str(tmp_path / "none"), "--doc", "a", "--query", "q", "--json"]) == 2
    assert "collate build" in capsys.readouterr().err
    assert search.main(["--index", str(tmp_path / "none"), "--doc", "a", "--json"]) == 2
    assert search.main(["--index", "x", "--doc", "a", "--query", "q", "--queries", "f.jsonl"]) == 2
    assert search.main(["--index", "x", "--queries", str(tmp_path / "nofile.jsonl")]) == 2
    capsys.readouterr()
    build.main(
        [
            "--catalog",
            str(c["catalog"]),
            "--pdf-dir",
            str(c["pdf_dir"]),
            "--index",
            str(c["index"]),
            "--workers",
            "1",
            "--embedder",
            "hashing-256",
            "--no-progress",
        ]
    )
    assert search.main(["--index", str(c["index"]), "--doc", "unknown-id", "--query", "q"]) == 2
    assert "not in the index's catalog" in capsys.readouterr().err


def test_a_batch_line_naming_an_unknown_document_warns_in_plain_words(tiny_collection, tmp_path, capsys):
    c = tiny_collection
    args = ["--catalog", str(c["catalog"]), "--pdf-dir", str(c["pdf_dir"]), "--index", str(c["index"])]
    assert build.main([*args, "--workers", "1", "--embedder", "hashing-256", "--no-progress"]) == 1
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"doc_id": "nope", "query": "x"}\n{"doc_id": "zh1", "query": "毕马威"}\n', encoding="utf-8"
    )
    capsys.readouterr()
    assert search.main(["--index", str(c["index"]), "--queries", str(queries), "--json"]) == 0
    captured = capsys.readouterr()
    # the KeyError's message, not its quoted repr
    assert captured.err.strip() == "warning: document 'nope' is not in the catalog"
    first, second = (json.loads(line) for line in captured.out.splitlines())
    assert first == [] and "毕马威" in second[0]["text"]


def test_dense_chunks_flag_reaches_the_index_and_a_wrong_value_names_the_choices(tiny_collection, capsys):
    c = tiny_collection
    args = ["--catalog", str(c["catalog"]), "--pdf-dir", str(c["pdf_dir"]), "--index", str(c["index"])]
    assert build.main([*args, "--embedder", "hashing-256", "--no-progress", "--dense-chunks", "all"]) == 1
    assert json.loads((c["index"] / "manifest.json").read_text())["dense_chunks"] == "all"
    capsys.readouterr()
    assert build.main([*args, "--dense-chunks", "tables"]) == 2
    assert "choose from 'figures', 'all'" in capsys.readouterr().err
