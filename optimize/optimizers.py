"""DSPy optimizers by name: how to build each one and how to call its compile.

Why a table: the four optimizers differ in their constructor (GEPA needs a reflection LM and a
budget, SIMBA a batch no larger than the trainset) and in their compile signature (only MIPROv2 and
GEPA take a valset). `compile_with(name, ...)` hides that, so optimize.compile stays one code path.
Defaults are sized for small trainsets (tens of examples) on a real LM budget, not for benchmarks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import dspy

logger = logging.getLogger(__name__)

Metric = Callable[..., float]


@dataclass(frozen=True)
class OptimizerOptions:
    """Knobs shared by the factories; each optimizer takes what applies to it."""

    seed: int = 0
    num_threads: int = 4
    max_demos: int = 4  # bootstrapped demos per predictor
    max_labeled_demos: int = 4
    reflection_lm: Any = None  # GEPA's proposer LM (a dspy.LM built by programs.runtime.settings)
    max_metric_calls: int | None = None  # GEPA's own budget in metric calls; None = 2 full evals
    extra: dict = field(default_factory=dict)  # passed through to the optimizer's constructor
    compile_extra: dict = field(default_factory=dict)  # passed through to its compile (e.g. MIPRO num_trials)


@dataclass(frozen=True)
class OptimizerSpec:
    name: str
    summary: str
    build: Callable[[Metric, OptimizerOptions, int], Any]  # (metric, options, trainset size) -> optimizer
    run: Callable[[Any, dspy.Module, list, list | None, OptimizerOptions], dspy.Module]


def _bootstrap(metric, opts, n_train):
    # max_errors high: one failing example (or a refused call once the budget is spent) must not abort.
    return dspy.BootstrapFewShot(
        metric=metric,
        max_bootstrapped_demos=opts.max_demos,
        max_labeled_demos=opts.max_labeled_demos,
        max_rounds=1,
        max_errors=max(10, n_train * 10),
        **opts.extra,
    )


def _mipro(metric, opts, n_train):
    return dspy.MIPROv2(
        metric=metric,
        auto=opts.extra.get("auto", "light"),
        max_bootstrapped_demos=opts.max_demos,
        max_labeled_demos=opts.max_labeled_demos,
        num_threads=opts.num_threads,
        max_errors=max(10, n_train * 10),
        seed=opts.seed,
        **{k: v for k, v in opts.extra.items() if k != "auto"},
    )


def _run_mipro(optimizer, student, trainset, valset, opts):
    # MIPROv2 evaluates minibatches of the valset (its own split of the trainset when none is given).
    n_eval = len(valset) if valset else max(1, int(len(trainset) * 0.8))  # MIPROv2's own 80% split
    kwargs = {"minibatch_size": max(1, min(35, n_eval)), **opts.compile_extra}
    return optimizer.compile(student, trainset=trainset, valset=valset or None, seed=opts.seed, **kwargs)


def _gepa(metric, opts, n_train):
    if opts.reflection_lm is None:
        raise ValueError(
            "gepa needs a reflection LM: set COLLATE_LM or pass --lm MODEL (GEPA reflects with the main LM)"
        )
    budget = opts.max_metric_calls or max(2 * n_train, 4)
    return dspy.GEPA(
        metric=metric,
        max_metric_calls=budget,
        reflection_lm=opts.reflection_lm,
        reflection_minibatch_size=min(3, max(1, n_train)),
        num_threads=opts.num_threads,
        seed=opts.seed,
        track_stats=True,
        **opts.extra,
    )


def _simba(metric, opts, n_train):
    # SIMBA refuses a batch larger than the trainset.
    return dspy.SIMBA(
        metric=metric,
        bsize=max(1, min(32, n_train)),
        num_candidates=opts.extra.get("num_candidates", 4),
        max_steps=opts.extra.get("max_steps", 4),
        max_demos=opts.max_demos,
        num_threads=opts.num_threads,
        **{k: v for k, v in opts.extra.items() if k not in ("num_candidates", "max_steps")},
    )


OPTIMIZERS: dict[str, OptimizerSpec] = {
    "bootstrap": OptimizerSpec(
        "bootstrap",
        "BootstrapFewShot: keeps traces that pass the metric as few-shot demos",
        _bootstrap,
        lambda opt, student, train, val, o: opt.compile(student, trainset=train),
    ),
    "mipro": OptimizerSpec(
        "mipro",
        "MIPROv2: proposes instructions + demo sets, searches them with optuna",
        _mipro,
        _run_mipro,
    ),
    "gepa": OptimizerSpec(
        "gepa",
        "GEPA: reflective instruction evolution from the metric's textual feedback",
        _gepa,
        lambda opt, student, train, val, o: opt.compile(student, trainset=train, valset=val or None),
    ),
    "simba": OptimizerSpec(
        "simba",
        "SIMBA: stochastic mini-batch ascent, adds rules and demos where outputs vary",
        _simba,
        lambda opt, student, train, val, o: opt.compile(student, trainset=train, seed=o.seed),
    ),
}


def get_spec(name: str) -> OptimizerSpec:
    try:
        return OPTIMIZERS[name]
    except KeyError:
        raise ValueError(f"unknown optimizer {name!r}: choose one of {', '.join(OPTIMIZERS)}") from None


def make_optimizer(name: str, metric: Metric, options: OptimizerOptions | None = None, n_train: int = 10):
    """The configured DSPy optimizer object for `name`."""
    return get_spec(name).build(metric, options or OptimizerOptions(), n_train)


def compile_with(
    name: str,
    metric: Metric,
    student: dspy.Module,
    trainset: list[dspy.Example],
    valset: list[dspy.Example] | None = None,
    options: OptimizerOptions | None = None,
) -> dspy.Module:
    """Build the optimizer and run its compile with the arguments that optimizer takes."""
    if not trainset:
        raise ValueError("the trainset is empty: the dataset has no items for the train split")
    options = options or OptimizerOptions()
    spec = get_spec(name)
    optimizer = spec.build(metric, options, len(trainset))
    logger.info("compiling with %s on %d train / %d val examples", name, len(trainset), len(valset or []))
    return spec.run(optimizer, student, trainset, valset, options)
