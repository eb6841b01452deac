"""What an optimizer had found when the request budget stopped it, so a capped compile still saves a result.

A refused request unwinds the optimizer (programs/lm/spend.py), and its own "best program" lives in local
variables that are gone with it. So while the optimizer runs, `BestSoFar.watch()` records every
candidate scoring that COMPLETED: a `dspy.Evaluate` call (MIPROv2's trials, GEPA's validation) or a
SIMBA candidate scored on a mini-batch. An interrupted scoring never completes, so a refused request
never lowers a recorded score. BootstrapFewShot scores nothing: its demos so far are in its
`name2traces` (`bootstrapped_demos`).

A candidate scored on the whole validation set already has its dev score (MIPROv2 validates on our
dev split): reported as is, no request spent. Any other candidate is scored on dev after the compile.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import dspy

from programs.lm import patches

Snapshot = dict[str, tuple[list, type]]  # predictor name -> (demos, signature)


@dataclass
class Candidate:
    score: float  # 0..1
    examples: int  # how many examples the score is the mean of
    on_valset: bool  # scored on the whole validation set: `score` is the dev score
    state: Snapshot
    source: str  # "evaluation" | "simba batch"


def snapshot(program: dspy.Module) -> Snapshot:
    return {name: (list(p.demos), p.signature) for name, p in program.named_predictors()}


def same_state(a: Snapshot, b: Snapshot) -> bool:
    """The same predictors with the same demos and instructions (the signature objects are copies)."""
    return a.keys() == b.keys() and all(
        a[name][0] == b[name][0] and instructions(a[name][1]) == instructions(b[name][1]) for name in a
    )


def instructions(signature: type) -> str:
    """A DSPy signature class's instructions (typed `type` in a Snapshot)."""
    return str(getattr(signature, "instructions", ""))


def adopt(student: dspy.Module, state: Snapshot) -> dspy.Module:
    """A copy of `student` carrying a candidate's demos and instructions (never its per-predictor LMs)."""
    program = student.deepcopy()
    for name, predictor in program.named_predictors():
        if name in state:
            predictor.demos, predictor.signature = list(state[name][0]), state[name][1]
    return program


class BestSoFar:
    def __init__(self, valset: list | None):
        self.valset = list(valset or [])
        self.candidates: list[Candidate] = []
        self._batches: dict[int, tuple[list[float], Snapshot]] = {}  # SIMBA: id(program) -> (scores, state)
        self._lock = threading.Lock()

    def record(self, program, score: float, devset: list, source: str = "evaluation") -> None:
        on_valset = (
            bool(self.valset)
            and len(devset) == len(self.valset)
            and all(a == b for a, b in zip(devset, self.valset, strict=True))
        )
        with self._lock:
            self.candidates.append(Candidate(score, len(devset), on_valset, snapshot(program), source))

    def record_one(self, program, score: float) -> None:
        with self._lock:
            scores, _ = self._batches.setdefault(id(program), ([], snapshot(program)))
            scores.append(float(score))

    def best(self) -> Candidate | None:
        """The best validation-set score if any completed; else the best mean over the most examples scored."""
        with self._lock:
            batches = [
                Candidate(sum(s) / len(s), len(s), False, state, "simba batch")
                for s, state in self._batches.values()
                if s
            ]
            pool = [c for c in self.candidates if c.on_valset] or self.candidates + batches
        if not pool:
            return None
        most = max(c.examples for c in pool)
        return max(
            (c for c in pool if c.examples == most), key=lambda c: c.score
        )  # first of equals: the earliest

    def valset_score(self, state: Snapshot) -> float | None:
        """The score of a program with `state` (same demos, same instructions) on the whole validation set,
        if the optimizer scored one (MIPROv2 and GEPA score the starting program on it first); else None."""
        with self._lock:
            scored = [c.score for c in self.candidates if c.on_valset and same_state(c.state, state)]
        return scored[0] if scored else None

    @contextlib.contextmanager
    def watch(self) -> Iterator[BestSoFar]:
        """Record completed scorings while inside (dspy.Evaluate calls, SIMBA's per-example scoring:
        programs/lm/patches.py scoring_hooks)."""
        with patches.scoring_hooks(self.record, self.record_one):
            yield self


def bootstrapped_demos(optimizer, student: dspy.Module, max_demos: int) -> dspy.Module | None:
    """BootstrapFewShot stopped mid-way: the student with the demos it had kept (None if it kept none)."""
    traces = getattr(optimizer, "name2traces", None) or {}
    if not any(traces.values()):
        return None
    program = student.deepcopy()
    for name, predictor in program.named_predictors():
        predictor.demos = list(traces.get(name, []))[:max_demos]
    return program
