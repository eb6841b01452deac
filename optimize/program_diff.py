"""What a compile changed: per predictor, demos gained and instructions rewritten, against the starting program.

Why: six of eight saved programs were byte-for-byte the uncompiled one (no demo, no new instruction)
and nothing said so; evaluating such a file as "compiled" measures nothing. The diff goes to the
compile's summary line, the sidecar (`changes`) and the MLflow run (tag `program_change`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import dspy

from programs.lm.stages import ROWS

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


# predictor name's first part (the Analyst's attribute) -> the stage name run, ask and the cost table use
_STAGE_OF = {row.attribute: row.name for row in ROWS if row.attribute}


def stage_of(predictor: str) -> str:
    """'code_writer.fix_code' -> 'coder', 'extractor.extract' -> 'extractor'; a name of no stage as it is."""
    return _STAGE_OF.get(predictor.split(".", 1)[0], predictor)


def by_stage(changes: list[PredictorChange]) -> str:
    """One line by stage name, as the cost table names stages: 'planner +1 demo; coder +2 demos (write_code
    +1, fix_code +1), new instructions (fix_code)' or NO_CHANGE. A stage with one predictor names none."""
    if not changes:
        return NO_CHANGE
    grouped: dict[str, list[PredictorChange]] = {}
    for c in changes:
        grouped.setdefault(stage_of(c.predictor), []).append(c)
    parts = []
    for stage, group in grouped.items():
        several = len(group) > 1
        bits = []
        if any(c.demos_after != c.demos_before for c in group):
            delta = sum(c.demos_after - c.demos_before for c in group)
            each = ", ".join(f"{_short(c)} {c.demos_after - c.demos_before:+d}" for c in group)
            bits.append(
                f"{delta:+d} demo{'s' if abs(delta) != 1 else ''}" + (f" ({each})" if several else "")
            )
        rewritten = [_short(c) for c in group if c.instructions_changed]
        if rewritten:
            bits.append("new instructions" + (f" ({', '.join(rewritten)})" if several else ""))
        parts.append(f"{stage} {', '.join(bits)}")
    return "; ".join(parts)


def _short(change: PredictorChange) -> str:
    """'code_writer.fix_code' -> 'fix_code': the predictor within its stage."""
    return change.predictor.split(".", 1)[-1]


def as_record(changes: list[PredictorChange]) -> dict:
    """The sidecar's `changes`: counts, the one-line summary (by predictor, and by stage) and one entry per
    changed predictor."""
    return {
        "changed_predictors": len(changes),
        "demos_added": sum(c.demos_after - c.demos_before for c in changes),
        "instructions_changed": sum(c.instructions_changed for c in changes),
        "summary": describe(changes),
        "by_stage": by_stage(changes),
        "predictors": [asdict(c) for c in changes],
    }
