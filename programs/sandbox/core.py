"""The only place generated analysis code runs: isolated, bounded, and reported like Python would.

    res = run_code(code, records, timeout=20.0)    # -> SandboxResult(ok, stdout, error, limit)
    with prepare(records) as run:                  # warm start: the process starts now ...
        code = ask_the_lm()                        # ... while the code is still being written
        res = run.run(code, timeout=20.0)          # one fresh process per run, used once
    python -m programs.sandbox --code FILE.py --records FILE.json [--timeout SECONDS]

The code sees `records` (list of dicts) and `df` (a DataFrame of them), with pd, np, math,
statistics, datetime, re and json importable. It runs under bubblewrap with no network, no host
files, no caller environment, its own pid namespace and uid (root) or user namespace (anyone
else), and rlimits on memory, CPU, file size, open files and processes; the host caps its stdout
and kills it at the wall-clock deadline. Root and ordinary users get the same isolation (see
isolation.py). Where bwrap cannot isolate, the code is refused (limit "isolation", the error says how
to fix it) unless the user opted out with COLLATE_SANDBOX=off (policy.py): then it runs with rlimits
only, warned on every run, `unisolated` on the result and `missing_protection` listing what it lacks.

Every bound is a plain value of `Limits` (see LIMIT_RANGES), and the wall-clock timeout is
0 < timeout <= MAX_TIMEOUT_SECONDS: out-of-range values raise ValueError naming the range.
"""

from __future__ import annotations

import json
import logging
import math
import os
import tempfile
import threading
import warnings
import weakref
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from programs.sandbox import isolation, leftovers, policy
from programs.sandbox.process import Outcome, kill_uid, watch
from programs.sandbox.verdict import verdict

logger = logging.getLogger(__name__)

RUNNER = Path(__file__).with_name("runner.py")
OLD_KERNEL = "Linux before 5.14 counts RLIMIT_NPROC per user, not per user namespace; upgrade or run as root"
MAX_TIMEOUT_SECONDS = 3600.0  # one analysis run; also keeps every clock within what select() accepts
TIMEOUT_RANGE = f"0 < timeout <= {MAX_TIMEOUT_SECONDS:g}"

# Allowed (lowest, highest) of each bound; a Settings layer reads these to validate its knobs.
LIMIT_RANGES: dict[str, tuple[float, float]] = {
    "memory_mb": (512, 1 << 20),  # pandas alone maps ~330 MB of address space
    "cpu_seconds": (1, int(MAX_TIMEOUT_SECONDS)),
    "max_processes": (1, 4096),
    "max_open_files": (16, 65536),  # the interpreter itself holds a few
    "disk_mb": (1, 1 << 20),
    "output_bytes": (1, 1 << 30),
    "startup_seconds": (0.1, MAX_TIMEOUT_SECONDS),
    "code_wait_seconds": (0.1, MAX_TIMEOUT_SECONDS),
}


@dataclass(frozen=True)
class Limits:
    """Bounds of one run, all plain values (ints, floats, a bool). Defaults suit pandas over a few
    thousand records. Out-of-range or mistyped values raise ValueError/TypeError naming the range."""

    memory_mb: int = 1024  # RLIMIT_AS per process, on top of the pre-imported runtime
    cpu_seconds: int | None = None  # RLIMIT_CPU of the user's code; None = the wall timeout + 1
    max_processes: int = 8  # RLIMIT_NPROC of the run's own uid or user namespace (threads count)
    max_open_files: int = 64
    disk_mb: int = 64  # size of the writable tmpfs and RLIMIT_FSIZE
    output_bytes: int = 1_000_000  # stdout read at most this much
    startup_seconds: float = 60.0  # interpreter + pandas import + records load, before the timeout starts
    code_wait_seconds: float = 600.0  # a prepared run waits this long for its code, then is stopped
    # Where bwrap cannot isolate: False refuses (the default), True runs with rlimits only, warned
    # every run (the user's COLLATE_SANDBOX=off); None = not decided by the caller: read COLLATE_SANDBOX.
    allow_unisolated: bool | None = None
    # RETIRED: refusing without isolation is the default now. True is accepted (with a
    # DeprecationWarning); False no longer runs code unisolated and is refused, naming allow_unisolated.
    strict: bool | None = None

    def __post_init__(self):
        for spec in fields(self):
            value = getattr(self, spec.name)
            if spec.name in ("strict", "allow_unisolated"):
                if value is not None and not isinstance(value, bool):
                    raise TypeError(f"Limits.{spec.name} must be True, False or None; got {value!r}")
                continue
            if value is None and spec.name == "cpu_seconds":
                continue
            low, high = LIMIT_RANGES[spec.name]
            whole = spec.type in ("int", "int | None")
            kinds = (int,) if whole else (int, float)
            if isinstance(value, bool) or not isinstance(value, kinds):
                kind = "an integer" if whole else "a number"
                raise TypeError(f"Limits.{spec.name} must be {kind} in [{low:g}, {high:g}]; got {value!r}")
            if not low <= value <= high:  # also false for NaN
                raise ValueError(
                    f"Limits.{spec.name}={value!r} is out of range; use {low:g} <= {spec.name} <= {high:g}"
                )
        if self.strict is False:
            raise ValueError(
                "Limits(strict=False) is retired: it no longer runs generated code without isolation; "
                f"pass Limits(allow_unisolated=True) (what {policy.OPT_OUT} does) to do that knowingly"
            )
        if self.strict is True:
            warnings.warn(
                "Limits(strict=True) is retired: refusing to run without isolation is the default now",
                DeprecationWarning,
                stacklevel=3,
            )


