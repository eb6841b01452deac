"""DSPy optimizers by name: how to build each one and how to call its compile.

Why a table: the four optimizers differ in their constructor (GEPA needs a reflection LM and a
budget, SIMBA a batch no larger than the trainset), in their compile signature (only MIPROv2 and
GEPA take a valset) and in what they spend before their first scored candidate (`first_score`, which
optimize.compile prices before spending anything). optimize/compiler.py builds the optimizer with
`make_optimizer` (it keeps the object, to salvage the best candidate when a budget stops it) and runs it
through the same `spec.run`, so there is one code path. The constructor's arguments are data, logged as
the compile's params.
Defaults are sized for small trainsets (tens of examples) on a real LM budget, not for benchmarks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import dspy
from dspy.teleprompt.mipro_optimizer_v2 import AUTO_RUN_SETTINGS

logger = logging.getLogger(__name__)

Metric = Callable[..., float]


@dataclass(frozen=True)
class OptimizerOptions:
    """Knobs shared by the factories; each optimizer takes what applies to it."""

    seed: int = 0
    num_threads: int = 4
    max_demos: int = 4  # bootstrapped demos per predictor
    max_labeled_demos: int = 4
    reflection_lm: Any = None  # GEPA's proposer LM (a dspy.LM built by programs.lm.settings)
    max_metric_calls: int | None = None  # GEPA's own budget in metric calls; None = 2 full evals
    extra: dict = field(default_factory=dict)  # passed through to the optimizer's constructor
    compile_extra: dict = field(default_factory=dict)  # passed through to its compile (e.g. MIPRO num_trials)


@dataclass(frozen=True)
class FirstScore:
    """What an optimizer runs before it holds its first scored candidate (the least a budget must buy).

    Counted in program runs, whose LM calls depend on the examples (optimize/call_estimate.py prices
    them), plus the LM calls that write instructions rather than run the program."""

    train_runs: int = 0  # runs on training examples: bootstrapping demos, sampling trajectories
    val_runs: int = 0  # runs scoring a candidate on the examples it is scored on
    proposer_calls: int = 0  # instruction proposals, reflections
    what: str = ""  # how the optimizer spends them, for the refusal message


@dataclass(frozen=True)
class OptimizerSpec:
    name: str
    summary: str
    cls: Callable[..., Any]  # the DSPy optimizer class
    # (options, trainset size) -> the constructor's arguments besides the metric: logged as the compile's params
    arguments: Callable[[OptimizerOptions, int], dict]
    run: Callable[[Any, dspy.Module, list, list | None, OptimizerOptions], dspy.Module]
    # (train size, val size, options, predictors) -> what it spends before its first score
    first_score: Callable[[int, int, OptimizerOptions, int], FirstScore]


def _bootstrap(opts, n_train):
    # max_errors high: one failing example (or a refused call once the budget is spent) must not abort.
    return {
        "max_bootstrapped_demos": opts.max_demos,
        "max_labeled_demos": opts.max_labeled_demos,
        "max_rounds": 1,
        "max_errors": max(10, n_train * 10),
        **opts.extra,
    }


def _bootstrap_first(n_train, n_val, opts, predictors):
    # No candidate is scored: it traces training questions until --max-demos of them pass the threshold.
    runs = min(max(opts.max_demos, 1), n_train)
    return FirstScore(train_runs=runs, what=f"traces at least {runs} training question(s) to fill the demos")


def _mipro(opts, n_train):
    return {
        "auto": opts.extra.get("auto", "light"),
        "max_bootstrapped_demos": opts.max_demos,
        "max_labeled_demos": opts.max_labeled_demos,
        "num_threads": opts.num_threads,
        "max_errors": max(10, n_train * 10),
        "seed": opts.seed,
        **{k: v for k, v in opts.extra.items() if k != "auto"},
    }


def _mipro_val_size(n_train, n_val):
    return n_val or max(1, int(n_train * 0.8))  # MIPROv2's own 80% split of the trainset when no valset


def _run_mipro(optimizer, student, trainset, valset, opts):
    # MIPROv2 evaluates minibatches of the valset (its own split of the trainset when none is given).
    n_eval = _mipro_val_size(len(trainset), len(valset or []))
    kwargs = {"minibatch_size": max(1, min(35, n_eval)), **opts.compile_extra}
    return optimizer.compile(student, trainset=trainset, valset=valset or None, seed=opts.seed, **kwargs)


def _mipro_first(n_train, n_val, opts, predictors):
    # Before its first score MIPROv2 (dspy 3.4) bootstraps N demo sets (one unshuffled set tracing up to
    # --max-demos questions, N-3 shuffled sets of at least one run each), summarizes the data (at least 2
    # calls), proposes instructions (3 calls each with its default program-aware proposer: program
    # description, module description, instruction), then scores the starting program on its valset.
    # Measured on the fake LM (light, 3 train / 3 dev, --max-demos 1): first score after 98 requests; priced 105.
    auto = opts.extra.get("auto", "light")
    settings = AUTO_RUN_SETTINGS.get(auto) or {"n": opts.extra.get("num_candidates", 6), "val_size": None}
    n = settings["n"]
    instructions = n if opts.max_demos == 0 and opts.max_labeled_demos == 0 else n // 2
    val = _mipro_val_size(n_train, n_val)
    val = min(val, settings["val_size"]) if settings["val_size"] else val
    train = min(opts.max_demos or 3, n_train) + max(0, n - 3)
    return FirstScore(
        train_runs=train,
        val_runs=val,
        proposer_calls=2 + 3 * instructions * predictors,
        what=f"bootstraps {n} demo sets ({train} training runs or more), proposes {instructions} instructions "
        f"per predictor, then scores the starting program on {val} dev question(s)",
    )


def _gepa(opts, n_train):
    if opts.reflection_lm is None:
        raise ValueError(
            "gepa needs a reflection LM: set COLLATE_LM or pass --lm MODEL (GEPA reflects with the main LM)"
        )
    return {
        "max_metric_calls": opts.max_metric_calls or max(2 * n_train, 4),
        "reflection_lm": opts.reflection_lm,
        "reflection_minibatch_size": min(3, max(1, n_train)),
        "num_threads": opts.num_threads,
        "seed": opts.seed,
        "track_stats": True,
        **opts.extra,
    }


def _gepa_first(n_train, n_val, opts, predictors):
    runs = n_val or n_train  # GEPA scores the seed program on the valset (the trainset when none)
    return FirstScore(val_runs=runs, what=f"scores the starting program on {runs} dev question(s)")


def _simba(opts, n_train):
    # SIMBA refuses a batch larger than the trainset.
    return {
        "bsize": max(1, min(32, n_train)),
        "num_candidates": opts.extra.get("num_candidates", 4),
        "max_steps": opts.extra.get("max_steps", 4),
        "max_demos": opts.max_demos,
        "num_threads": opts.num_threads,
        **{k: v for k, v in opts.extra.items() if k not in ("num_candidates", "max_steps")},
    }


def _simba_first(n_train, n_val, opts, predictors):
    args = _simba(opts, n_train)
    runs = args["bsize"] * args["num_candidates"]  # its first step samples every candidate on one batch
    return FirstScore(
        train_runs=runs,
        what=f"runs {args['num_candidates']} candidates on a batch of {args['bsize']} training question(s)",
    )


OPTIMIZERS: dict[str, OptimizerSpec] = {
    "bootstrap": OptimizerSpec(
        "bootstrap",
        "BootstrapFewShot: keeps traces that pass the metric as few-shot demos",
        dspy.BootstrapFewShot,
        _bootstrap,
        lambda opt, student, train, val, o: opt.compile(student, trainset=train),
        _bootstrap_first,
    ),
    "mipro": OptimizerSpec(
        "mipro",
        "MIPROv2: proposes instructions + demo sets, searches them with optuna",
        dspy.MIPROv2,
        _mipro,
        _run_mipro,
        _mipro_first,
    ),
    "gepa": OptimizerSpec(
        "gepa",
        "GEPA: reflective instruction evolution from the metric's textual feedback",
        dspy.GEPA,
        _gepa,
        lambda opt, student, train, val, o: opt.compile(student, trainset=train, valset=val or None),
        _gepa_first,
    ),
    "simba": OptimizerSpec(
        "simba",
        "SIMBA: stochastic mini-batch ascent, adds rules and demos where outputs vary",
        dspy.SIMBA,
        _simba,
        lambda opt, student, train, val, o: opt.compile(student, trainset=train, seed=o.seed),
        _simba_first,
    ),
}


def get_spec(name: str) -> OptimizerSpec:
    try:
        return OPTIMIZERS[name]
    except KeyError:
        raise ValueError(f"unknown optimizer {name!r}: choose one of {', '.join(OPTIMIZERS)}") from None


def make_optimizer(name: str, metric: Metric, options: OptimizerOptions | None = None, n_train: int = 10):
    """The configured DSPy optimizer object for `name`."""
    spec = get_spec(name)
    return spec.cls(metric=metric, **spec.arguments(options or OptimizerOptions(), n_train))


def logged_arguments(name: str, options: OptimizerOptions, n_train: int) -> dict:
    """The constructor's arguments as params: values as they are, an LM object as its model id."""
    return {
        key: value
        if isinstance(value, (str, int, float, bool, type(None)))
        else getattr(value, "model", repr(value))
        for key, value in get_spec(name).arguments(options, n_train).items()
    }
