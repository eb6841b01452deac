"""The main job: generate the demo corpus, index it, answer its questions and score them in MLflow.

    python -m evaluate.demo [--out demo] [--limit 10] [--lm MODEL --api-base URL --api-key KEY]

1. `OUT/corpus`: the synthetic filings (python -m data.synth, default settings), unless already there.
2. `OUT/index`: their per-document hybrid index (python -m retrievers.build), unless already there.
3. With an LM configured (COLLATE_LM or --lm): `python -m evaluate.run` over the demo questions, which
   prints the scores, the MLflow run and the command that opens the UI. Without one: exit 2 with the
   message saying how to point at a hosted model or a local OpenAI-compatible server. A configured LM
   that fails its 1-token check is exit 2 with the setting to fix, before steps 1-2.
Steps 1-2 are skipped when done, so a second run goes straight to answering.
"""

from __future__ import annotations

import argparse
import logging
import subprocess
import sys
import time
from pathlib import Path

from collate.inputs import add_lm_arguments, lm_argv, lm_overrides, parse_cli
from evaluate import run as evaluate_run
from programs.runtime.preflight import LMUnavailable, preflight
from programs.runtime.settings import NoLMConfigured, Settings
from programs.runtime.stages import ANALYST_STAGES

logger = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[1]


class StepFailed(RuntimeError):
    """A preparation step (corpus or index) failed; the message holds the tail of its stderr."""


def run_step(module: str, *args: str) -> None:
    """Run one of the project's CLIs in a child process, as a user would; its own progress shows."""
    done = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, stdout=sys.stderr, stderr=subprocess.PIPE, text=True
    )
    if done.returncode != 0:
        raise StepFailed(f"python -m {module} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")


def corpus_ready(corpus: Path) -> bool:
    return (
        (corpus / "dataset.json").is_file()
        and (corpus / "catalog.jsonl").is_file()
        and (corpus / "pdf").is_dir()
    )


def index_ready(index: Path) -> bool:
    return (index / "catalog.sqlite").is_file() and (index / "manifest.json").is_file()


def ensure_corpus(corpus: Path) -> bool:
    """Generate the corpus if absent; True when it was generated now."""
    if corpus_ready(corpus):
        return False
    run_step("data.synth", "--out", str(corpus))
    return True


def ensure_index(corpus: Path, index: Path) -> bool:
    """Build the index if absent; True when it was built now."""
    if index_ready(index):
        return False
    run_step(
        "retrievers.build",
        "--catalog",
        str(corpus / "dataset.json"),
        "--pdf-dir",
        str(corpus / "pdf"),
        "--index",
        str(index),
    )
    return True


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m evaluate.demo", description=__doc__.split("\n")[0])
    p.add_argument("--out", default="demo", help="demo folder: corpus/, index/, runs/ (default ./demo)")
    p.add_argument("--limit", type=int, default=10, help="questions to answer (default 10; 0 = all)")
    p.add_argument("--concurrency", type=int, default=2, help="questions answered at once (default 2)")
    add_lm_arguments(p)
    return p


def main(argv=None) -> int:
    args = parse_cli(build_parser(), argv)
    if isinstance(args, int):  # argparse already printed its one-line reason (or --help)
        return args
    if args.limit < 0:
        print(f"error: --limit must be 0 (all) or more (got {args.limit})", file=sys.stderr)
        return 2
    out = Path(args.out)
    corpus, index = out / "corpus", out / "index"
    try:  # a configured LM that cannot answer is said in a second, before a minute of preparing
        settings = Settings.from_env(lm_overrides(args))
        preflight(settings, [*ANALYST_STAGES, "judge"])
    except NoLMConfigured:
        settings = None  # prepared anyway; how to set one is said after
    except (LMUnavailable, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        start = time.perf_counter()
        made = ensure_corpus(corpus)
        print(
            f"corpus: {corpus} ({'generated' if made else 'already there'}, {time.perf_counter() - start:.0f} s)"
        )
        start = time.perf_counter()
        made = ensure_index(corpus, index)
        print(
            f"index:  {index} ({'built' if made else 'already there'}, {time.perf_counter() - start:.0f} s)"
        )
    except (StepFailed, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if settings is None:
        print(f"error: {NoLMConfigured()}", file=sys.stderr)
        print(
            f"The demo corpus and index are ready; rerun `python -m evaluate.demo --out {out}` once an LM is set.",
            file=sys.stderr,
        )
        return 2
    run_dir = out / "runs" / time.strftime("%Y%m%d-%H%M%S")
    run_args = [
        "--dataset",
        str(corpus / "dataset.json"),
        "--index",
        str(index),
        "--out",
        str(run_dir),
        "--concurrency",
        str(args.concurrency),
    ]
    if args.limit:
        run_args += ["--limit", str(args.limit)]
    return evaluate_run.main(run_args + lm_argv(args), lm_checked=True)


if __name__ == "__main__":
    sys.exit(main())
