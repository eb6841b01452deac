"""Issue 32 item 5: wrong usage gets one line naming the fix, in the command's own name, and --help
loads no heavy library."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from collate.build import build_summary
from collate.cli import COMMANDS
from collate.cli import main as collate

ROOT = Path(__file__).resolve().parents[2]
# reportlab (0.7 s) and pydantic (0.3 s, with the reader's rules 1.1 s) held `collate synth --help` at 1.8 s
# and `collate reader --help` at 2.1 s on a loaded machine (bench/help_speed.py)
HEAVY = (
    "dspy",
    "mlflow",
    "torch",
    "faiss",
    "pandas",
    "onnxruntime",
    "sentence_transformers",
    "litellm",
    "reportlab",
    "pydantic",
)


def test_a_mistyped_command_is_one_line_with_did_you_mean(capsys):
    assert collate(["bulid"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "did you mean build?" in err


@pytest.mark.parametrize(
    ("argv", "suggests"),
    [
        (["catalog", "--pdf-dir", "x", "--out", "y.jsonl", "--nolm"], "--no-lm"),
        (["catalog", "--pdf-dri", "x", "--out", "y.jsonl"], "--pdf-dir"),  # named before "required"
        (["search", "--index", "i", "--doc", "d", "--qeury", "q"], "--query"),
        (["sandbox", "--code", "c.py", "--recrods", "r.json"], "--records"),
    ],
)
def test_a_mistyped_flag_is_one_line_naming_the_command_as_typed_and_the_flag_meant(argv, suggests, capsys):
    assert collate(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err  # not argparse's usage block
    assert err.startswith(f"collate {argv[0]}: error:") and f"did you mean {suggests}?" in err


def test_every_command_takes_the_name_it_was_typed_by(capsys):
    """`collate run` errors called themselves `python -m evaluate.run` before."""
    for name in COMMANDS:
        assert collate([name, "--no-such-flag"]) == 2
        assert capsys.readouterr().err.startswith(f"collate {name}: error:"), name


@pytest.mark.parametrize("name", ["", *COMMANDS])
def test_help_loads_no_heavy_library(name):
    """--help answers from the parser alone (collate/parsers.py): the heavy libraries load when a command
    runs. It took 5-29 s when `collate ask --help` imported dspy and mlflow."""
    argv = ["--help"] if not name else [name, "--help"]
    probe = (
        "import sys\n"
        "from collate.cli import main\n"
        f"assert main({argv!r}) == 0\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    assert run.stdout.strip().splitlines()[-1] == "[]"


def test_the_parsers_copies_of_choices_match_their_sources():
    from collate import parsers
    from evaluate.dataset import PARTS
    from optimize.optimizers import OPTIMIZERS
    from programs.lm.settings import Settings
    from retrievers.building.build import DENSE_POLICIES
    from retrievers.building.ocr_build import OCR_MODES
    from retrievers.embedding.dense_text import DENSE_CHUNKS
    from retrievers.embedding.embedders import HASHING, MINILM
    from retrievers.indexing.document_index import MODES
    from retrievers.indexing.lexical import JIEBA, NGRAM

    assert tuple(OPTIMIZERS) == parsers.OPTIMIZERS and tuple(PARTS) == parsers.PARTS
    assert tuple(DENSE_POLICIES) == parsers.DENSE_POLICIES and tuple(OCR_MODES) == parsers.OCR_MODES
    assert tuple(DENSE_CHUNKS) == parsers.DENSE_CHUNKS and tuple(MODES) == parsers.MODES
    assert (HASHING, MINILM, JIEBA, NGRAM) == (parsers.HASHING, parsers.MINILM, parsers.JIEBA, parsers.NGRAM)
    assert (Settings.concurrency, Settings.k) == (parsers.CONCURRENCY, parsers.K)
    from data.synth.corpus import DEFAULT_YEARS, MAX_COMPANIES
    from data.synth.style import FAMILIES

    assert (DEFAULT_YEARS, MAX_COMPANIES) == (parsers.SYNTH_YEARS, parsers.SYNTH_MAX_COMPANIES)
    assert tuple(FAMILIES) == parsers.SYNTH_STYLES


def test_a_missing_program_file_is_named_as_given(tmp_path, capsys):
    """`collate run --program x.json` blamed x.meta.json, `collate ask` said 'save one with program.save'."""
    (tmp_path / "index").mkdir()
    missing = tmp_path / "nope.json"
    assert collate(["run", "--program", str(missing), "--dataset", "d.json", "--index", "i"]) == 2
    err = capsys.readouterr().err
    assert f"--program {missing}: no such file" in err and ".meta.json" not in err


def test_the_build_summary_counts_the_pdfs_it_could_not_draft_as_failed():
    class Report:
        pages, seconds = 9, 1.0
        counts = {"built": 1, "cached": 0, "failed": 0}

        def count(self, status):
            return self.counts[status]

    line = build_summary(Report(), 1, "idx")  # type: ignore[arg-type]
    assert "1 failed" in line and "0 failed" not in line
