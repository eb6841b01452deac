"""A tiny synthetic corpus and its index, built once per test session (or per benchmark run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_module(module: str, *args: str, timeout: float = 600) -> None:
    """Run one of the project's CLIs as a user would; its stderr is the failure message."""
    done = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"python -m {module} {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}"
        )


def build_corpus(folder: Path, *synth_args: str, embedder: str | None = "hashing-256") -> tuple[Path, Path]:
    """Generate PDFs + dataset.json with data.synth, then index them; returns (corpus dir, index dir)."""
    corpus, index = folder / "corpus", folder / "index"
    if not (corpus / "dataset.json").exists():
        run_module("data.synth", "--out", str(corpus), *synth_args)
    if not (index / "catalog.sqlite").exists():
        extra = ["--embedder", embedder] if embedder else []
        run_module(
            "retrievers.build",
            "--catalog",
            str(corpus / "catalog.jsonl"),
            "--pdf-dir",
            str(corpus / "pdf"),
            "--index",
            str(index),
            "--workers",
            "2",
            "--no-progress",
            *extra,
        )
    return corpus, index


def dataset_items(corpus: Path) -> list[dict]:
    return json.loads((corpus / "dataset.json").read_text(encoding="utf-8"))
