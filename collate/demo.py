"""The main job: generate the demo corpus, index it, answer its questions and score them in MLflow.

    collate demo [--out demo] [--limit 10] [--lm MODEL --api-base URL --api-key KEY]

1. `OUT/corpus`: the synthetic filings (collate synth, default settings), unless already there.
2. `OUT/index`: their per-document hybrid index (collate build), unless already there;
   the build's progress shows as it goes.
3. `collate run` over the demo questions, which prints the scores, writes the run folder
   (with an audit report per question) and logs an MLflow run; then, with a model, the flat-RAG
   baseline on the same questions (--no-baseline skips it), so the MLflow view has two runs to compare.
   The LM: COLLATE_LM (or --lm) when set. Without one, the demo reader (collate/reader.py: a
   rule-based reader for the demo corpus, not a language model) is started on a free loopback port and
   answers through the same OpenAI-compatible path a model would; --no-reader stops after step 2
   instead, with the message saying how to set an LM (exit 2).
A configured LM that fails its 1-token check is exit 2 with the setting to fix, before steps 1-2.
Steps 1-2 are skipped when done, so a second run goes straight to answering. The stages' per-value
warnings go to RUN/warnings.log, counted in one line, not onto the terminal (collate/stage_warnings.py).
"""

from __future__ import annotations

import codecs
import contextlib
import json
import logging
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import NoReturn

from collate import parsers, reader
from collate import run as evaluate_run
from collate.errors import Exit, exit_process
from collate.inputs import lm_argv, lm_overrides, parse_cli
from collate.stage_warnings import stage_warnings_to
from evaluate.tracking.store_check import check_store
from programs.lm.preflight import LMUnavailable, SandboxUnavailable, check_isolation, preflight
from programs.lm.settings import NoLMConfigured, Settings
from programs.lm.stages import ANALYST_STAGES
from signatures.errors import BadInput, CollateError

logger = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[1]


class StepFailed(CollateError, RuntimeError):
    """A preparation step (corpus or index) failed; the message holds the tail of its stderr."""


