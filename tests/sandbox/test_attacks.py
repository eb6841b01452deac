"""Adversarial code: every attack is contained, and each effect is checked from OUTSIDE the sandbox."""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from programs.sandbox import Limits, run_code
from programs.sandbox import core as sandbox_module
from programs.sandbox import isolation as sandbox_isolation
from programs.sandbox.isolation import bwrap_problem
from programs.sandbox.process import kill_uid


def test_full_isolation_is_available_here():
    """The project's machines (root, bubblewrap from setup.sh) must get full isolation, not the fallback."""
    assert bwrap_problem() is None


RECORDS = [{"id": "d1", "v": 1.0}]
SECRET = "sk-secret-test"


def run(code: str, timeout: float = 3.0, **limits):
    return run_code(code, RECORDS, timeout=timeout, limits=Limits(**limits) if limits else None)


def seen(res) -> str:
    return f"{res.stdout}\n{res.error}"


@pytest.fixture
def run_uid(monkeypatch) -> int:
    """Pin this test's throw-away uid so leftovers are counted for THIS run only (others may run too)."""
    uid = 1_000_000 + secrets.randbelow(1_000_000)
    monkeypatch.setattr(sandbox_isolation, "throwaway_uid", lambda: uid)
    return uid


def processes_of(uid: int) -> list[int]:
    """Host pids running as `uid`, seen from outside the sandbox."""
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            uid_line = next(
                line for line in (entry / "status").read_text().splitlines() if line.startswith("Uid:")
            )
        except (OSError, StopIteration):
            continue
        if int(uid_line.split()[1]) == uid:
            pids.append(int(entry.name))
    return pids


def host_processes_with(marker: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if marker.encode() in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def test_secret_file_outside_and_caller_env_are_invisible(tmp_path, monkeypatch):
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text(SECRET)
    monkeypatch.setenv("COLLATE_API_KEY", SECRET)
    code = f"""
import os
print(dict(os.environ))
for path in [{str(secret_file)!r}, '/proc/1/environ', '/proc/self/environ']:
    try:
        print(path, open(path, 'rb').read())
    except Exception as exc:
        print(path, 'blocked', type(exc).__name__)
print('exists', [os.path.exists(p) for p in ['/work', '/root', '/home', '/tmp/pytest-of-root']])
print(os.listdir('/'))
"""
    res = run(code)
    assert res.ok, res.error
    assert SECRET not in seen(res)
    assert f"{secret_file} blocked FileNotFoundError" in res.stdout
    assert "exists [False, False, False, False]" in res.stdout  # no /work, /root, /home, host /tmp
    assert "COLLATE" not in res.stdout


def test_writes_outside_the_temp_dir_do_not_land(tmp_path):
    targets = [tmp_path / "pwned.txt", Path("/work/main/PWNED_BY_SANDBOX"), Path("/tmp/pwned-by-sandbox.txt")]
    code = f"""
import os
for path in {[str(t) for t in targets]!r} + ['/usr/pwned', '/opt/python/pwned']:
    try:
        with open(path, 'w') as f:
            f.write('x')
        print(path, 'written')
    except OSError as exc:
        print(path, 'blocked', exc.errno)
os.system('touch /work/main/PWNED_BY_SHELL 2>/dev/null')
"""
    res = run(code)
    assert res.ok, res.error
    for target in [*targets, Path("/usr/pwned"), Path("/work/main/PWNED_BY_SHELL")]:
        assert not target.exists(), f"{target} was created outside the sandbox"


def test_host_credentials_are_not_readable():
    code = """
for path in ['/etc/shadow', '/etc/passwd', '/root/.ssh/id_rsa', '/root/.bash_history', '/etc/hostname']:
    try:
        print(path, open(path).read()[:200])
    except OSError as exc:
        print(path, 'blocked', type(exc).__name__)
"""
    res = run(code)
    assert res.ok, res.error
    assert "root:" not in res.stdout  # neither shadow nor passwd lines
    assert res.stdout.count("blocked") == 5


def test_loopback_server_of_the_caller_sees_no_connection():
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted = []
    stop = threading.Event()

    def accept_loop():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                accepted.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=accept_loop, daemon=True)
    thread.start()
    code = f"""
import socket
for host in ['127.0.0.1', 'localhost']:
    try:
        socket.create_connection((host, {port}), timeout=1)
        print(host, 'connected')
    except OSError as exc:
        print(host, 'blocked', type(exc).__name__)
"""
    try:
        res = run(code)
    finally:
        stop.set()
        thread.join()
        # A connection the sandbox made is complete (in the backlog) before its connect() returned,
        # so draining the backlog now counts it without waiting for the accept loop to come round.
        server.setblocking(False)
        while True:
            try:
                accepted.append(server.accept()[0])
            except BlockingIOError:
                break
        server.close()
    assert accepted == [], "the sandbox reached the caller's loopback server"
    assert res.stdout.count("blocked") == 2 and "connected" not in res.stdout


