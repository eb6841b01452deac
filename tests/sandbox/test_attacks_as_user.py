"""The adversarial cases again, run by an ORDINARY user: isolation must not depend on being root.

The test (root) creates a throw-away user with a home holding an ~/.ssh key, ~/.aws credentials and
a collate project with an index; copies `programs/sandbox` there (the user may not read the
checkout); gives the user a Python of its own (a venv over the system interpreter whose .pth points
at the site-packages this suite runs with); and runs tests/sandbox/user_driver.py as that user with
secrets in its environment. Every effect is checked from OUTSIDE (files, the listener, the process
table), and the driver's controls show the user could do each thing without the sandbox.
Skipped when users cannot be created (not root, no useradd).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from tests.sandbox.accounts import PYTHON, as_user, base_env, give, processes_of, throwaway_user

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SECRET = f"sk-user-secret-{secrets.token_hex(4)}"


@pytest.fixture(scope="module")
def user():
    with throwaway_user() as account:
        yield account


@pytest.fixture(scope="module")
def home(user) -> dict[str, Path]:
    """The user's secrets, project and runtime, written as root then handed over to the user."""
    home = Path(user.pw_dir)
    files = {
        "ssh_key": home / ".ssh" / "id_ed25519",
        "aws": home / ".aws" / "credentials",
        "index": home / "collate" / "index" / "docs" / "acme" / "meta.json",
        "project": home / "collate" / "pyproject.toml",
    }
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{path.name}: {SECRET}\n")
    files["ssh_key"].chmod(0o600)
    files["ssh_key"].parent.chmod(0o700)
    code_dir = home / "collate"
    shutil.copytree(ROOT / "programs" / "sandbox", code_dir / "programs" / "sandbox")
    shutil.copy(ROOT / "programs" / "__init__.py", code_dir / "programs" / "__init__.py")
    # every package sets the environment defaults from signatures/; the sandbox reads its yes/no settings
    # with signatures/env_flags.py (the sandbox imports nothing else of the project)
    (code_dir / "signatures").mkdir()
    for name in ("__init__.py", "environment.py", "errors.py", "env_flags.py"):
        shutil.copy(ROOT / "signatures" / name, code_dir / "signatures" / name)
    shutil.copy(HERE / "user_driver.py", code_dir / "user_driver.py")
    # A venv of the user's own over the system interpreter; pandas/numpy from this suite's site-packages.
    venv = home / "venv"
    subprocess.run([PYTHON, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    import pandas

    runtime = Path(pandas.__file__).resolve().parents[1]
    (next(venv.glob("lib/python*/site-packages")) / "runtime.pth").write_text(f"{runtime}\n")
    give(user, home)
    probe = as_user(
        user, [str(venv / "bin" / "python"), "-c", "import pandas, numpy"], capture_output=True, text=True
    )
    if probe.returncode != 0:
        pytest.skip(f"the test user cannot import pandas from {runtime}: {probe.stderr.strip()[-300:]}")
    return files | {"python": venv / "bin" / "python", "driver": code_dir / "user_driver.py"}


class Listener:
    """A TCP server on the host's 127.0.0.1 that records every connection and what it was sent."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.received: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self):
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            self._take(conn)

    def _take(self, conn):
        conn.settimeout(1)
        try:
            self.received.append(conn.recv(100))
        except OSError:
            self.received.append(b"")
        conn.close()

    def close(self):
        self._stop.set()
        self._thread.join()
        # A connection made before now is complete (in the backlog) even if the loop has not come round
        # to it: drain the backlog instead of waiting for it to land.
        self.server.setblocking(False)
        while True:
            try:
                conn, _ = self.server.accept()
            except BlockingIOError:
                break
            self._take(conn)
        self.server.close()


def drive(
    user, home, spec: dict, wrapper: list[str] | None = None, env: dict | None = None
) -> tuple[dict, str]:
    """Run the driver as the user (optionally under `wrapper`), secrets (and `env`) in its environment."""
    spec_file = Path(user.pw_dir) / f"cases-{secrets.token_hex(3)}.json"
    spec_file.write_text(json.dumps(spec))
    os.chown(spec_file, user.pw_uid, user.pw_gid)
    argv = [str(home["python"]), str(home["driver"]), str(spec_file)]
    env = {"COLLATE_API_KEY": SECRET, "OPENAI_API_KEY": SECRET, "AWS_SECRET_ACCESS_KEY": SECRET} | (env or {})
    if wrapper:
        done = subprocess.run(
            [*wrapper, *argv],
            env=base_env(user) | env,
            cwd=user.pw_dir,
            capture_output=True,
            text=True,
            timeout=240,
        )
    else:
        done = as_user(user, argv, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout), done.stderr


@pytest.fixture
def root_file():
    """A root-owned, world-readable host file (pytest's tmp_path is root-only): the user may read it."""
    folder = Path(tempfile.mkdtemp(prefix="collate-sbx-root-"))
    folder.chmod(0o755)
    path = folder / "service.conf"
    path.write_text(f"token = {SECRET}\n")
    path.chmod(0o644)
    yield path
    shutil.rmtree(folder)


def test_an_ordinary_user_gets_full_isolation_and_every_attack_is_contained(user, home, root_file):
    readable = [str(home[k]) for k in ("ssh_key", "aws", "index", "project")] + [str(root_file)]
    unreadable_anyway = ["/root/.ssh/id_rsa", "/root/.bash_history", "/etc/shadow"]
    project = [str(ROOT / "pyproject.toml"), str(ROOT / "programs" / "sandbox" / "core.py")]
    targets = [
        Path(user.pw_dir) / "pwned.txt",
        home["index"].parent / "pwned.json",
        Path("/tmp") / f"pwned-{secrets.token_hex(4)}",
        Path("/dev/shm") / f"pwned-{secrets.token_hex(4)}",
    ]
    listener = Listener()
    sentinel = subprocess.Popen(
        ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}", "--init-groups", "--", "sleep", "120"]
    )
    cases = [
        {
            "name": "read",
            "timeout": 10,
            "code": f"""
import os
for path in {readable + unreadable_anyway + project!r}:
    try:
        print(path, open(path).read()[:200])
    except OSError as exc:
        print(path, 'blocked', type(exc).__name__)
print('home', [os.path.exists(p) for p in [{user.pw_dir!r}, '/home', '/root', '/work', {str(ROOT)!r}]])
""",
        },
        {
            "name": "env",
            "timeout": 10,
            "code": """
import os
print(dict(os.environ))
for path in ['/proc/self/environ', '/proc/1/environ']:
    try:
        print(path, open(path, 'rb').read())
    except OSError as exc:
        print(path, 'blocked', type(exc).__name__)
""",
        },
        {
            "name": "network",
            "timeout": 10,
            "code": f"""
import socket
for host in ['127.0.0.1', 'localhost']:
    try:
        socket.create_connection((host, {listener.port}), timeout=1).sendall(b'sandbox')
        print(host, 'connected')
    except OSError as exc:
        print(host, 'blocked')
""",
        },
        {
            "name": "write",
            "timeout": 10,
            "code": f"""
import os
for path in {[str(t) for t in targets]!r}:
    try:
        open(path, 'w').write('x')
        print(path, 'written')
    except OSError as exc:
        print(path, 'blocked')
os.system('touch {targets[0]}-by-shell 2>/dev/null')
""",
        },
        {
            "name": "privileges",
            "timeout": 10,
            "code": """
import os, subprocess
print('uid', os.getuid(), 'nnp', open('/proc/self/status').read().split('NoNewPrivs:')[1].split()[0])
nested = subprocess.run(['unshare', '--user', '--map-root-user', 'id', '-u'], capture_output=True, text=True)
print('nested userns', nested.returncode, nested.stdout.strip())
""",
        },
        {
            "name": "kill_everything",
            "timeout": 10,
            "code": "import os\nos.system('kill -9 -1')\nprint('still here')\n",
        },
        {
            "name": "fork_bomb",
            "timeout": 1.5,
            "code": """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
""",
        },
        {
            "name": "processes",  # the user's other processes (driver, sentinel) must not count
            "timeout": 10,
            "limits": {"max_processes": 8},
            "code": """
import os, time
started = 0
try:
    for _ in range(50):
        if os.fork() == 0:
            time.sleep(3)
            os._exit(0)
        started += 1
except OSError as exc:
    print('refused after', started, type(exc).__name__)
""",
        },
        {
            "name": "memory_bomb",
            "timeout": 5,
            "limits": {"memory_mb": 512},
            "code": "blocks = []\nwhile True:\n    blocks.append(bytearray(50 << 20))\n",
        },
        {"name": "healthy", "timeout": 10, "code": "print(df['v'].sum())"},
    ]
    try:
        report, stderr = drive(user, home, {"cases": cases, "read": readable, "port": listener.port})
        assert sentinel.poll() is None, "kill -9 -1 inside the sandbox reached the user's other processes"
        leftover = [pid for pid in processes_of(user.pw_uid) if pid != sentinel.pid]
    finally:
        listener.close()
        sentinel.kill()
        sentinel.wait()
    results, controls = report["results"], report["controls"]

    # Full isolation without root, nothing listed as missing, no warning.
    assert controls["uid"] == user.pw_uid != 0
    assert report["problem"] is None, report["problem"]
    assert all(r["missing_protection"] == [] for r in results.values()), results
    assert "WITHOUT" not in stderr and report["unisolated_runs"] == 0
    # The user can read its secrets, the index, the project and the root file, and reach the port ...
    assert all(SECRET in text for text in controls["read"].values()), controls["read"]
    assert controls["connected"] is True
    # ... the code can do none of it.
    for name, result in results.items():
        assert SECRET not in f"{result['stdout']}\n{result['error']}", f"{name} leaked the secret"
    read = results["read"]
    assert read["ok"], read["error"]
    expected_blocked = len(readable + unreadable_anyway + project)
    assert read["stdout"].count("blocked FileNotFoundError") == expected_blocked, read["stdout"]
    assert "home [False, False, False, False, False]" in read["stdout"]
    assert results["env"]["ok"] and "COLLATE" not in results["env"]["stdout"]
    assert listener.received == [b""], "only the driver's control connection may reach the host's loopback"
    assert results["network"]["stdout"].count("blocked") == 2
    assert not any(t.exists() for t in targets) and not Path(f"{targets[0]}-by-shell").exists()
    # The home paths do not exist inside; /tmp and /dev/shm are the sandbox's own (its tmpfs): nothing lands.
    assert results["write"]["stdout"].count("blocked") == 2
    privileges = results["privileges"]["stdout"].splitlines()
    assert privileges[0] == f"uid {user.pw_uid} nnp 1"
    assert privileges[1].startswith("nested userns") and privileges[1] != "nested userns 0 0"
    assert "SIGKILL" in results["kill_everything"]["error"]
    assert results["fork_bomb"]["limit"] in ("timeout", "processes")
    refused = results["processes"]["stdout"].split()
    assert refused[:2] == ["refused", "after"] and 3 <= int(refused[2]) < 8, results["processes"]
    assert results["memory_bomb"]["limit"] == "memory" and "MemoryError" in results["memory_bomb"]["error"]
    assert results["healthy"]["stdout"] == "1.0\n"
    assert leftover == [], "sandbox processes outlived their runs"


def test_with_user_namespaces_switched_off_the_code_is_refused_with_the_fix_unless_opted_out(user, home):
    """The issue's machine: bwrap installed, user namespaces off. Before, the code ran on the host as
    the user (reading ~/.ssh) after one warning; now it is refused unless COLLATE_SANDBOX=off."""
    marker = Path(user.pw_dir) / f"ran-{secrets.token_hex(3)}"
    code = f"open({str(marker)!r}, 'w').write('x')\nprint(open({str(home['ssh_key'])!r}).read().strip())"
    cases = [{"name": "steal", "timeout": 10, "code": code}]
    wrapper = [sys.executable, str(HERE / "userns_off.py"), str(user.pw_uid), str(user.pw_gid)]
    how = "sysctl -w user.max_user_namespaces="
    expected_missing = {"filesystem", "network", "pid-namespace", "disk-quota", "process-limit", "own-uid"}

    report, stderr = drive(user, home, {"cases": cases}, wrapper=wrapper)
    refused = report["results"]["steal"]
    assert how in report["problem"]
    assert not marker.exists(), "generated code ran without isolation by default"
    assert refused["limit"] == "isolation" and not refused["ok"] and refused["stdout"] == ""
    assert (
        how in refused["error"]
        and "/etc/sysctl.d" in refused["error"]
        and "COLLATE_SANDBOX=off" in refused["error"]
    )
    assert set(refused["missing_protection"]) == expected_missing and not refused["unisolated"]
    assert report["unisolated_runs"] == 0 and "WITHOUT" not in stderr

    report, stderr = drive(user, home, {"cases": cases}, wrapper=wrapper, env={"COLLATE_SANDBOX": "off"})
    ran = report["results"]["steal"]
    assert marker.exists() and SECRET in ran["stdout"]  # what "off" means: the code is the user
    assert ran["unisolated"] and report["unisolated_runs"] == 1
    assert set(ran["missing_protection"]) == expected_missing
    assert "WITHOUT isolation because COLLATE_SANDBOX=off" in stderr and how in stderr
