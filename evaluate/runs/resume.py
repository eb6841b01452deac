"""Resuming a run folder: OUT/run.json says what run OUT holds, so a rerun adds to it only if it is the same.

Why: `collate run --out OUT` appends each finished answer to OUT/answers.jsonl (evaluate.runs.journal), and
the same command run again asks only the questions missing there. Answers are only worth reusing if
they answered the same questions with the same program and model: run.json records those settings when
the run starts, and a rerun with other settings into the same folder is refused (one line naming the
fix) rather than mixing two runs' answers, and their fact stores, in one set of scores.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from evaluate.dataset import DatasetItem
from evaluate.runs.journal import JOURNAL, AnswerJournal
from signatures.errors import BadInput

HEADER = "run.json"


def run_settings(
    *,
    dataset_file: str,
    items_hash: str,
    split: str,
    seed: int,
    limit: int | None,
    variant: str,
    program_hash: str,
    models: list[str],
    index: str,
    endpoints: dict[str, str] | None = None,
) -> dict:
    """What makes two runs' answers interchangeable: the questions (file, content, selection), the
    program (variant and state), the models (the cascade's strong one included) and the index read. Not the concurrency: the same run gives the same
    answers at any (programs.batch); not the judge: every answer is scored again when the run ends.
    `endpoints`: the API bases stages set for themselves (recorded only when some stage has one, so a run
    folder from before per-stage endpoints still resumes)."""
    settings = {
        "dataset": str(Path(dataset_file).resolve()),
        "dataset_hash": items_hash,
        "split": split,
        "seed": seed,
        "limit": limit,
        "variant": variant,
        "program_hash": program_hash,
        "models": list(models),
        "index": str(Path(index).resolve()),
    }
    if endpoints:
        settings["endpoints"] = dict(endpoints)
    return settings


def open_run_folder(out_dir: Path, settings: dict) -> AnswerJournal:
    """The journal of `out_dir`: with the answers an earlier run of the same settings kept, or a new one
    (run.json written now, before any LM call). BadInput naming the fix if `out_dir` holds another run."""
    header, journal = out_dir / HEADER, out_dir / JOURNAL
    wanted = json.loads(json.dumps(settings))  # as it reads back from disk (tuples are lists, ...)
    for path in (header, journal):  # a folder where a file goes was a traceback (issue 33)
        if path.exists() and not path.is_file():
            raise BadInput(
                f"--out {out_dir}: its {path.name} is a folder, not the run's file: move it aside, or give a "
                "new --out"
            )
    if header.is_file():
        try:
            recorded = json.loads(header.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise BadInput(
                f"--out {out_dir}: its {HEADER} is not readable ({e}): give a new --out, or delete {out_dir} "
                "to start over"
            ) from None
        differ = [key for key in wanted if not isinstance(recorded, dict) or recorded.get(key) != wanted[key]]
        if differ and not _holds_answers(journal):  # e.g. a run that stopped at its LM check: nothing to mix
            _write_header(header, wanted)
        elif differ:
            there = recorded if isinstance(recorded, dict) else {}
            what = "; ".join(f"{k} {_short(wanted[k])} now, {_short(there.get(k))} there" for k in differ)
            raise BadInput(
                f"--out {out_dir} holds a run with other settings ({what}): give a new --out, or delete "
                f"{out_dir} to start over"
            )
    elif journal.exists():
        raise BadInput(
            f"--out {out_dir} holds answers ({JOURNAL}) but no {HEADER} saying which run they are from: "
            f"give a new --out, or delete {out_dir} to start over"
        )
    else:
        out_dir.mkdir(parents=True, exist_ok=True)
        _write_header(header, wanted)
    return AnswerJournal.open(journal)


def _holds_answers(journal: Path) -> bool:
    return journal.is_file() and journal.stat().st_size > 0


def _write_header(header: Path, settings: dict) -> None:
    partial = header.with_suffix(".json.part")
    partial.write_text(json.dumps(settings, ensure_ascii=False, indent=1), encoding="utf-8")
    os.replace(partial, header)  # whole or absent: a run stopped here starts over cleanly


def resumed_line(journal: AnswerJournal, items: list[DatasetItem]) -> str | None:
    """'resuming: 2 of 5 questions already answered in OUT/answers.jsonl; asking the other 3', or None
    when the folder holds no answer of these questions."""
    done, failed, asked_again = _kept(journal, items)
    if not done and not failed:
        return None
    rest = len(items) - done
    line = f"resuming: {done} of {len(items)} questions already answered in {journal.path}; "
    line += f"asking the other {rest}" if rest else "nothing left to ask, scoring them"
    return line + asked_again


def _kept(journal: AnswerJournal, items: list[DatasetItem]) -> tuple[int, int, str]:
    """(answered, failed, " (N that failed is/are asked again)" or "") of these questions in the journal."""
    ids = [item.question_id for item in items]
    done = journal.answered(ids)
    failed = sum(1 for qid in ids if qid in journal.kept and qid not in done)
    again = f" ({failed} that failed {'is' if failed == 1 else 'are'} asked again)" if failed else ""
    return len(done), failed, again


def interrupted_line(
    journal: AnswerJournal, items: list[DatasetItem], out_given: bool, resume: str | None = None
) -> str:
    """The one line a Ctrl-C prints: how many answers are kept where, and the command that resumes
    (without --out the same command would start a new folder: the line names this one; `resume`, a
    caller's own command line, when the user's command is not the one that resumes, as for the demo)."""
    kept, _, asked_again = _kept(journal, items)
    if resume:
        again = f"`{resume}` resumes it"
    elif out_given:
        again = "run the same command to resume"
    else:
        again = f"run the same command with --out {journal.path.parent} to resume"
    return f"interrupted: {kept} of {len(items)} answers kept in {journal.path}; {again}{asked_again}"


def _short(value) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return text if len(text) <= 60 else text[:57] + "..."
