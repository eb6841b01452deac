"""The store and the programs fit the seams they are typed against (programs/protocols.py)."""

from programs.analyst import Analyst
from programs.flat_rag import FlatRAG
from programs.protocols import DocumentStore, Program
from retrievers.indexing.store import IndexStore


def test_the_index_store_is_a_document_store(tmp_path):
    from retrievers.catalog import Catalog

    (tmp_path / "catalog.jsonl").write_text('{"id": "a", "symbol": "A", "year": 2023, "doctype": "10K"}\n')
    catalog = Catalog.load(tmp_path / "catalog.jsonl")
    assert isinstance(IndexStore(tmp_path, catalog, {}), DocumentStore)


def test_both_programs_are_programs(store, settings):
    from programs.analyst import build_program
    from programs.flat_rag import build_flat_rag

    for program in (build_program(settings, store), build_flat_rag(settings, store)):
        assert isinstance(program, Program) and isinstance(program, Analyst | FlatRAG)
