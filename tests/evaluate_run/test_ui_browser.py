"""The MLflow UI as a user sees it, in a real headless browser (Debian chromium) 1400 px wide.

Issue 21 part 4: two compiled files both showed as 'compiled:bootstrap n=8', the experiment opened on
a runs table with no metric columns, the process-accuracy columns were off-screen, the compare page
put final_accuracy in an alphabetical scroll box. Here: the headline view shows which variant is best
without scrolling, the default view shows split and dataset, the compare page starts with the headline.

Slow (the server, then a few page loads); run it with
    .venv/bin/python -m pytest -q -p no:cacheprovider -m slow tests/evaluate_run/test_ui_browser.py
It installs chromium with apt-get when it can (root, Debian), else skips. The screenshots stay in the
test's tmp folder (printed), or go to $UI_SCREENSHOTS_DIR when set (the docs' picture).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from mlflow.tracking import MlflowClient

from evaluate import tracking
from evaluate.runs.evaluation import flat_metrics, run_labels, variant_name, variant_tags
from tests.evaluate_run.headless import Browser
from tests.evaluate_run.test_ui_server import _free_port, _wait_up

pytestmark = pytest.mark.slow

WIDTH, HEIGHT = 1400, 900
DATASET_HASH = "4f1e2d3c5b6a7980"
# (program argument, compile sidecar, program hash, final, process macro, process micro, full): the rows
VARIANTS = [
    (None, {}, "a1b2c3d", 0.375, 0.6123456789, 0.65, 0.25),
    (
        "bootstrap-a.json",
        {"optimizer": "bootstrap", "stage": "program"},
        "3f9a1c2",
        0.625,
        0.7012345678,
        0.72,
        0.5,
    ),
    (
        "bootstrap-b.json",
        {"optimizer": "bootstrap", "stage": "program"},
        "9e8d7c6",
        0.5,
        0.6512345678,
        0.66,
        0.375,
    ),
    ("flat-rag", {}, "0c0ffee", 0.125, 0.0, 0.0, 0.0),
]
BEST = "compiled:bootstrap 3f9a1c2 test n=8"
ASSISTANT_CLOSED = {
    "mlflow.assistant.fab.autoOpenedOnFirstLoad_v1": "true",
    "mlflow.assistant.panelOpen_v1": "false",
}

# Where each header and the first row's cells sit: on screen = inside the grid's box and the window.
LAYOUT = r"""(() => {
  const grid = document.querySelector('.ag-root-wrapper').getBoundingClientRect();
  const right = Math.min(grid.right, window.innerWidth);
  const seen = el => { const r = el.getBoundingClientRect();
    return r.width > 0 && r.left >= grid.left - 1 && r.right <= right + 1 && r.bottom <= window.innerHeight; };
  const cells = sel => Object.fromEntries([...document.querySelectorAll(sel)]
    .map(c => [c.getAttribute('col-id'), {text: c.innerText.trim(), seen: seen(c)}]));
  return {headers: cells('.ag-header-cell[col-id]'), first: cells('.ag-row[row-index="0"] .ag-cell[col-id]'),
          text: document.body.innerText};
})()"""


def _log_comparison() -> tuple[str, list[str], str]:
    """A compile (with the trial runs autolog folds under it) and four evaluations, logged as evaluate.run logs them."""
    with tracking.start_run(
        "compile bootstrap (program) -> 3f9a1c2", tags={"kind": "compile"}
    ) as compile_run:
        compile_run.log_metrics({"dev_metric": 0.52, "lm_calls": 300})
        for step in range(3):
            with tracking.start_run(f"eval_full_{step}") as trial:
                trial.log_metrics({"eval": 0.1 * step})
    run_ids = []
    for program, origin, state_hash, final, macro, micro, full in VARIANTS:
        origin = {**origin, "mlflow_run_id": compile_run.run_id} if origin else {}
        variant = variant_name(program, origin)
        name, tags, dataset = run_labels(variant, state_hash, DATASET_HASH, "test", 8, "demo/dataset.json")
        summary = {
            "final_accuracy": final,
            "process_macro": {"cell": macro, "row": macro / 2},
            "process_micro": {"cell": micro, "row": micro / 2},
            "full_accuracy": full,
            "lm_calls": 57,
            "total_tokens": 12345,
            "seconds": 41.2,
            "n": 8,
        }
        with tracking.start_run(
            name,
            params={"lm": "fake/x", "k": 5},
            tags={**tags, **variant_tags(program, origin)},
            dataset=dataset,
        ) as run:
            run.log_metrics(flat_metrics(summary))
        run_ids.append(run.run_id)
    experiment = MlflowClient(tracking.tracking_uri()).get_run(run_ids[0]).info.experiment_id
    return experiment, run_ids, compile_run.run_id


def _serve(folder: Path) -> subprocess.Popen:
    port = _free_port()
    argv = [
        str(Path(sys.executable).with_name("mlflow")),
        *("server", "--host", "127.0.0.1", "--port", str(port)),
        *("--backend-store-uri", tracking.tracking_uri(), "--workers", "1"),
    ]
    server = subprocess.Popen(
        argv,
        cwd=folder,
        env={**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    server.url = f"http://127.0.0.1:{port}"
    try:
        _wait_up(server.url, server)
    except AssertionError:
        os.killpg(server.pid, signal.SIGTERM)
        raise
    return server


def _layout(browser: Browser, url: str, local_storage: dict | None = None) -> dict:
    if local_storage:  # as a returning user left it: set on the site's origin, then load the page
        browser.open(url.split("#")[0])
        browser.wait_for("document.readyState === 'complete'", "the MLflow page")
        for key, value in local_storage.items():
            browser.run(f"localStorage.setItem({json.dumps(key)}, {json.dumps(value)})")
    browser.open("about:blank")  # a new document: the app keeps no state from the page before
    browser.open(url)
    browser.wait_for("document.querySelectorAll('.ag-row[row-index=\"0\"] .ag-cell[col-id]').length", "runs")
    return browser.run(LAYOUT)


def _keep(png: Path) -> Path:
    wanted = os.environ.get("UI_SCREENSHOTS_DIR")
    if wanted:
        shutil.copy(png, Path(wanted) / png.name)
    return png


def test_the_best_variant_is_visible_at_1400_px_without_scrolling(tmp_path):
    experiment, run_ids, compile_id = _log_comparison()
    server = _serve(tmp_path)
    try:
        view = server.url + tracking.view_path(experiment)
        with Browser(WIDTH, HEIGHT) as browser:
            # A first visit: MLflow opens its assistant panel beside the table (~350 px of the 1400).
            first = _layout(browser, view)
            browser.screenshot(tmp_path / "mlflow_view_first_visit.png")
            # A returning user who closed it: the whole view.
            closed = _layout(browser, view, ASSISTANT_CLOSED)
            _keep(browser.screenshot(tmp_path / "mlflow_view.png"))
            default = _layout(browser, f"{server.url}/#/experiments/{experiment}/runs")
            ids = ",".join(f'"{r}"' for r in run_ids)
            browser.open(f'{server.url}/#/compare-runs?runs=[{ids}]&experiments=["{experiment}"]')
            compare = browser.wait_for(
                "document.body.innerText.includes('acc/final') && document.body.innerText", "the compare page"
            )
            browser.screenshot(tmp_path / "compare.png")
        print(f"screenshots in {tmp_path}")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)

    # Best final accuracy first, the compile's trials not among the rows, and on the first visit (assistant
    # open) the best row's name, final, process macro/micro and full accuracy on screen.
    assert BEST in first["first"]["attributes.`Run Name`"]["text"]
    assert "eval_full_0" not in first["text"] and "compile bootstrap" not in first["text"]
    for column in (
        "attributes.`Run Name`",
        "metrics.`acc/final`",
        "metrics.`acc/macro`",
        "metrics.`acc/micro`",
    ):
        assert first["first"][column]["seen"], (column, first["first"])
    assert first["first"]["metrics.`acc/final`"]["text"] == "0.625"
    # Assistant closed: every column of the view on screen, headers and the best row's values alike.
    wanted = [c for c in tracking.headline_view()["columnOrder"]]
    assert all(closed["headers"][c]["seen"] for c in wanted), {c: closed["headers"].get(c) for c in wanted}
    row = {c: closed["first"][c]["text"] for c in wanted if c.startswith(("metrics.", "tags."))}
    assert row == {
        "metrics.`acc/final`": "0.625",
        "metrics.`acc/macro`": "0.7012345678",  # full precision (the column cuts it: 0.70123…)
        "metrics.`acc/micro`": "0.72",
        "metrics.`acc/full`": "0.5",
        "metrics.`lm/calls`": "57",
        "metrics.`lm/tokens`": "12345",
        "tags.`variant`": "compiled:bootstrap",
        "tags.`split`": "test",
        "tags.`dataset_hash`": DATASET_HASH,
    }
    # The two bootstrap files are two rows, told apart by their hash.
    assert "compiled:bootstrap 9e8d7c6 test n=8" in closed["text"]

    # The view MLflow opens by default still says split and dataset (the Dataset column), and links the view.
    assert f"dataset.json ({DATASET_HASH[:8]})" in default["text"] and "Test" in default["text"]
    assert "compare variants" in default["text"]

    # The compare page: the four rows by name, the compile they came from, the headline metrics first.
    assert "Comparing 4 Runs" in compare, compare[:2000]
    assert compile_id in compare  # the compiled rows name their compile (tag compiled_from)
    metrics = compare[compare.index("Metrics") :]
    assert metrics.index("acc/final") < metrics.index("acc/macro") < metrics.index("answers/n")
    assert "0.701" in compare and "0.7012345678" not in compare  # rounded on the page
    assert (tmp_path / "mlflow_view.png").stat().st_size > 10_000