def test_host_unix_sockets_are_unreachable(tmp_path):
    name = f"collate-sandbox-test-{os.getpid()}"
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind("\0" + name)
    abstract.listen(1)
    abstract.setblocking(False)
    code = f"""
import socket
for address in ['\\0{name}', '/run/docker.sock', '/var/run/dbus/system_bus_socket']:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(address)
        print('connected')
    except OSError:
        print('blocked')
"""
    try:
        res = run(code)
        with pytest.raises(BlockingIOError):
            abstract.accept()  # nobody knocked
    finally:
        abstract.close()
    assert res.stdout.split() == ["blocked"] * 3


def test_dns_and_external_connections_fail():
    code = """
import socket
for target in [('example.com', 80), ('1.1.1.1', 53), ('8.8.8.8', 443)]:
    try:
        socket.create_connection(target, timeout=1)
        print(target, 'connected')
    except OSError as exc:
        print(target, 'blocked')
import subprocess
print(subprocess.run(['cat', '/proc/net/dev'], capture_output=True, text=True).stdout)
"""
    res = run(code)
    assert res.ok, res.error
    assert res.stdout.count("blocked") == 3 and "connected" not in res.stdout
    interfaces = [
        line.split(":")[0].strip() for line in res.stdout.splitlines() if ":" in line and "|" not in line
    ]
    assert interfaces == ["lo"]  # a network namespace of its own: nothing but its own loopback


def test_fork_bomb_is_bounded_and_leaves_nothing(run_uid):
    code = """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
"""
    res = run(code, timeout=1.5)  # a run that never ends is caught by pytest-timeout, not a clock here
    assert not res.ok and res.limit in ("timeout", "processes")
    assert processes_of(run_uid) == []


