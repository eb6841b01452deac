"""A dataset run as one object: what is asked and how, where it goes, and what it may spend.

Why: `evaluate_program` took 19 parameters, and each caller (collate run, the tests, scripts) spelled
them out; the compile has its CompileJob and the build its BuildOptions. collate/run_job.py builds the
job from `collate run`'s flags (the demo runs that command), so one reading of the flags makes every run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from programs.lm.spend import Budget


@dataclass(frozen=True)
class RunJob:
    variant: str  # uncompiled, compiled:<optimizer>, flat-rag, ... (the run's name and tags)
    out_dir: Path  # the run folder: answers.jsonl, results.jsonl, summary.json, audit reports
    concurrency: int = 2  # questions answered at once
    part: str = "all"  # which part of the dataset's split the items are (all, train, dev, test)
    dataset_file: str | None = None  # where the items were read from (the run's dataset input names it)
    program_file: Path | None = None  # a compiled program's file, logged with its sidecar
    params: dict = field(default_factory=dict)  # beside the settings, logged as MLflow params
    tags: dict = field(default_factory=dict)  # MLflow tags (paths: where things were, not settings)
    skipped: dict[str, str] = field(default_factory=dict)  # question_id -> why the loader left it out
    autolog: bool = True  # one MLflow trace per question (evaluate.runs.question_trace)
    lm_traces: bool = False  # DSPy's autolog besides: a trace per module and LM call (many per question)
    progress: bool = True  # the progress bar
    # Caps on the answering's requests, tokens and dollars (--max-calls/--max-tokens/--max-usd): once one
    # is reached every request still to make is refused, so the questions it cuts fail with the reason
    # and everything answered before is kept (the judge's scoring calls are not capped). None: no budget
    # figures in the summary.
    budget: Budget | None = None
