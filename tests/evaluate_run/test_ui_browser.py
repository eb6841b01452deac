"""The MLflow UI as a user sees it, in a real headless browser (Debian chromium): the headline view and compare page.

Slow (~30 s: the server, then two page loads); run it with
    PYTHONPATH=$PWD .venv/bin/python -m pytest -q -p no:cacheprovider -m slow tests/evaluate_run/test_ui_browser.py
It installs chromium with apt-get when it can (root, Debian), else skips. The PNGs stay in the test's
tmp folder (printed) for a human to look at.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from evaluate import tracking
from evaluate.evaluation import variant_name, variant_tags
from tests.evaluate_run.test_ui_server import _free_port, _wait_up

pytestmark = pytest.mark.slow

# (program argument, compile sidecar, final accuracy): the three rows of a comparison
VARIANTS = [
    (None, {}, 0.4123456789),
    ("compiled.json", {"optimizer": "mipro", "stage": "program"}, 0.5234567891),
    ("flat-rag", {}, 0.2512345678),
]


def chromium() -> str:
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


def page_text(browser: str, url: str, png: Path) -> str:
    """The rendered page's visible text (scripts and styles dropped), and a screenshot of it in `png`."""
    flags = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1800,1100",
        "--virtual-time-budget=20000",
    ]
    dom = subprocess.run([*flags, "--dump-dom", url], capture_output=True, text=True, timeout=180).stdout
    subprocess.run([*flags, f"--screenshot={png}", url], capture_output=True, timeout=180, check=False)
    dom = re.sub(r"<(script|style|svg)\b.*?</\1>", " ", dom, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " | ", dom)))


def test_the_compare_page_shows_the_variants_and_their_rounded_accuracy(tmp_path):
    browser = chromium()
    with tracking.start_run(
        "compile mipro (program)", tags={"kind": "compile", "optimizer": "mipro"}
    ) as compile_run:
        compile_run.log_metrics({"dev_metric": 0.52, "lm_calls": 300})
        for step in range(3):  # what autolog logs for an optimizer's trials: child runs of the compile
            with tracking.start_run(f"eval_full_{step}") as trial:
                trial.log_metrics({"eval": 0.1 * step})
    run_ids, names = [], []
    for program, origin, accuracy in VARIANTS:
        origin = {**origin, "mlflow_run_id": compile_run.run_id} if origin else {}
        variant = variant_name(program, origin)
        with tracking.start_run(
            f"{variant} n=10", tags={"variant": variant, **variant_tags(program, origin)}
        ) as run:
            run.log_metrics(
                {
                    "final_accuracy": accuracy,
                    "process_macro_cell": 0.6,
                    "process_micro_cell": 0.65,
                    "total_tokens": 12345,
                    "seconds": 41.2,
                }
            )
        run_ids.append(run.run_id)
        names.append(variant)
    assert names == ["uncompiled", "compiled:mipro", "flat-rag"]
    experiment = MlflowClient(tracking.tracking_uri()).get_run(run_ids[0]).info.experiment_id

    port = _free_port()
    argv = [
        str(Path(sys.executable).with_name("mlflow")),
        "server",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--backend-store-uri",
        tracking.tracking_uri(),
        "--workers",
        "1",
    ]
    env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}
    server = subprocess.Popen(
        argv,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _wait_up(MlflowClient(f"http://127.0.0.1:{port}"), server)
        base = f"http://127.0.0.1:{port}"
        ids = ",".join(f'"{r}"' for r in run_ids)
        started = time.monotonic()
        compare = page_text(
            browser,
            f'{base}/#/compare-runs?runs=[{ids}]&experiments=["{experiment}"]',
            tmp_path / "compare.png",
        )
        view = page_text(browser, base + tracking.view_path(experiment), tmp_path / "runs.png")
        print(
            f"screenshots: {tmp_path / 'compare.png'} {tmp_path / 'runs.png'} ({time.monotonic() - started:.0f} s)"
        )
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)

    assert "Comparing 3 Runs" in compare, compare[:2000]
    for name in names:
        assert f"{name} n=10" in compare
    assert (
        compile_run.run_id in compare
    )  # the compiled row names the compile it came from (tag compiled_from)
    for _, _, accuracy in VARIANTS:
        assert f"{accuracy:.3f}" in compare and str(accuracy) not in compare  # shown rounded
    assert (tmp_path / "compare.png").stat().st_size > 10_000

    # The headline view: the comparison's metric columns without picking them; trials folded under the compile.
    assert "You're viewing a shared view" in view, view[:2000]
    for column in ("final_accuracy", "process_macro_cell", "lm_calls"):
        assert column in view
    assert "compile mipro (program)" in view and all(f"{n} n=10" in view for n in names)
    assert "eval_full_0" not in view, "the optimizer's trial runs crowd the runs list"
