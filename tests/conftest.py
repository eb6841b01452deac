"""Test-wide guards: no real LM, no network beyond loopback, fresh DSPy state, a throwaway MLflow store.

Allowed LMs in tests: dspy.utils.DummyLM, a dspy.LM with a custom (rule-based) engine, or a dspy.LM
whose api_base points at a fake server on 127.0.0.1 (fakes/). Anything else fails loudly.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import urlparse

# Before any project or library import: these are read at import time.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# A user's real LM settings must never leak into a test run (COLLATE_REALDOCS only says where the real
# filings are: tests that read them skip without it).
for _name in list(os.environ):
    if (_name.startswith("COLLATE_") and _name != "COLLATE_REALDOCS") or _name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_API_BASE",
    ):
        del os.environ[_name]

import signal  # noqa: E402

# A suite started in the background (`cmd &`, nohup, some CI runners) inherits SIGINT ignored, and every
# subprocess it starts inherits that too: Python then installs no KeyboardInterrupt handler, and the tests
# that press Ctrl-C on a command wait 30 s for nothing (4 failures seen 2026-12-06). Handled, not ignored,
# SIGINT reaches each subprocess as default again (exec resets handlers), as a terminal's Ctrl-C would.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

import dspy  # noqa: E402
import dspy.clients.execution as _execution  # noqa: E402
import pytest  # noqa: E402
from dspy.utils.dummies import DummyLM  # noqa: E402

LOOPBACK = ("127.", "::1", "localhost")
HOW_TO_FAKE = (
    "Tests must never call a real LM. Use dspy.utils.DummyLM (dict mode), a rule-based engine "
    "(dspy.LM('fake/x', engine=..., cache=False)), or the fake OpenAI-compatible server in "
    "fakes/ on 127.0.0.1."
)


def _is_loopback(host: str | None) -> bool:
    return bool(host) and str(host).startswith(LOOPBACK)


def _lm_is_fake(lm) -> bool:
    if isinstance(lm, DummyLM):
        return True
    if not isinstance(getattr(lm, "engine", "auto"), str):
        return True  # custom engine object: a rule-based fake
    base = (getattr(lm, "kwargs", {}) or {}).get("api_base") or (getattr(lm, "kwargs", {}) or {}).get(
        "base_url"
    )
    return bool(base) and _is_loopback(urlparse(base).hostname)


_real_execute, _real_aexecute = _execution.execute, _execution.aexecute


def _guarded_execute(lm, call):
    if not _lm_is_fake(lm):
        raise RuntimeError(
            f"Real LM call attempted in a test (model={getattr(lm, 'model', lm)!r}). {HOW_TO_FAKE}"
        )
    return _real_execute(lm, call)


async def _guarded_aexecute(lm, call):
    if not _lm_is_fake(lm):
        raise RuntimeError(
            f"Real LM call attempted in a test (model={getattr(lm, 'model', lm)!r}). {HOW_TO_FAKE}"
        )
    return await _real_aexecute(lm, call)


_execution.execute, _execution.aexecute = _guarded_execute, _guarded_aexecute

_real_connect = socket.socket.connect


def _loopback_only_connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0] if isinstance(address, tuple) else address
        if not _is_loopback(host):
            raise RuntimeError(f"Network access to {address!r} attempted in a test. {HOW_TO_FAKE}")
    return _real_connect(self, address)


socket.socket.connect = _loopback_only_connect


@pytest.fixture(scope="session")
def mlflow_store(tmp_path_factory) -> str:
    """One sqlite MLflow store for the session (creating one costs seconds of migrations)."""
    return f"sqlite:///{tmp_path_factory.mktemp('mlflow') / 'mlflow.db'}"


@pytest.fixture(autouse=True)
def _fresh_dspy_and_mlflow(monkeypatch, mlflow_store, tmp_path):
    """Every test starts with no LM configured, no cache, a strict ChatAdapter and a test MLflow store."""
    monkeypatch.setenv("MLFLOW_TRACKING_URI", mlflow_store)
    monkeypatch.setenv("DSPY_CACHEDIR", str(tmp_path / "dspy_cache"))
    dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
    dspy.configure(lm=None, adapter=dspy.ChatAdapter(use_json_adapter_fallback=False), track_usage=False)
    yield
    dspy.configure(lm=None, adapter=None)


@pytest.fixture(scope="session")
def small_corpus(tmp_path_factory):
    """(corpus dir, index dir) of a small synthetic corpus: 3 companies, 2 fiscal years, 5-page filings.

    Built once per session (~10 s) with the project's own CLIs, shared by every end-to-end folder."""
    from fakes.corpus import build_corpus

    folder = tmp_path_factory.getbasetemp() / "small_corpus"
    folder.mkdir(exist_ok=True)
    return build_corpus(folder, "--companies", "3", "--years", "2021", "2022", "--pages", "5", "--seed", "3")


@pytest.fixture
def brain_server(monkeypatch):
    """The rule-based fake LM behind a real OpenAI-compatible HTTP endpoint, with COLLATE_* pointing at it."""
    from fakes.brain import Brain
    from fakes.server import FakeLMServer

    with FakeLMServer(Brain()) as server:
        for name, value in server.env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("COLLATE_CACHE", "false")
        yield server


def mount_tmpfs(folder, options: str):
    """A real tmpfs at `folder` (read-only or tiny: the disk-full and read-only cases), or a skip where
    mounting is not permitted; returns an unmount function."""
    import subprocess

    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    return lambda: subprocess.run(["umount", str(folder)], check=False)
