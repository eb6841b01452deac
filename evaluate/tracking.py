"""MLflow tracking for runs and compiles: THE only module in the repo that imports mlflow.

Why one module: the store location, the experiment, the artifact folder and DSPy autologging are
decided once here, so an evaluation, a compile and the demo all land side by side in the same UI.
The store is the local SQLite file `mlflow.db` unless MLFLOW_TRACKING_URI says otherwise; artifacts
go next to that file (never a `./mlruns` folder in whatever directory the user happens to be in).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

# Read when mlflow is imported: no telemetry calls from a machine that may have no network.
os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")

import mlflow  # noqa: E402
from mlflow.tracking import MlflowClient  # noqa: E402

logger = logging.getLogger(__name__)

DEFAULT_EXPERIMENT = "collate"
DEFAULT_STORE_FILE = "mlflow.db"
# MLflow refuses longer param values; a long one is cut rather than failing the whole run.
MAX_PARAM_CHARS = 6000

# The figures a comparison is about, as (metric, label, format). MLflow 3.17's runs table has no
# server-side default columns (the column choice lives in the browser); what it does read from the
# store is a "shared view": an experiment tag `mlflow.sharedViewState.<key>` opened with
# `?viewStateShareKey=<key>`. Every CLI prints that link (ui_command), and each run's description
# (`mlflow.note.content`) repeats the figures rounded; the metrics keep full precision.
HEADLINE = [
    ("final_accuracy", "final", "{:.3f}"),
    ("process_macro_cell", "process macro", "{:.3f}"),
    ("process_micro_cell", "micro", "{:.3f}"),
    ("lm_calls", "LM calls", "{:.0f}"),
    # what went wrong on the wire and in the adapter (per stage: lm_errors_<stage>, lm_parse_failures_<stage>)
    ("lm_errors", "LM errors", "{:.0f}"),
    ("lm_parse_failures", "parse failures", "{:.0f}"),
    ("total_tokens", "tokens", "{:.0f}"),
    ("cost_usd", "cost $", "{:.4f}"),
    ("seconds", "s", "{:.1f}"),
    ("dev_metric", "dev metric", "{:.3f}"),
]
HEADLINE_TAGS = ["variant", "optimizer", "stage", "compiled_from"]
VIEW_KEY = "collate-headline"


def tracking_uri() -> str:
    """The store runs go to: MLFLOW_TRACKING_URI, else sqlite:///<cwd>/mlflow.db (absolute, so it is printable)."""
    uri = os.environ.get("MLFLOW_TRACKING_URI")
    if uri:
        return uri
    return f"sqlite:///{Path.cwd() / DEFAULT_STORE_FILE}"


def _artifact_root(uri: str) -> str | None:
    """Artifacts of a SQLite store live next to the .db file; for a server, the server decides."""
    if uri.startswith("sqlite:///"):
        db_path = Path(uri[len("sqlite:///") :])
        return (db_path.parent / "mlartifacts").resolve().as_uri()
    return None


