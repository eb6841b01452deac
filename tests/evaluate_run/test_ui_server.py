"""The UI command of docs/evaluation.md serves our store: runs, params, metrics and artifacts over HTTP."""

from __future__ import annotations

import os
import shlex
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from mlflow.tracking import MlflowClient

from evaluate import tracking


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_up(client: MlflowClient, process: subprocess.Popen, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(
                f"mlflow server exited with {process.returncode}: {process.stderr.read()[-2000:]}"
            )
        try:
            client.search_experiments()
            return
        except Exception:
            time.sleep(0.5)
    raise AssertionError("mlflow server did not come up within a minute")


def test_the_documented_server_command_shows_our_runs(tmp_path):
    with tracking.start_run("served", params={"lm": "fake/x"}, experiment="t-served") as run:
        run.log_metrics({"final_accuracy": 0.25})
        run.log_json({"a": 1}, "summary.json")
    port = _free_port()
    command = tracking.ui_command(port=port).split("#")[0]
    env_part, _, rest = command.partition(" ")
    assert env_part == "MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false"
    argv = shlex.split(rest)
    argv[0] = str(Path(sys.executable).with_name("mlflow"))  # the .venv's mlflow, wherever the test runs from
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    started = time.monotonic()
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
        client = MlflowClient(f"http://127.0.0.1:{port}")
        _wait_up(client, process)
        up_seconds = time.monotonic() - started
        served = client.get_run(run.run_id)
        assert served.data.params["lm"] == "fake/x" and served.data.metrics["final_accuracy"] == 0.25
        assert "summary.json" in {a.path for a in client.list_artifacts(run.run_id)}
        assert client.get_experiment_by_name("t-served") is not None
        assert up_seconds < 60
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
