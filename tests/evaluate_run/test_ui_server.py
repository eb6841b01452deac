"""The UI command of docs/evaluation.md serves our store: runs, params, metrics and artifacts over HTTP."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import time
import urllib.request

from mlflow.tracking import MlflowClient

from evaluate import tracking


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Only guards against a server that never comes up: how fast it starts is not this test's business
# (a loaded 2-core CI machine takes far longer than a quiet one; speed is measured in bench/). Below
# pytest-timeout's 300 s so a hang fails with the server's own stderr.
HANG_GUARD_SECONDS = 240.0


def _wait_up(url: str, process: subprocess.Popen, seconds: float = HANG_GUARD_SECONDS) -> None:
    """Poll the server's /health once per half second. Plain urllib, one attempt per poll: the
    MlflowClient retries a refused connection with exponential back-off (minutes), which would
    make each poll as slow as the machine is loaded."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(
                f"mlflow server exited with {process.returncode}: {process.stderr.read()[-2000:]}"
            )
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=10) as reply:
                if reply.status == 200:
                    return
        except OSError:  # refused while starting, or a reset / timeout under load
            pass
        time.sleep(0.5)
    raise AssertionError(f"mlflow server did not come up within {seconds:.0f} s")


def test_the_documented_server_command_shows_our_runs(tmp_path, monkeypatch):
    with tracking.start_run("served", params={"lm": "fake/x"}, experiment="t-served") as run:
        run.log_metrics({"final_accuracy": 0.25})
        run.log_json({"a": 1}, "summary.json")
    port = _free_port()
    monkeypatch.chdir(tmp_path)  # printed in another folder than the project's: typed there as printed
    command = tracking.ui_command(port=port).split("#")[0]
    env_part, _, rest = command.partition(" ")
    assert env_part == "MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false"
    argv = shlex.split(rest)
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    process = subprocess.Popen(
        argv,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_up(url, process)
        client = MlflowClient(url)
        served = client.get_run(run.run_id)
        assert served.data.params["lm"] == "fake/x" and served.data.metrics["acc/final"] == 0.25
        assert "summary.json" in {a.path for a in client.list_artifacts(run.run_id)}
        assert client.get_experiment_by_name("t-served") is not None
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
