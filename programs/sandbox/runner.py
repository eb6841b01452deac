"""The script that runs INSIDE the sandbox: load records, drop privileges, run the analysis code.

Stand-alone on purpose (standard library at import time, no project imports): it is executed as
`python -I -S runner.py JOB.json` by a bare interpreter that sees only the bound paths.
It starts before the code exists ("warm start": the host starts it while the LM is still writing
the code). It talks to the host over the status file descriptor named in the job: one JSON line
{"event": "warm"} once pandas is imported and the records and DataFrame are loaded; then it reads
the code, as {"code", "cpu_seconds"} JSON (plus "records" when the host started it before the
records existed: the job's "records" is null then), from stdin to end-of-file (the host closes the pipe), puts
/dev/null on stdin so the code cannot read what the host sent, and says {"event": "ready"} (the
host starts the user's wall clock then); one {"event": "done", "ok", "error", "limit"} at the end.
Empty stdin means the host gave up on this run (or died): exit quietly.
The user's stdout goes to fd 1 untouched; the host caps and collects it.
"""

from __future__ import annotations

import ctypes
import errno
import json
import linecache
import math
import os
import resource
import site
import sys
import traceback

CODE_NAME = "analysis.py"  # the file name the user's tracebacks show
PR_SET_NO_NEW_PRIVS = 38

# Errors that mean a bound was hit rather than a bug in the code: (exception type, errno) -> limit.
ERRNO_LIMITS = {
    errno.EFBIG: "disk",
    errno.ENOSPC: "disk",
    errno.EDQUOT: "disk",
    errno.EMFILE: "files",
    errno.ENFILE: "files",
}


def _status(fd: int, **message) -> None:
    try:
        os.write(fd, (json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8"))
    except OSError:
        pass  # the code closed our channel; the host reports the missing status itself


def _no_new_privileges() -> None:
    """No exec may gain privileges (setuid files, file capabilities), whoever started us."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")


def _drop_privileges(uid: int) -> None:
    """Become an unprivileged uid of our own so RLIMIT_NPROC binds and nothing can regain root."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def _mapped_bytes() -> int:
    """This process's address-space size now (VmSize), the base the memory budget adds to."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 2 << 30  # no /proc: assume a generous runtime size rather than starve the code


def _set_limits(limits: dict, cpu_seconds: int) -> None:
    """Bound this process and all it starts; set after the imports so they do not eat the budget."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = math.ceil(used.ru_utime + used.ru_stime)  # the user's CPU budget counts from here
    bounds = {
        resource.RLIMIT_CPU: (spent + cpu_seconds, spent + cpu_seconds + 1),
        # The budget is on top of the pre-imported runtime (pandas alone maps ~0.3-1.3 GB).
        resource.RLIMIT_AS: _mapped_bytes() + limits["memory_bytes"],
        resource.RLIMIT_FSIZE: limits["file_bytes"],
        resource.RLIMIT_NOFILE: limits["open_files"],
        resource.RLIMIT_CORE: 0,
    }
    if limits.get("processes") is not None:
        bounds[resource.RLIMIT_NPROC] = limits["processes"]
    for kind, value in bounds.items():
        soft, hard = value if isinstance(value, tuple) else (value, value)
        resource.setrlimit(kind, (soft, hard))


def _receive_code() -> dict | None:
    """The host's {"code", "cpu_seconds"[, "records"]} from stdin, then stdin sealed: /dev/null from here on."""
    payload = sys.stdin.buffer.read()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)  # the user's sys.stdin now reads nothing (the pipe is gone, not just drained)
    os.close(null)
    try:
        job = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(job, dict) or not isinstance(job.get("code"), str):
        return None
    return job


def _limit_of(exc: BaseException) -> str | None:
    if isinstance(exc, MemoryError):
        return "memory"
    if isinstance(exc, BlockingIOError) and exc.errno == errno.EAGAIN:
        return "processes"  # fork/clone refused by RLIMIT_NPROC
    if isinstance(exc, OSError):
        return ERRNO_LIMITS.get(exc.errno) if exc.errno is not None else None
    return None


def _format_error(exc: BaseException) -> str:
    """Python's own traceback text, keeping only the frames in the user's code (not this runner's)."""
    if isinstance(exc, SyntaxError):
        return "".join(traceback.format_exception_only(type(exc), exc)).rstrip()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == CODE_NAME]
    lines = ["Traceback (most recent call last):\n"] if frames else []
    lines += traceback.format_list(frames)
    lines += traceback.format_exception_only(type(exc), exc)
    return "".join(lines).rstrip()


def _run(code: str, namespace: dict) -> tuple[bool, str | None, str | None]:
    try:
        compiled = compile(code, CODE_NAME, "exec")
    except (SyntaxError, ValueError) as exc:  # ValueError: source with NUL bytes
        return False, _format_error(exc), None
    try:
        exec(compiled, namespace)
    except SystemExit as exc:
        if exc.code in (None, 0):
            return True, None, None
        return False, f"SystemExit: {exc.code}", None
    except BaseException as exc:  # noqa: BLE001 - everything the code raises is reported, nothing escapes
        return False, _format_error(exc), _limit_of(exc)
    return True, None, None


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as handle:
        job = json.load(handle)
    status_fd = job["status_fd"]
    for directory in job["site_dirs"]:
        site.addsitedir(directory)
    # Pre-import the analysis stack before the clock starts: it is most of the run's overhead.
    import datetime
    import math
    import re
    import statistics

    import numpy as np
    import pandas as pd

    records = None  # a run started before its records exist gets them with the code
    if job["records"] is not None:
        with open(job["records"], encoding="utf-8") as handle:
            records = json.load(handle)
    namespace = {
        "__name__": "__main__",
        "__builtins__": __builtins__,
        "records": records,
        "df": pd.DataFrame(records) if records is not None else None,
        "pd": pd,
        "np": np,
        "math": math,
        "statistics": statistics,
        "datetime": datetime,
        "re": re,
        "json": json,
    }
    _status(status_fd, event="warm")
    received = _receive_code()
    if received is None:  # cancelled before any code came: nothing to run, nothing to report
        return 0
    if records is None:
        records = received.get("records")
        if not isinstance(records, list):
            return 0  # the host always sends them; anything else is not a run
        namespace["records"], namespace["df"] = records, pd.DataFrame(records)
    code = received["code"]
    linecache.cache[CODE_NAME] = (len(code), None, code.splitlines(True), CODE_NAME)
    _set_limits(job["limits"], int(received["cpu_seconds"]))
    _no_new_privileges()
    if job.get("uid") is not None and os.getuid() == 0:
        _drop_privileges(job["uid"])
    os.chdir(job["workdir"])
    # Line-buffered: what the code printed before a timeout kill still reaches the host.
    sys.stdout.reconfigure(encoding="utf-8", errors="replace", line_buffering=True)  # type: ignore[union-attr]  # the runner's own stdout: a TextIOWrapper
    _status(status_fd, event="ready")
    ok, error, limit = _run(code, namespace)
    try:
        sys.stdout.flush()
    except OSError as exc:  # stdout closed or broken by the code
        ok, error = False, error or f"stdout could not be written: {exc}"
    try:
        sys.stderr.flush()
    except OSError:
        pass
    _status(status_fd, event="done", ok=ok, error=error, limit=limit)
    # Leave now: tearing down an interpreter with pandas loaded takes ~60 ms the caller would wait
    # for, and nothing of this process is needed any more (output flushed, verdict sent).
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
