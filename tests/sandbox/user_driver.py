"""Run attack cases through the sandbox as whoever runs this script (an ordinary user, in the tests).

    python user_driver.py CASES.json     # prints one JSON: {"problem", "controls", "results", "unisolated_runs"}

Stand-alone (standard library + the copied `programs.sandbox` and `signatures.env_flags`): the
test copies it next to a copy of `programs/` in the user's home, because an ordinary user may not read the checkout or its venv.
CASES.json: {"cases": [{"name", "code", "timeout", "limits": {...}}], "read": [paths], "port": N}.
"controls" says what THIS user can do without the sandbox (read those paths, connect to the port),
so that a blocked attack is blocked by the sandbox, not by file permissions.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from dataclasses import asdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from programs.sandbox import Limits, run_code, unisolated_runs  # noqa: E402
from programs.sandbox.isolation import bwrap_problem  # noqa: E402


def controls(spec: dict) -> dict:
    readable = {}
    for path in spec.get("read", []):
        try:
            readable[path] = Path(path).read_text(errors="replace")[:200]
        except OSError as exc:
            readable[path] = f"unreadable: {type(exc).__name__}"
    connected = None
    if spec.get("port"):
        try:
            socket.create_connection(("127.0.0.1", spec["port"]), timeout=2).close()
            connected = True
        except OSError:
            connected = False
    return {"read": readable, "connected": connected, "uid": os.getuid()}


def main() -> int:
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    seen = controls(spec)
    results = {}
    for case in spec["cases"]:
        limits = Limits(**case["limits"]) if case.get("limits") else None
        started = time.monotonic()
        result = asdict(run_code(case["code"], [{"v": 1.0}], timeout=case["timeout"], limits=limits))
        results[case["name"]] = result | {"seconds": round(time.monotonic() - started, 2)}
    report = {"problem": bwrap_problem(), "controls": seen, "results": results}
    print(json.dumps(report | {"unisolated_runs": unisolated_runs()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
