"""The compiled program file: compiled.json (DSPy state) + compiled.meta.json (what the compile did).

One module for the format, so the writer (optimize.compile) and every reader (collate run, ask,
evaluate) agree on the sidecar's name, its format version and what "the same program" means:

- `save` writes the program state and its sidecar (stamped with FORMAT_VERSION);
- `load` puts a saved state into a freshly built program, refusing a sidecar of another version;
- `read_meta` / `origin` read the sidecar ({} when there is none: a hand-saved program still loads);
- `program_hash` is a short sha of the state's canonical JSON (DSPy's own `metadata` block, which
  only holds dependency versions, left out): equal hashes = the same demos and instructions, so a
  compile that changed nothing shows the uncompiled program's hash.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

import orjson  # what dspy.Module.save serialises with: hashing an in-memory state the same way

from programs.protocols import Program
from signatures.errors import BadInput

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1
HASH_CHARS = 7  # as short as git's: enough to tell a handful of compiled files apart at a glance
# The sidecar keys that name where a compiled program came from (what an evaluation run is tagged with).
ORIGIN_KEYS = ("optimizer", "stage", "mlflow_run_id", "dataset_hash", "dataset", "index", "seed")


def sidecar_path(program_file: str | Path) -> Path:
    """compiled.json -> compiled.meta.json, where optimize.compile writes what it did."""
    path = Path(program_file)
    return path.with_name(path.stem + ".meta.json")


def check_program_path(out: str | Path, flag: str = "--out") -> Path:
    """Where a compiled program can be saved: a path ending in .json (DSPy writes a program's state only
    as JSON there, or as a pickle this project never loads). Checked before a compile spends anything:
    `--out c.txt` used to pay for the whole optimization, then fail to save it anywhere (issue 33)."""
    out = Path(out)
    if out.suffix != ".json":
        raise BadInput(
            f"{flag} {out}: a compiled program is saved as JSON; give a path ending in .json "
            f"(e.g. {out.with_suffix('.json') if out.suffix else out.with_name(out.name + '.json')})"
        )
    if out.name.endswith(".meta.json"):
        raise BadInput(
            f"{flag} {out}: names ending in .meta.json are the compile's sidecars (compiled.meta.json beside "
            "compiled.json); give another name"
        )
    return out


def save(program: Program, out: str | Path, meta: dict) -> Path:
    """Write the program state to `out` and `meta` (stamped with the format version) beside it; the sidecar's path."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    program.save(str(out))
    sidecar = sidecar_path(out)
    stamped = {"format_version": FORMAT_VERSION, **meta}
    sidecar.write_text(json.dumps(stamped, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
    return sidecar


def save_or_keep(program: Program, out: str | Path, meta: dict) -> Path:
    """save() to `out`; if that fails now (the disk filled, the folder went away), save in the working folder
    or the temp folder instead and say where. Returns the program file written; its meta's `saved_to` names it."""
    import logging
    import tempfile
    import time

    out = Path(out)
    fallbacks = [
        Path.cwd() / f"{out.stem}-{int(time.time())}{out.suffix}",
        Path(tempfile.gettempdir()) / out.name,
    ]
    problems = []
    for target in [out, *fallbacks]:
        try:
            save(program, target, {**meta, "saved_to": str(target)})
        except Exception as exc:  # DSPy wraps an OSError in a misleading "non json-serializable" error
            problems.append(f"{target}: {exc.__cause__ or exc}")
            continue
        if target != out:
            logging.getLogger(__name__).warning(
                "could not save to %s (%s); saved the compiled program to %s instead",
                out,
                problems[0],
                target,
            )
        return target
    raise OSError("could not save the compiled program anywhere: " + "; ".join(problems))


def read_meta(program_file: str | Path) -> dict:
    """The sidecar beside a compiled program, or {} when there is none or it cannot be read."""
    sidecar = sidecar_path(program_file)
    try:
        meta = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def origin(program_file: str | Path) -> dict:
    """The sidecar keys that name the compile a program came from; {} (with a warning) without a sidecar."""
    meta = read_meta(program_file)
    if not meta:
        logger.warning(
            "no readable %s beside %s: the run cannot say which compile it came from",
            sidecar_path(program_file).name,
            program_file,
        )
        return {}
    return {k: meta.get(k) for k in ORIGIN_KEYS}


def check_version(program_file: str | Path) -> None:
    """Refuse a compiled program whose sidecar says another format version (none said = a hand-saved program)."""
    version = read_meta(program_file).get("format_version")
    if version is not None and version != FORMAT_VERSION:
        raise BadInput(
            f"{program_file} has compiled-program format version {version}, this code reads version "
            f"{FORMAT_VERSION}: recompile it with collate compile"
        )


def missing_program(path: str | Path) -> str:
    """The message for a --program file that is not there: the file the user gave, and where one comes from."""
    return f"--program {path}: no such file: pass a compiled.json that collate compile wrote (its --out)"


def load(program: Program, program_file: str | Path):
    """Load a compiled program's state into `program` (built by the same code); BadInput naming the fix."""
    path = Path(program_file)
    if not path.is_file():
        raise BadInput(missing_program(path))
    check_version(path)
    try:
        program.load(str(path))
    except Exception as exc:
        raise BadInput(
            f"cannot load {path} into the program ({exc}); recompile it with collate compile"
        ) from exc
    return program


def state_hash(state: dict[str, Any]) -> str:
    """Short sha256 of a program state's canonical JSON, DSPy's `metadata` (dependency versions) left out."""
    kept = {k: v for k, v in state.items() if k != "metadata"}
    canonical = json.dumps(kept, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:HASH_CHARS]


def program_hash(program) -> str:
    """The hash of an in-memory program, equal to `file_hash` of the file `program.save` would write."""
    return state_hash(json.loads(orjson.dumps(program.dump_state())))


def file_hash(program_file: str | Path) -> str:
    """The hash of a saved program file (compiled.json)."""
    return state_hash(json.loads(Path(program_file).read_text(encoding="utf-8")))
