"""The only place generated analysis code runs: isolated, bounded, and reported like Python would.

    res = run_code(code, records, timeout=20.0)    # -> SandboxResult(ok, stdout, error, limit)
    with prepare(records) as run:                  # warm start: the process starts now ...
        code = ask_the_lm()                        # ... while the code is still being written
        res = run.run(code, timeout=20.0)          # one fresh process per run, used once
    python -m programs.sandbox --code FILE.py --records FILE.json [--timeout SECONDS]

The code sees `records` (list of dicts) and `df` (a DataFrame of them), with pd, np, math,
statistics, datetime, re and json importable. It runs under bubblewrap with no network, no host
files, no caller environment, its own pid namespace and uid, and rlimits on memory, CPU, file
size, open files and processes; the host caps its stdout and kills it at the wall-clock
deadline. Where bwrap is unavailable it runs with rlimits only, logs a warning and lists what is
missing in `missing_protection`; COLLATE_SANDBOX_STRICT=1 refuses to run instead.
"""

from __future__ import annotations

import json
import logging
import math
import os
import tempfile
import threading
import weakref
from dataclasses import asdict, dataclass, field
from pathlib import Path

from programs.sandbox import isolation
from programs.sandbox.process import Outcome, kill_uid, watch
from programs.sandbox.verdict import verdict

logger = logging.getLogger(__name__)

RUNNER = Path(__file__).with_name("runner.py")
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
    code_wait_seconds: float = 600.0  # a prepared run waits this long for its code, then is stopped

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


def _check_code(code, timeout) -> None:
    if not isinstance(code, str):
        raise TypeError(f"code must be a str of Python source; got {type(code).__name__}")
    if not timeout or timeout <= 0:
        raise ValueError(f"timeout must be a positive number of seconds; got {timeout!r}")


def run_code(
    code: str, records: list[dict], timeout: float = 20.0, *, limits: Limits | None = None
) -> SandboxResult:
    """Run analysis code on records in the sandbox. Never raises for anything the code does."""
    _check_code(code, timeout)
    with prepare(records, limits=limits) as prepared:
        return prepared.run(code, timeout)


def prepare(records: list[dict] | None, *, limits: Limits | None = None) -> PreparedRun:
    """Start a sandbox process for `records` now; send it code later with `.run(code, timeout)`.

    The process imports pandas and builds `df` in the background, so that cost overlaps whatever
    the caller does meanwhile (the LM writing the code). It runs code once: prepare one per attempt.
    Close it (or use `with`) when no code comes; an abandoned one is killed when garbage-collected.
    `records=None` starts it before the records exist: pass them later, `.run(code, timeout, records=...)`.
    """
    if records is not None:
        _check_records(records)
    return PreparedRun(records, limits or Limits())


class _HostEnds:
    """The host's write ends of the runner's stdin and of the watcher's control pipe, closed once."""

    def __init__(self, code: int, control: int):
        self._lock = threading.Lock()
        self.code, self.control = code, control

    def send(self, payload: bytes, timeout: float) -> None:
        with self._lock:
            # "run" before end-of-file on the code: the runner says "ready" only after that EOF.
            for fd, data in ((self.control, f"run {timeout!r}\n".encode()), (self.code, payload)):
                _write_all(fd, data)
        self.close()

    def cancel(self) -> None:
        with self._lock:
            _write_all(self.control, b"cancel\n")
        self.close()

    def close(self) -> None:
        with self._lock:
            for name in ("code", "control"):
                fd = getattr(self, name)
                if fd >= 0:
                    setattr(self, name, -1)
                    os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    """Write everything, or stop quietly when the reader is gone (the run died; its outcome says why)."""
    if fd < 0:
        return
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError:  # BrokenPipeError: the runner (or the watcher) has already ended
        pass


@dataclass
class _Watched:
    """What the background thread leaves for `PreparedRun.run`: the outcome, or why there is none."""

    outcome: Outcome | None = None
    error: str | None = None


