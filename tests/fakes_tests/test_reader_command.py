"""`collate reader`: the demo reader in the foreground on 127.0.0.1, with the settings to export."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

from collate import reader

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_it_serves_until_ctrl_c_and_prints_the_three_settings():
    port = free_port()
    child = subprocess.Popen(
        [sys.executable, "-m", "collate", "reader", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        lines = [child.stdout.readline() for _ in range(5)]
        assert "not a language model" in lines[0]
        exports = dict(line.removeprefix("export ").strip().split("=", 1) for line in lines[2:])
        assert exports == {
            "COLLATE_LM": "openai/collate-reader",
            "COLLATE_API_BASE": f"http://127.0.0.1:{port}/v1",
            "COLLATE_API_KEY": "none",
        }
        with urllib.request.urlopen(f"{exports['COLLATE_API_BASE']}/models", timeout=10) as response:
            assert json.load(response)["data"][0]["id"] == "collate-reader"
    finally:
        child.send_signal(signal.SIGINT)
        code = child.wait(timeout=30)
    assert code == 0 and "stopped after" in child.stderr.read()


def test_a_port_in_use_is_named_with_the_fix(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert reader.main(["--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err and "pick another --port" in err
