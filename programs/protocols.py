"""The two seams every stage and command is written against: the document store and the program.

Structural types (typing.Protocol), so the index store, a test's fake store, the Analyst and the
flat-RAG baseline fit without inheriting anything; the type checker (mypy, in CI) holds callers to them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from programs.result import ProgramResult
from retrievers.catalog import Catalog
from signatures.types import Passage


@runtime_checkable
class DocumentStore(Protocol):
    """An index folder opened for reading: the catalog, per-document search, the pages a fact is checked on."""

    catalog: Catalog

    def search(
        self, doc_id: str, query: str, k: int = 5, mode: str = "hybrid", terms: list[str] | None = None
    ) -> list[Passage]: ...

    def search_pooled(self, query: str, k: int, doc_ids: list[str] | None = None) -> list[Passage]: ...

    def page_texts(self, doc_id: str) -> dict[int, str] | None: ...  # None: pages unknown, nothing checked

    def pdf_path(self, doc_id: str) -> Path | None: ...

    def failures(self) -> dict[str, dict]: ...


@runtime_checkable
class Program(Protocol):
    """What a command runs and an optimizer tunes: a DSPy module answering a question over documents."""

    def __call__(self, question: str, doc_ids: list[str] | None = None) -> ProgramResult: ...

    def named_predictors(self) -> list: ...

    def save(self, path: str) -> None: ...

    def load(self, path: str) -> None: ...