class PreparedRun:
    """One sandbox process, started ahead of its code. See `prepare`."""

    def __init__(self, records: list[dict] | None, limits: Limits):
        self.records, self.limits = records, limits
        self._used = False
        self._refusal: SandboxResult | None = None
        self._thread: threading.Thread | None = None
        problem = isolation.bwrap_problem()
        self._via_bwrap = problem is None
        self._missing = isolation.missing_protection(use_bwrap=self._via_bwrap)
        if problem is not None:
            if isolation.strict_required():
                error = (
                    f"Full sandbox isolation is required ({isolation.STRICT_ENV}=1) but unavailable: {problem}. "
                    f"Fix that, or unset {isolation.STRICT_ENV} to run with rlimits only."
                )
                self._refusal = SandboxResult(False, "", error, "isolation", self._missing)
                return
            isolation.warn_degraded_once(problem, tuple(self._missing))
        try:
            code_read, code_write = os.pipe()
        except OSError as exc:
            self._refusal = self._could_not_start(exc)
            return
        try:
            control_read, control_write = os.pipe()
        except OSError as exc:
            os.close(code_read)
            os.close(code_write)
            self._refusal = self._could_not_start(exc)
            return
        self._ends = _HostEnds(code_write, control_write)
        # Dropped without close(): closing our ends tells the watcher and the runner to stop.
        self._finalizer = weakref.finalize(self, self._ends.close)
        self._watched = _Watched()
        self._thread = threading.Thread(
            target=_run_watched,
            args=(self._watched, records, limits, self._via_bwrap, code_read, control_read),
            name="sandbox-prepared",
            daemon=True,
        )
        self._thread.start()

    def _could_not_start(self, exc: OSError) -> SandboxResult:
        logger.warning("sandbox could not start: %s", exc)
        return SandboxResult(False, "", f"The sandbox could not start: {exc}", None, self._missing)

    def run(self, code: str, timeout: float = 20.0, *, records: list[dict] | None = None) -> SandboxResult:
        """Send the code, wait for the verdict. The user's clocks start when the runner has the code.

        `records` only for a run prepared without them (`prepare(None)`); they travel with the code.
        """
        _check_code(code, timeout)
        if records is not None and self.records is not None:
            raise ValueError(
                "this sandbox was prepared with its records: pass them to prepare() or run(), not both"
            )
        if records is None and self.records is None:
            raise TypeError(
                "this sandbox was prepared without records: pass run(code, timeout, records=[...])"
            )
        if records is not None:
            _check_records(records)
        if self._used:
            raise RuntimeError("a prepared sandbox runs code once; call prepare() again for the next run")
        self._used = True
        if self._refusal is not None:
            return self._refusal
        cpu = self.limits.cpu_seconds or math.ceil(timeout) + 1
        message = {"code": code, "cpu_seconds": cpu} | ({"records": records} if records is not None else {})
        payload = json.dumps(message, ensure_ascii=False, default=str).encode("utf-8")
        self._ends.send(payload, float(timeout))
        self._thread.join()
        outcome = self._watched.outcome
        if outcome is None:
            return SandboxResult(False, "", self._watched.error, None, self._missing)
        if outcome.killed_for == "code_wait":  # it waited too long and was stopped: start a fresh one
            logger.info("prepared sandbox expired while waiting for code; starting a fresh one")
            late_or_own = records if records is not None else self.records  # [] is records too
            return run_code(code, late_or_own, timeout, limits=self.limits)
        ok, error, limit = verdict(outcome, self.limits, timeout, cpu, via_bwrap=self._via_bwrap)
        return SandboxResult(
            ok, outcome.stdout.decode("utf-8", errors="replace"), error, limit, self._missing
        )

    @property
    def alive(self) -> bool:
        """Unused, and its process is starting or waiting for code (not refused, expired or dead)."""
        return not self._used and self._thread is not None and self._thread.is_alive()

    def close(self) -> None:
        """Kill the process if no code was sent and wait until it is gone. Idempotent."""
        self._used = True
        if self._thread is None:
            return
        self._ends.cancel()
        self._thread.join()

    def __enter__(self) -> PreparedRun:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _run_watched(
    watched: _Watched,
    records: list[dict] | None,
    limits: Limits,
    via_bwrap: bool,
    code_read: int,
    control_read: int,
) -> None:
    """The background half of a prepared run: build its folder, start and watch the runner, clean up."""
    uid = isolation.throwaway_uid()
    owned = [code_read, control_read]  # watch() takes them over once called
    try:
        with tempfile.TemporaryDirectory(prefix="collate-sandbox-") as tmp:
            argv, env, work_dir, status_fds = _build_job(Path(tmp), records, limits, via_bwrap, uid)
            owned = []
            try:
                watched.outcome = watch(
                    argv,
                    env,
                    str(work_dir),
                    status_fds,
                    code_read,
                    control_read,
                    limits.startup_seconds,
                    limits.code_wait_seconds,
                    limits.output_bytes,
                )
            finally:
                survivors = kill_uid(uid)
                if survivors:  # normal after a kill at a limit; the pid namespace would take them anyway
                    logger.info("killed %d leftover process(es) of the sandbox run", survivors)
    except OSError as exc:  # could not even start (bwrap vanished, no memory, fd exhaustion)
        logger.warning("sandbox could not start: %s", exc)
        watched.error = f"The sandbox could not start: {exc}"
    except Exception as exc:  # noqa: BLE001 - a background thread must leave a reason, never die silently
        logger.exception("sandbox watcher failed")
        watched.error = f"The sandbox failed: {type(exc).__name__}: {exc}"
    finally:
        for fd in owned:
            os.close(fd)


def _build_job(
    tmp: Path, records: list[dict] | None, limits: Limits, via_bwrap: bool, uid: int | None
) -> tuple[list[str], dict[str, str], Path, tuple[int, int]]:
    """Write the run's input folder; return (argv, env, work dir, status pipe)."""
    job_dir = tmp / "input"
    work_dir = tmp / "work"
    job_dir.mkdir()
    work_dir.mkdir()
    if records is not None:  # else they come with the code, on the runner's stdin
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
    if via_bwrap:
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
        "records": f"{inside_job}/records.json" if records is not None else None,
        "workdir": workdir,
        "uid": uid,
        "limits": {
            "memory_bytes": limits.memory_mb << 20,
            "file_bytes": limits.disk_mb << 20,
            "open_files": limits.max_open_files,
            # Without our own uid the count would include every process of the caller's user.
            "processes": limits.max_processes if uid is not None else None,
        },
    }
    try:
        (job_dir / "job.json").write_text(json.dumps(job), encoding="utf-8")
    except OSError:
        os.close(status_read)
        os.close(status_write)
        raise
    argv = [*prefix, "-I", "-S", f"{inside_job}/runner.py", f"{inside_job}/job.json"]
    return argv, env, work_dir, (status_read, status_write)
