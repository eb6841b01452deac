"""What a compile changed: per predictor, demos gained and instructions rewritten, against the starting program.

Why: six of eight saved programs were byte-for-byte the uncompiled one (no demo, no new instruction)
and nothing said so; evaluating such a file as "compiled" measures nothing. The diff goes to the
compile's summary line, the sidecar (`changes`) and the MLflow run (tag `program_change`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import dspy

NO_CHANGE = "no change: the saved program is the starting program (no demos added, same instructions)"


@dataclass(frozen=True)
class PredictorChange:
    predictor: str
    demos_before: int
    demos_after: int
    instructions_changed: bool


def state_of(program: dspy.Module) -> dict[str, tuple[int, str]]:
    """Predictor name -> (number of demos, instructions): what a diff compares."""
    return {name: (len(p.demos), p.signature.instructions) for name, p in program.named_predictors()}


def diff(before: dict[str, tuple[int, str]], after: dspy.Module) -> list[PredictorChange]:
    """The predictors of `after` whose demos or instructions differ from `before` (a `state_of`)."""
    changes = []
    for name, (demos, instructions) in state_of(after).items():
        old_demos, old_instructions = before.get(name, (0, None))
        if demos != old_demos or instructions != old_instructions:
            changes.append(PredictorChange(name, old_demos, demos, instructions != old_instructions))
    return changes


def describe(changes: list[PredictorChange]) -> str:
    """One line: 'extractor.extract +3 demos, new instructions; planner.plan +1 demo' or NO_CHANGE."""
    if not changes:
        return NO_CHANGE
    parts = []
    for c in changes:
        bits = []
        if c.demos_after != c.demos_before:
            delta = c.demos_after - c.demos_before
            bits.append(f"{delta:+d} demo{'s' if abs(delta) != 1 else ''}")
        if c.instructions_changed:
            bits.append("new instructions")
        parts.append(f"{c.predictor} {', '.join(bits)}")
    return "; ".join(parts)


def as_record(changes: list[PredictorChange]) -> dict:
    """The sidecar's `changes`: counts, the one-line summary and one entry per changed predictor."""
    return {
        "changed_predictors": len(changes),
        "demos_added": sum(c.demos_after - c.demos_before for c in changes),
        "instructions_changed": sum(c.instructions_changed for c in changes),
        "summary": describe(changes),
        "predictors": [asdict(c) for c in changes],
    }
