"""The compile's CompileJob from its command line: one reading for `collate compile` and its `--estimate`."""

from __future__ import annotations

from optimize.compiler import CompileJob


def compile_job(args) -> CompileJob:
    """The job `collate compile` runs (and `--estimate` quotes) for these parsed arguments."""
    return CompileJob(
        optimizer=args.optimizer,
        stage=args.stage,
        seed=args.seed,
        max_calls=args.max_calls,
        max_tokens=args.max_tokens,
        max_usd=args.max_usd,
        threads=args.threads,
        max_demos=args.max_demos,
        threshold=args.threshold,
        final_weight=args.final_weight,
        limit=args.limit,
        force=args.force,
    )
