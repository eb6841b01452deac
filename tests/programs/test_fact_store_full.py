"""A fact store that cannot be written (disk full) is a cache miss, not a lost extraction (issue 22 item 3)."""

from __future__ import annotations

import pytest

from programs.facts.store import FactStore
from signatures.types import Fact
from tests.conftest import mount_tmpfs


@pytest.fixture
def small_disk(tmp_path):
    unmount = mount_tmpfs(tmp_path / "disk", "size=256k")
    yield tmp_path / "disk"
    unmount()


def _facts(n: int, doc: str = "d1") -> list[Fact]:
    return [
        Fact(doc_id=doc, field=f"f{i}", description="x" * 2000, value=str(i), quote="q" * 2000, page=1)
        for i in range(n)
    ]


def test_a_full_disk_warns_and_the_run_goes_on(small_disk, caplog):
    store = FactStore(small_disk / "facts.sqlite")
    filler = small_disk / "filler"
    try:  # fill the disk, as another job would
        with filler.open("wb", buffering=0) as fh:
            while True:
                fh.write(b"\0" * 4096)
    except OSError:
        pass
    store.put_many(_facts(50))  # raised sqlite3.OperationalError ("database or disk is full") before
    assert store.write_failures == 1
    assert any("could not save 50 fact(s)" in r.getMessage() for r in caplog.records)
    filler.unlink()
    store.put_many(_facts(1, "d2"))  # space again: the store works as before
    assert store.get("d2", "f0", "x" * 2000) is not None
    store.close()