def run_step(module: str, *args: str) -> None:
    """Run one of the project's CLIs in a child process, as a user would. Its output (the build's
    progress bar) is passed to this terminal as it comes, and its tail kept for the error message.

    The child runs in the project's root (its modules import from there without an install), so every
    path in `args` must be absolute: `collate demo` run from another folder once wrote the corpus and
    the index under the project's root and then found no dataset where the user asked for it."""
    child = subprocess.Popen(
        [sys.executable, "-m", module, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    assert child.stdout is not None  # PIPE above
    decode = codecs.getincrementaldecoder("utf-8")(errors="replace")  # a bar's block may split over reads
    tail = ""
    while chunk := os.read(child.stdout.fileno(), 4096):
        text = decode.decode(chunk)
        sys.stderr.write(text)
        sys.stderr.flush()
        tail = (tail + text)[-4000:]
    child.stdout.close()
    if child.wait() != 0:
        raise StepFailed(f"python -m {module} failed ({child.returncode}): {tail.strip()[-2000:]}")


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
    run_step("data.synth", "--out", str(corpus.resolve()))
    return True


def ensure_index(corpus: Path, index: Path) -> bool:
    """Build the index if absent; True when it was built now."""
    if index_ready(index):
        return False
    run_step(
        "retrievers.build",
        "--catalog",
        str(corpus.resolve() / "catalog.jsonl"),  # its rows name each company, which the audit reports show
        "--pdf-dir",
        str(corpus.resolve() / "pdf"),
        "--index",
        str(index.resolve()),
    )
    return True


build_parser = parsers.demo  # the flags live in collate/parsers.py, light for --help


def main(argv=None) -> int:
    args = parse_cli(build_parser(), argv)
    if isinstance(args, int):  # argparse already printed its one-line reason (or --help)
        return args
    if args.limit < 0:
        print(f"error: --limit must be 0 (all) or more (got {args.limit})", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    out = Path(args.out)
    corpus, index = out / "corpus", out / "index"
    try:
        check_store()  # the MLflow store the runs go to, before a minute of preparing
    except BadInput as e:
        print(f"error: {e}", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    try:  # generated code refused here, or a configured LM that cannot answer: said in a second, before a minute of preparing
        check_isolation(Settings.from_env(lm_overrides(args), require_lm=False))
        settings = Settings.from_env(lm_overrides(args))
        preflight(settings, [*ANALYST_STAGES, "judge"])
    except NoLMConfigured:
        settings = None  # prepared anyway; how to set one is said after
    except (LMUnavailable, SandboxUnavailable, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    checked = settings is not None  # else the demo reader answers, and the run checks it
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
        return int(Exit.FAILED)
    with contextlib.ExitStack() as stack:
        try:
            Settings.from_env(lm_overrides(args))
            lm_args, baseline = lm_argv(args), not args.no_baseline
        except NoLMConfigured as e:
            if args.no_reader:
                print(f"error: {e}", file=sys.stderr)
                print(
                    f"The demo corpus and index are ready; rerun `collate demo --out {out}` once an LM is set.",
                    file=sys.stderr,
                )
                return int(Exit.BAD_INPUT)
            lm_args, baseline = demo_reader(stack), False
        return answer_and_compare(args, corpus, index, out, lm_args, baseline, checked)


def demo_reader(stack: contextlib.ExitStack) -> list[str]:
    """Start the demo reader on a free loopback port, stopped when `stack` closes; the LM flags for it."""
    server = reader.start_reader()
    stack.callback(server.stop)
    settings = reader.reader_settings(server)
    print(
        f"No COLLATE_LM set: the demo reader answers ({reader.WHAT_IT_IS}) on {server.url}; "
        "set COLLATE_LM to answer with a model."
    )
    # Its rules read the program's prompts only: every flat-RAG answer would be empty, and an empty
    # baseline would say something false about flat RAG.
    print("The flat-RAG baseline is skipped: the demo reader has no rules for its prompt.")
    return [
        "--lm",
        settings["COLLATE_LM"],
        "--api-base",
        settings["COLLATE_API_BASE"],
        "--api-key",
        settings["COLLATE_API_KEY"],
    ]


def answer_and_compare(
    args, corpus: Path, index: Path, out: Path, lm_args: list[str], baseline: bool, checked: bool = False
) -> int:
    """The program over the demo questions, then (baseline) the flat-RAG baseline on the same questions;
    each is one evaluate.run, so one MLflow run, and the two are compared in one line."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    variants = [("collate", None)] + ([("flat RAG", "flat-rag")] if baseline else [])
    finished = []
    for name, program in variants:
        run_dir = out / "runs" / (stamp if program is None else f"{stamp}-{program}")
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
        if program:
            run_args += ["--program", program]
            print(
                f"\nThe baseline on the same questions: {name} (one LM call per question over retrieved passages)"
            )
        with stage_warnings_to(run_dir / "warnings.log") as kept:
            # rerunning the demo starts a new folder: a Ctrl-C names the command that resumes this one
            resume = shlex.join(["python", "-m", "evaluate.run", *run_args])
            code = evaluate_run.main(run_args + lm_args, lm_checked=checked, resume=resume)
        if kept.summary():
            print(kept.summary())
        if code != 0:
            return code
        reports = sorted(run_dir.glob("questions/*/audit.html"))
        if reports:
            print(f"audit reports: {len(reports)} in {run_dir / 'questions'} (e.g. {reports[0]})")
        finished.append((name, run_dir))
    if len(finished) > 1:
        print("compared: " + "; ".join(_accuracies(name, run_dir) for name, run_dir in finished))
    return 0


def _accuracies(name: str, run_dir: Path) -> str:
    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return f"{name} (no summary)"
    macro = summary.get("process_macro") or {}
    return (
        f"{name} final accuracy {summary.get('final_accuracy', 0):.3f}, "
        f"process cell accuracy {macro.get('cell', 0):.3f}"
    )


def entry() -> NoReturn:
    """`collate demo`: main(), then the process ends with its code; after Ctrl-C at once, not
    after the answering threads it abandoned (collate.errors.exit_process)."""
    exit_process(main())


if __name__ == "__main__":
    entry()