def test_background_process_does_not_outlive_the_run(run_uid, monkeypatch):
    # Take away the host's after-run sweep: the pid namespace alone must take the processes down.
    monkeypatch.setattr(sandbox_module, "kill_uid", lambda uid: 0)
    marker = f"sandbox-survivor-{os.getpid()}-{time.time_ns()}"
    code = f"""
import os, subprocess, time
subprocess.Popen(['sh', '-c', 'sleep 600; : {marker}'], start_new_session=True)
if os.fork() == 0:          # a classic daemon: double fork, new session
    os.setsid()
    if os.fork() == 0:
        os.execvp('sh', ['sh', '-c', 'sleep 600; : {marker}-daemon'])
    os._exit(0)
def alive():
    # distinct command lines, not processes: a shell forking its `sleep` briefly shows its own command
    # line twice (before the exec), which counted 3 under load
    found = set()
    for p in os.listdir('/proc'):
        try:
            line = open(f'/proc/{{p}}/cmdline', 'rb').read() if p.isdigit() else b''
        except OSError:
            continue  # a process that ended between the listing and the read
        if b'{marker}' in line:
            found.add(line)
    return found
deadline = time.monotonic() + 60  # both started (exec'd) however loaded the machine; only a hang guard
while len(alive()) < 2 and time.monotonic() < deadline:
    time.sleep(0.02)
print('alive inside', len(alive()))
"""
    try:
        res = run(code, timeout=120)
        assert res.ok and res.stdout == "alive inside 2\n", res.error
        deadline = time.monotonic() + 60  # only a hang guard: the namespace's teardown is not timed here
        while host_processes_with(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert host_processes_with(marker) == []
        assert processes_of(run_uid) == []
    finally:
        kill_uid(run_uid)


def test_infinite_loop_hits_the_wall_timeout():
    res = run("while True:\n    pass\n", timeout=1.5)  # a run that never ends: pytest-timeout fails it
    assert res.limit == "timeout" and not res.ok
    assert "timeout of 1.5 s" in res.error


def test_sleep_hits_the_wall_timeout_not_the_cpu_limit():
    res = run("import time\nprint('before')\ntime.sleep(60)\n", timeout=1.5)
    assert res.limit == "timeout" and res.stdout == "before\n"


def test_cpu_limit_even_when_sigxcpu_is_ignored():
    code = "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True:\n    pass\n"
    res = run(code, timeout=15, cpu_seconds=1)
    assert res.limit == "cpu" and "CPU time limit of 1 s" in res.error


def test_memory_bomb_hits_the_memory_limit_and_the_caller_stays_healthy():
    res = run("blocks = []\nwhile True:\n    blocks.append(bytearray(50 << 20))\n", timeout=5, memory_mb=512)
    assert res.limit == "memory" and "MemoryError" in res.error
    assert run("print(df['v'].sum())").stdout == "1.0\n"


def test_huge_write_hits_the_disk_limit():
    code = "with open('big.bin', 'wb') as f:\n    for _ in range(100):\n        f.write(b'x' * (1 << 20))\n"
    res = run(code, disk_mb=8)
    assert res.limit == "disk" and not res.ok
    # Many small files cannot sum past the tmpfs size either.
    code = "for i in range(100):\n    open(f'f{i}', 'wb').write(b'x' * (1 << 19))\n"
    assert run(code, disk_mb=8).limit == "disk"


def test_huge_stdout_is_capped():
    res = run("while True:\n    print('x' * 10000)\n", output_bytes=100_000)
    assert res.limit == "output" and len(res.stdout) == 100_000


def test_opening_many_files_hits_the_files_limit():
    res = run("handles = [open('/dev/null') for _ in range(10000)]\n", max_open_files=32)
    assert res.limit == "files" and "Too many open files" in res.error


def test_killing_the_parent_or_everything_leaves_the_caller_alive():
    sentinel = subprocess.Popen(["sleep", "30"])
    try:
        code = """
import os, signal
for pid in [1, os.getppid()]:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError as exc:
        print(pid, 'blocked', type(exc).__name__, flush=True)
os.system('kill -9 -1')
print('still here')
"""
        res = run(code)
        assert sentinel.poll() is None, "a host process outside the sandbox was killed"
        assert not res.ok  # kill -9 -1 killed the code itself
        assert "SIGKILL" in res.error
        assert "blocked PermissionError" in res.stdout
    finally:
        sentinel.kill()
        sentinel.wait()
    assert run("print('healthy')").stdout == "healthy\n"


def test_no_root_inside_no_privilege_regained_by_ctypes_or_shell(run_uid):
    code = """
import ctypes, os
libc = ctypes.CDLL(None)
print('setuid0', libc.setuid(0), 'uid', os.getuid())
print('shell', os.system('id -u > /dev/null; exit 7') >> 8)
print(open('/proc/self/status').read().split('NoNewPrivs:')[1].split()[0])
"""
    res = run(code)
    assert res.ok, res.error
    first, second, third = res.stdout.splitlines()
    assert first == f"setuid0 -1 uid {run_uid}"
    assert second == "shell 7" and third == "1"


def test_ignoring_sigterm_does_not_prevent_the_kill(run_uid):
    code = "import signal, time\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):\n    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    time.sleep(0.01)\n"
    res = run(code, timeout=1.5)  # a run that never ends (the kill did not land): pytest-timeout fails it
    assert res.limit == "timeout"
    assert processes_of(run_uid) == []


def test_a_forged_success_status_followed_by_a_crash_is_not_trusted():
    code = """
import json, os
fd = json.load(open('/sandbox/input/job.json'))['status_fd']
os.write(fd, b'{"event": "done", "ok": true, "error": null, "limit": null}\\n')
os._exit(3)
"""
    res = run(code)
    assert not res.ok and "exited with status 3" in res.error


def test_a_killed_caller_takes_the_sandbox_down_with_it(tmp_path):
    uid = 1_000_000 + secrets.randbelow(1_000_000)
    caller = (
        "import programs.sandbox.isolation as iso\n"
        f"iso.throwaway_uid = lambda: {uid}\n"
        "from programs.sandbox import run_code\n"
        "run_code('import time\\nwhile True: time.sleep(1)', [], timeout=60)\n"
    )
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [sys.executable, "-c", caller], cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 120  # only a hang guard: start-up is slow on a loaded machine
        while not processes_of(uid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert processes_of(uid), "the sandbox never started"
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 60  # only a hang guard
    while processes_of(uid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_of(uid) == [], "the sandbox outlived its killed caller"


@pytest.fixture(autouse=True)
def _no_signal_leak():
    """The caller must never receive a signal from the sandbox: fail loudly if SIGTERM arrives."""
    previous = signal.signal(signal.SIGTERM, lambda *_: pytest.fail("the caller got SIGTERM"))
    yield
    signal.signal(signal.SIGTERM, previous)
