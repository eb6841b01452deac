"""A headless Debian chromium driven over the DevTools protocol: open a page, ask it where things are, screenshot it.

Why not `chromium --dump-dom`: the MLflow runs table renders only the columns in view (AG Grid), so
whether a column is "on screen" can only be answered by the page's own layout (getBoundingClientRect),
at a given window width. aiohttp (an mlflow dependency) speaks the WebSocket.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

HANG_GUARD_SECONDS = 120.0  # a browser that never answers fails the test instead of hanging it


def chromium() -> str:
    """The Debian chromium binary; installed when missing and possible (root with apt-get), else skip."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(
            ["apt-get", "install", "-y", "-q", "chromium"], capture_output=True, timeout=900, check=False
        )
        found = shutil.which("chromium")
    if not found:
        pytest.skip("no chromium (Debian: apt-get install -y chromium)")
    return found


class Browser:
    """One headless chromium with one page; `with Browser(width, height) as b: b.open(url); b.run(js)`."""

    def __init__(self, width: int, height: int):
        self.width, self.height = width, height
        self.profile = Path(tempfile.mkdtemp(prefix="chromium-profile-"))
        self.process: subprocess.Popen | None = None
        self.loop = asyncio.new_event_loop()
        self.session = self.socket = None
        self.next_id = 0

    def __enter__(self) -> Browser:
        try:
            import aiohttp  # noqa: F401
        except ImportError:
            pytest.skip("aiohttp (an mlflow dependency) is needed to drive chromium")
        self.process = subprocess.Popen(
            [
                chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--hide-scrollbars",
                "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}",
                f"--window-size={self.width},{self.height}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        port = self._port()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=30) as reply:
            pages = [t for t in json.load(reply) if t.get("type") == "page"]
        self.loop.run_until_complete(self._connect(pages[0]["webSocketDebuggerUrl"]))
        self.send(
            "Emulation.setDeviceMetricsOverride",
            width=self.width,
            height=self.height,
            deviceScaleFactor=1,
            mobile=False,
        )
        return self

    def __exit__(self, *exc) -> None:
        if self.session is not None:
            self.loop.run_until_complete(self.session.close())
        self.loop.close()
        if self.process is not None:
            os.killpg(self.process.pid, signal.SIGTERM)
            self.process.wait(timeout=30)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _port(self) -> int:
        marker = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + HANG_GUARD_SECONDS
        while time.monotonic() < deadline:
            if marker.is_file() and marker.read_text().strip():
                return int(marker.read_text().split()[0])
            if self.process.poll() is not None:
                raise AssertionError(f"chromium exited with {self.process.returncode}")
            time.sleep(0.2)
        raise AssertionError("chromium opened no DevTools port")

    async def _connect(self, url: str) -> None:
        import aiohttp

        self.session = aiohttp.ClientSession()
        self.socket = await self.session.ws_connect(url, max_msg_size=0)

    async def _call(self, method: str, params: dict) -> dict:
        self.next_id += 1
        call_id = self.next_id
        await self.socket.send_json({"id": call_id, "method": method, "params": params})
        while True:
            message = await asyncio.wait_for(self.socket.receive_json(), HANG_GUARD_SECONDS)
            if message.get("id") == call_id:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return message.get("result", {})

    def send(self, method: str, **params) -> dict:
        return self.loop.run_until_complete(self._call(method, params))

    def open(self, url: str) -> None:
        self.send("Page.navigate", url=url)

    def run(self, expression: str):
        """The value of a JavaScript expression in the page (awaited when it is a promise)."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"page script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def wait_for(self, expression: str, what: str, seconds: float = HANG_GUARD_SECONDS):
        """Poll a JavaScript expression until it is truthy; its value. Only a hang guard, not a timing."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            value = self.run(expression)
            if value:
                return value
            time.sleep(0.5)
        raise AssertionError(f"the page never showed {what}")

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path
