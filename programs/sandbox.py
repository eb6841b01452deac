"""The only place generated analysis code runs: isolated, bounded, and reported like Python would.

    res = run_code(code, records, timeout=20.0)    # -> SandboxResult(ok, stdout, error, limit)
    python -m programs.sandbox --code FILE.py --records FILE.json [--timeout SECONDS]

The code sees `records` (list of dicts) and `df` (a DataFrame of them), with pd, np, math,
statistics, datetime, re and json importable. It runs under bubblewrap with no network, no host
files, no caller environment, its own pid namespace and uid, and rlimits on memory, CPU, file
size, open files and processes; the host caps its stdout and kills it at the wall-clock
deadline. Where bwrap is unavailable it runs with rlimits only, logs a warning and lists what is
missing in `missing_protection`; COLLATE_SANDBOX_STRICT=1 refuses to run instead.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from programs import sandbox_isolation as isolation
from programs.sandbox_process import kill_uid, watch
from programs.sandbox_verdict import verdict

logger = logging.getLogger(__name__)

RUNNER = Path(__file__).with_name("sandbox_runner.py")
MIN_MEMORY_MB = 512  # pandas alone maps ~330 MB of address space


@dataclass(frozen=True)
class Limits:
    """Bounds of one run. Defaults suit pandas over a few thousand records."""

    memory_mb: int = 1024  # RLIMIT_AS per process
    cpu_seconds: int | None = None  # RLIMIT_CPU of the user's code; None = the wall timeout + 1
    max_processes: int = 8  # RLIMIT_NPROC of the run's own uid (threads count)
    max_open_files: int = 64
    disk_mb: int = 64  # size of the writable tmpfs and RLIMIT_FSIZE
    output_bytes: int = 1_000_000  # stdout read at most this much
    startup_seconds: float = 60.0  # interpreter + pandas import + records load, before the timeout starts

    def __post_init__(self):
        if self.memory_mb < MIN_MEMORY_MB:
            raise ValueError(f"memory_mb={self.memory_mb} is below {MIN_MEMORY_MB}: pandas needs that much")
        if self.max_processes < 1 or self.max_open_files < 16 or self.disk_mb < 1 or self.output_bytes < 1:
            raise ValueError(f"Limits out of range: {self}; use max_processes>=1, max_open_files>=16, ...")


@dataclass
class SandboxResult:
    ok: bool
    stdout: str
    error: str | None = None
    limit: str | None = None  # which bound was hit: timeout, cpu, memory, output, disk, files, processes
    missing_protection: list[str] = field(default_factory=list)  # empty = fully isolated

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


def _check_records(records) -> None:
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise TypeError(
            "records must be a list of dicts (one dict per document); got " + type(records).__name__
        )


def run_code(
    code: str, records: list[dict], timeout: float = 20.0, *, limits: Limits | None = None
) -> SandboxResult:
    """Run analysis code on records in the sandbox. Never raises for anything the code does."""
    if not isinstance(code, str):
        raise TypeError(f"code must be a str of Python source; got {type(code).__name__}")
    _check_records(records)
    if not timeout or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds; got {timeout!r}")
    limits = limits or Limits()
    cpu = limits.cpu_seconds or math.ceil(timeout) + 1
    problem = isolation.bwrap_problem()
    missing = isolation.missing_protection(use_bwrap=problem is None)
    if problem is not None:
        if isolation.strict_required():
            error = (
                f"Full sandbox isolation is required ({isolation.STRICT_ENV}=1) but unavailable: {problem}. "
                f"Fix that, or unset {isolation.STRICT_ENV} to run with rlimits only."
            )
            return SandboxResult(False, "", error, "isolation", missing)
        isolation.warn_degraded_once(problem, tuple(missing))
    uid = isolation.throwaway_uid()
    with tempfile.TemporaryDirectory(prefix="collate-sandbox-") as tmp:
        job_dir = Path(tmp) / "input"
        work_dir = Path(tmp) / "work"
        job_dir.mkdir()
        work_dir.mkdir()
        (job_dir / "analysis.py").write_text(code, encoding="utf-8")
        (job_dir / "records.json").write_text(
            json.dumps(records, ensure_ascii=False, default=str), encoding="utf-8"
        )
        (job_dir / "runner.py").write_bytes(RUNNER.read_bytes())
        env = {
            "PATH": "/usr/bin:/bin",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        env |= {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        if problem is None:
            prefix, sites, extra_env = isolation.bwrap_command(job_dir, limits.disk_mb << 20)
            inside_job, workdir = isolation.INSIDE_INPUT, isolation.INSIDE_WORK
            env |= extra_env | {"HOME": workdir, "TMPDIR": workdir}
        else:
            prefix, sites = [str(isolation.interpreter()[0])], list(isolation.site_dirs())
            inside_job, workdir = str(job_dir), str(work_dir)
            env |= {"HOME": workdir, "TMPDIR": workdir}
            if uid is not None:  # the runner drops to `uid`: let it reach and write its work dir only
                os.chmod(tmp, 0o711)
                os.chown(work_dir, uid, uid)
        status_read, status_write = os.pipe()
        job = {
            "status_fd": status_write,
            "site_dirs": sites,
            "records": f"{inside_job}/records.json",
            "code": f"{inside_job}/analysis.py",
            "workdir": workdir,
            "uid": uid,
            "cpu_seconds": cpu,
            "limits": {
                "memory_bytes": limits.memory_mb << 20,
                "file_bytes": limits.disk_mb << 20,
                "open_files": limits.max_open_files,
                # Without our own uid the count would include every process of the caller's user.
                "processes": limits.max_processes if uid is not None else None,
            },
        }
        (job_dir / "job.json").write_text(json.dumps(job), encoding="utf-8")
        argv = [*prefix, "-I", "-S", f"{inside_job}/runner.py", f"{inside_job}/job.json"]
        try:
            outcome = watch(
                argv,
                env,
                str(work_dir),
                (status_read, status_write),
                timeout,
                limits.startup_seconds,
                limits.output_bytes,
            )
        except OSError as exc:  # could not even start (bwrap vanished, no memory, fd exhaustion)
            logger.warning("sandbox could not start: %s", exc)
            return SandboxResult(False, "", f"The sandbox could not start: {exc}", None, missing)
        finally:
            survivors = kill_uid(uid)
            if survivors:  # normal after a kill at a limit; the pid namespace would take them anyway
                logger.info("killed %d leftover process(es) of the sandbox run", survivors)
    ok, error, limit = verdict(outcome, limits, timeout, cpu, via_bwrap=problem is None)
    return SandboxResult(ok, outcome.stdout.decode("utf-8", errors="replace"), error, limit, missing)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m programs.sandbox", description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", required=True, type=Path, help="Python file to run")
    parser.add_argument("--records", required=True, type=Path, help="JSON file: a list of record objects")
    parser.add_argument("--timeout", type=float, default=20.0, help="wall-clock seconds (default 20)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        code = args.code.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: cannot read --code {args.code}: {exc}; pass a UTF-8 Python file", file=sys.stderr)
        return 2
    try:
        records = json.loads(args.records.read_text(encoding="utf-8"))
        _check_records(records)
    except (OSError, ValueError, TypeError) as exc:
        print(
            f"error: --records {args.records}: {exc}; pass a JSON file holding a list of objects",
            file=sys.stderr,
        )
        return 2
    if args.timeout <= 0:
        print(f"error: --timeout {args.timeout:g} must be a positive number of seconds", file=sys.stderr)
        return 2
    print(run_code(code, records, timeout=args.timeout).to_json())
    return 0


if __name__ == "__main__":
    sys.exit(main())
