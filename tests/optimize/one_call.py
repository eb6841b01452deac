"""The optimizers' one-call form for the tests: build the optimizer by name and run its compile.

optimize/compiler.py does these two steps itself (it keeps the optimizer object, to salvage the best
candidate when a budget stops it), so the library has no one-call form of its own.
"""

from __future__ import annotations

import dspy

from optimize.optimizers import OptimizerOptions, get_spec, make_optimizer


def compile_with(
    name: str,
    metric,
    student: dspy.Module,
    trainset: list[dspy.Example],
    valset: list[dspy.Example] | None = None,
    options: OptimizerOptions | None = None,
) -> dspy.Module:
    options = options or OptimizerOptions()
    optimizer = make_optimizer(name, metric, options, len(trainset))
    return get_spec(name).run(optimizer, student, trainset, valset, options)
