"""Benches run their steps in the project's root (cwd=ROOT): a relative folder the user typed elsewhere must
reach them as an absolute path, or the corpus and index land under the root (as `collate demo` once did)."""

from __future__ import annotations

from argparse import Namespace
from pathlib import Path

import pytest


def steps(monkeypatch, module) -> list[list[str]]:
    """The argv of every subprocess.run the bench makes (none is run)."""
    made: list[list[str]] = []
    monkeypatch.setattr(module.subprocess, "run", lambda argv, **kw: made.append(list(argv)))
    return made


def paths_in(argv: list[str]) -> list[str]:
    return [a for a in argv if "/" in a or a.startswith(("rel", "."))]


@pytest.mark.parametrize(
    "bench", ["dataset_cost", "estimate_accuracy", "estimate_accuracy.real_index", "ocr"]
)
def test_a_relative_folder_reaches_the_steps_as_an_absolute_path(bench, tmp_path, monkeypatch):
    import importlib

    name, _, function = bench.partition(".")
    module = importlib.import_module(f"bench.{name}")
    monkeypatch.chdir(tmp_path)
    made = steps(monkeypatch, module)
    if function:
        getattr(module, function)(Path("rel/docs"), Path("rel/index"))
    elif name == "ocr":
        module._corpus(Namespace(out="rel", styles="scan", companies=1, pages=1))
    else:
        module.prepare(Path("rel"))
    assert made, "the bench made no step"
    for argv in made:
        for arg in paths_in(argv[3:]):
            assert Path(arg).is_absolute() and str(arg).startswith(str(tmp_path)), (bench, argv)