def use_store(experiment: str = DEFAULT_EXPERIMENT) -> str:
    """Point mlflow at the configured store and experiment (created on first use). Returns the experiment id."""
    uri = tracking_uri()
    mlflow.set_tracking_uri(uri)
    client = MlflowClient(uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        experiment_id = client.create_experiment(experiment, artifact_location=_artifact_root(uri))
    else:
        experiment_id = found.experiment_id
    mlflow.set_experiment(experiment_id=experiment_id)
    client.set_experiment_tag(
        experiment_id, f"mlflow.sharedViewState.{VIEW_KEY}", json.dumps(headline_view())
    )
    return experiment_id


def headline_view() -> dict:
    """The runs table with the variant tags and headline metrics as columns, newest first (see HEADLINE)."""
    columns = ["attributes.`Description`"] + [f"tags.`{t}`" for t in HEADLINE_TAGS]  # Description: rounded
    return {
        "selectedColumns": columns + [f"metrics.`{m}`" for m, _, _ in HEADLINE],
        "orderByKey": "attributes.start_time",
        "orderByAsc": False,
    }


def headline_text(metrics: Mapping[str, Any]) -> str:
    """'final 0.520 · process macro 0.612 · micro 0.640 · LM calls 57 · tokens 12345 · s 41.2', rounded."""
    parts = []
    for key, label, fmt in HEADLINE:
        value = metrics.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            parts.append(f"{label} {fmt.format(value)}")
    return " · ".join(parts)


def flat_params(params: Mapping[str, Any]) -> dict[str, str]:
    """Params as MLflow wants them: strings, None as '', over-long values cut with a marker."""
    flat = {}
    for key, value in params.items():
        if isinstance(value, (dict, list, tuple)):
            text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
        else:
            text = "" if value is None else str(value)
        if len(text) > MAX_PARAM_CHARS:
            text = text[: MAX_PARAM_CHARS - 20] + "...[truncated]"
        flat[str(key)] = text
    return flat


def numeric_metrics(metrics: Mapping[str, Any]) -> dict[str, float]:
    """Keep what MLflow can plot: numbers and booleans; None (an undecided score) is left out."""
    return {key: float(value) for key, value in metrics.items() if isinstance(value, (bool, int, float))}


class TrackedRun:
    """Handle on the active MLflow run; every method logs into that run only."""

    def __init__(self, run: mlflow.ActiveRun):
        self.run_id: str = run.info.run_id
        self.experiment_id: str = run.info.experiment_id

    def log_params(self, params: Mapping[str, Any], prefix: str = "") -> None:
        mlflow.log_params({prefix + k: v for k, v in flat_params(params).items()}, run_id=self.run_id)

    def log_metrics(self, metrics: Mapping[str, Any], step: int | None = None) -> None:
        """Full precision in the metric; the headline figures, rounded, become the run's description."""
        values = numeric_metrics(metrics)
        if values:
            mlflow.log_metrics(values, step=step, run_id=self.run_id)
        headline = headline_text(values)
        if headline and step is None:
            MlflowClient(tracking_uri()).set_tag(self.run_id, "mlflow.note.content", headline)

    def set_tags(self, tags: Mapping[str, Any]) -> None:
        client = MlflowClient(tracking_uri())
        for key, value in flat_params(tags).items():
            client.set_tag(
                self.run_id, key, value
            )  # this run's, whichever run is active (autolog opens children)

    def log_table(self, rows: list[dict[str, Any]], artifact_file: str = "per_question.json") -> None:
        """One row per question; nested values are JSON text so every column has one type."""
        if not rows:
            return
        columns: list[str] = []
        for row in rows:
            columns.extend(c for c in row if c not in columns)
        table = {c: [_cell(row.get(c)) for row in rows] for c in columns}
        mlflow.log_table(data=table, artifact_file=artifact_file, run_id=self.run_id)

    def log_json(self, obj: Any, artifact_file: str) -> None:
        mlflow.log_text(
            json.dumps(obj, ensure_ascii=False, indent=2, default=str), artifact_file, run_id=self.run_id
        )

    def log_artifact(self, path: str | os.PathLike, artifact_path: str | None = None) -> None:
        mlflow.log_artifact(str(path), artifact_path=artifact_path, run_id=self.run_id)

    def log_program(self, program: Any, artifact_file: str = "program/state.json") -> None:
        """The program's state (demos + instructions per predictor) as JSON; never a pickle."""
        try:
            state = program.dump_state()
        except Exception as exc:  # a program that cannot dump its state must not sink the run
            logger.warning("could not dump the program state: %s", exc)
            return
        self.log_json(state, artifact_file)


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


@contextlib.contextmanager
def start_run(
    run_name: str,
    params: Mapping[str, Any] | None = None,
    tags: Mapping[str, Any] | None = None,
    experiment: str = DEFAULT_EXPERIMENT,
    nested: bool = False,
) -> Iterator[TrackedRun]:
    """Open one MLflow run (nested under the active one, if any); it ends FAILED if the body raises."""
    nested = nested or mlflow.active_run() is not None  # e.g. an evaluation inside a caller's own run
    if not nested:
        use_store(experiment)
    with mlflow.start_run(run_name=run_name, nested=nested) as run:
        handle = TrackedRun(run)
        if params:
            handle.log_params(params)
        if tags:
            handle.set_tags(tags)
        yield handle


def mark_failed(run_id: str, reason: str) -> None:
    """End a run that has closed as FAILED, saying why in its `failure` tag: a run whose every question
    failed (a dead LM) must not look like a finished one in the runs table."""
    client = MlflowClient(tracking_uri())
    client.set_tag(run_id, "failure", flat_params({"r": reason})["r"])
    client.set_terminated(run_id, status="FAILED")


@contextlib.contextmanager
def dspy_autolog(enabled: bool = True) -> Iterator[None]:
    """Trace every module and LM call (and an optimizer's compile as parent + child runs) while inside.

    Switched off again on exit: autolog installs a global DSPy callback, and leaving it on would
    make every later DSPy call in the process write traces.
    """
    if not enabled:
        yield
        return
    mlflow.dspy.autolog(log_compiles=True, log_evals=True, silent=True)
    try:
        yield
    finally:
        mlflow.dspy.autolog(disable=True, silent=True)
        # Traces are exported by a background queue: flush so they are in the store when the run ends.
        mlflow.flush_trace_async_logging()


def runs(experiment: str = DEFAULT_EXPERIMENT) -> list[Any]:
    """Every run of the experiment on the configured store, newest first (for reports and tests)."""
    uri = tracking_uri()
    client = MlflowClient(uri)
    found = client.get_experiment_by_name(experiment)
    if found is None:
        return []
    return client.search_runs([found.experiment_id], order_by=["attributes.start_time DESC"])


def experiment_id(experiment: str = DEFAULT_EXPERIMENT) -> str | None:
    found = MlflowClient(tracking_uri()).get_experiment_by_name(experiment)
    return found.experiment_id if found else None


def view_path(experiment_id: str) -> str:
    """The UI path of the experiment's headline view (the runs table with the comparison's columns)."""
    return f"/#/experiments/{experiment_id}/runs?viewStateShareKey={VIEW_KEY}"


def ui_command(uri: str | None = None, port: int = 5000, experiment_id: str | None = None) -> str:
    """The command that opens the UI on this store in seconds (a single-worker server, no job runner)."""
    uri = uri or tracking_uri()
    page = view_path(experiment_id) if experiment_id else ""
    if urlparse(uri).scheme in ("http", "https"):
        return f"open {uri.rstrip('/')}{page} in a browser"
    return (
        f"MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false .venv/bin/mlflow server --host 127.0.0.1 --port {port} "
        f"--backend-store-uri {uri} --workers 1   # then open http://127.0.0.1:{port}{page}"
    )