@dataclass
class SandboxResult:
    ok: bool
    stdout: str
    error: str | None = None
    limit: str | None = None  # which bound was hit: timeout, cpu, memory, output, disk, files, processes
    missing_protection: list[str] = field(default_factory=list)  # empty = fully isolated
    # True: the code was handed to a process WITHOUT bubblewrap isolation (the user's COLLATE_SANDBOX=off).
    unisolated: bool = False

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False)


def isolation_refusal(limits: Limits | None = None) -> str | None:
    """The error every run with these limits would return without running anything (no isolation on this
    machine, and no COLLATE_SANDBOX=off), or None when code would run. Free to ask (bwrap is probed once
    per process): commands ask it before their first LM call, so a machine without bubblewrap is one line
    and exit 2, not a run that pays for every question and answers each with this refusal (issue 33)."""
    limits = limits or Limits()
    problem = isolation.bwrap_problem()
    if problem is None or policy.allow_unisolated(limits.allow_unisolated):
        return None
    return policy.refusal(problem, isolation.missing_protection(use_bwrap=False))


def _check_records(records) -> None:
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise TypeError(
            "records must be a list of dicts (one dict per document); got " + type(records).__name__
        )


def check_timeout(timeout) -> float:
    """The wall-clock timeout as a float, or ValueError/TypeError naming the allowed range."""
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a positive number of seconds ({TIMEOUT_RANGE}); got {timeout!r}")
    if not 0 < timeout <= MAX_TIMEOUT_SECONDS:  # also false for NaN
        raise ValueError(
            f"timeout {timeout!r} is out of range: use a positive number of seconds, {TIMEOUT_RANGE}"
        )
    return float(timeout)


def _check_code(code, timeout) -> None:
    if not isinstance(code, str):
        raise TypeError(f"code must be a str of Python source; got {type(code).__name__}")
    check_timeout(timeout)


def run_code(
    code: str, records: list[dict], timeout: float = 20.0, *, limits: Limits | None = None
) -> SandboxResult:
    """Run analysis code on records in the sandbox. Never raises for anything the code does.

    Raises ValueError/TypeError for bad arguments: code not a str, records not a list of dicts,
    timeout outside 0 < timeout <= MAX_TIMEOUT_SECONDS.
    """
    _check_code(code, timeout)
    with prepare(records, limits=limits) as prepared:
        return prepared.run(code, timeout)


def prepare(records: list[dict] | None, *, limits: Limits | None = None) -> PreparedRun:
    """Start a sandbox process for `records` now; send it code later with `.run(code, timeout)`.

    The process imports pandas and builds `df` in the background, so that cost overlaps whatever
    the caller does meanwhile (the LM writing the code). It runs code once: prepare one per attempt.
    Close it (or use `with`) when no code comes; an abandoned one is killed when garbage-collected.
    `records=None` starts it before the records exist: pass them later, `.run(code, timeout, records=...)`.
    The timeout is given to `.run` (checked there: 0 < timeout <= MAX_TIMEOUT_SECONDS).
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
        allowed = policy.allow_unisolated(
            limits.allow_unisolated
        )  # a misspelt setting fails here, everywhere
        self._problem = isolation.bwrap_problem()
        self._via_bwrap = self._problem is None
        self._missing = isolation.missing_protection(use_bwrap=self._via_bwrap)
        if self._problem is not None and not allowed:  # not via bwrap, and not allowed without it
            error = policy.refusal(self._problem, self._missing)
            self._refusal = SandboxResult(False, "", error, "isolation", self._missing)
            return
        if (
            self._via_bwrap and self._missing
        ):  # isolated, but an old kernel counts the process limit per user: say so once
            isolation.warn_degraded_once(OLD_KERNEL, tuple(self._missing))
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

    @property
    def refused(self) -> SandboxResult | None:
        """The refusal every run of this sandbox returns (no isolation here), known before any code is
        written: a caller need not ask an LM for code that will never run."""
        return self._refusal if self._refusal is not None and self._refusal.limit == "isolation" else None

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
        if self._problem is not None:  # unisolated: warned before it runs, so a hang is on the record
            policy.warn_unisolated(self._problem, self._missing)
        assert self._thread is not None  # started by __init__ unless refused, and a refusal returned above
        self._ends.send(payload, float(timeout))
        self._thread.join()
        outcome = self._watched.outcome
        if outcome is not None and outcome.killed_for == "code_wait":  # expired unused: a fresh one runs it
            logger.info("prepared sandbox expired while waiting for code; starting a fresh one")
            late_or_own = records if records is not None else self.records  # [] is records too
            assert late_or_own is not None  # checked at the top: one of the two is given
            return run_code(code, late_or_own, timeout, limits=self.limits)
        unisolated = not self._via_bwrap  # the code went to a process without isolation
        if unisolated:
            policy.count_unisolated_run()
        if outcome is None:
            return SandboxResult(False, "", self._watched.error, None, self._missing, unisolated)
        ok, error, limit = verdict(outcome, self.limits, timeout, cpu, via_bwrap=self._via_bwrap)
        return SandboxResult(
            ok, outcome.stdout.decode("utf-8", errors="replace"), error, limit, self._missing, unisolated
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
    mark: int | None = None  # the folder's marker, held until the folder is gone (leftovers.py)
    try:
        leftovers.sweep_once()  # the folders a killed run of this user left, once per process
        with tempfile.TemporaryDirectory(prefix=leftovers.PREFIX) as tmp:
            mark = leftovers.claim(Path(tmp))
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
        if mark is not None:
            os.close(mark)


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
            # Only where it counts this run alone: its own uid (root) or its own user namespace.
            "processes": limits.max_processes if isolation.process_limit_applies(via_bwrap) else None,
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
