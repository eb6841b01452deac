"""Issue 33 item 1, as the probe found it: a filing replaced under the same id, the index rebuilt
("1 built, N unchanged"), then `collate ask` again on the index's own fact store. The replaced
document must be read again: its answer's facts come from the new file's pages, never the old one's."""

from __future__ import annotations

import json
import shutil

from collate import ask
from fakes.brain import Brain
from fakes.corpus import build_corpus, dataset_items, run_module
from fakes.server import FakeLMServer
from retrievers.indexing.store import IndexStore


def ask_json(corpus, index, question_id, server, monkeypatch, capsys) -> dict:
    for name, value in server.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("COLLATE_CACHE", "false")
    code = ask.main(
        [
            "--index",
            str(index),
            "--dataset",
            str(corpus / "dataset.json"),
            "--question-id",
            question_id,
            "--json",
            "--no-progress",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


def test_a_replaced_and_rebuilt_filing_is_read_again(tmp_path, monkeypatch, capsys):
    corpus, index = build_corpus(
        tmp_path / "a", "--companies", "4", "--years", "2022", "--pages", "6", "--seed", "11"
    )
    other = tmp_path / "b"
    run_module(
        "data.synth",
        "--out",
        str(other),
        "--companies",
        "4",
        "--years",
        "2022",
        "--pages",
        "6",
        "--seed",
        "12",
    )
    item = next(i for i in dataset_items(corpus) if "资本充足率最高" in i["question"])
    replaced = item["metadata"][0]
    donor = next(
        json.loads(line)
        for line in (other / "catalog.jsonl").read_text(encoding="utf-8").splitlines()
        if json.loads(line)["doctype"] == replaced["doctype"]
    )

    with FakeLMServer(Brain()) as server:
        first = ask_json(corpus, index, item["question_id"], server, monkeypatch, capsys)
        shutil.copyfile(other / "pdf" / f"{donor['id']}.pdf", corpus / "pdf" / f"{replaced['id']}.pdf")
        run_module(
            "retrievers.build",
            *("--catalog", str(corpus / "catalog.jsonl"), "--pdf-dir", str(corpus / "pdf")),
            *("--index", str(index), "--embedder", "hashing-256", "--no-progress"),
        )
        server.reset_counts()
        second = ask_json(corpus, index, item["question_id"], server, monkeypatch, capsys)
        asked = server.calls_by_kind().get("extract", 0)

    assert asked == 1  # only the replaced document (before the fix: 0, every value "from stored facts")
    pages = IndexStore.open(index).page_texts(replaced["id"])
    quotes = [c["quote"] for c in second["citations"] if c["doc_id"] == replaced["id"] and c["quote"]]
    assert quotes and all(any(q in text for text in pages.values()) for q in quotes)
    old = [c["quote"] for c in first["citations"] if c["doc_id"] == replaced["id"] and c["quote"]]
    assert old != quotes  # the new file's figures, not the old file's
