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
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import mlflow  # noqa: E402
from mlflow.tracking import MlflowClient  # noqa: E402

from evaluate.tracking.store_check import DEFAULT_STORE_FILE, tracking_uri  # noqa: F401 (tracking.tracking_uri)
from programs.lm import patches  # noqa: E402 (MLflow's private names, with DSPy's)

logger = logging.getLogger(__name__)

DEFAULT_EXPERIMENT = "collate"
# MLflow refuses longer param values; a long one is cut rather than failing the whole run.
MAX_PARAM_CHARS = 6000

# MLflow names, grouped by what they measure: `acc/` sorts first on the compare page and in the column
# picker (both list metrics alphabetically), then answers/, budget/, cascade/, cost/, dev/, facts/, lm/, program/, time/, tokens/.
# Callers log the names of a run summary (final_accuracy, lm_calls_planner, ...); the MLflow names are
# decided here, once. (summary prefix, MLflow prefix): the first rule that matches renames; a name no
# rule matches (autolog's `eval`, ...) is logged as it is.
METRIC_GROUPS = [
    ("final_accuracy", "acc/final"),  # acc/final, acc/final_answered, acc/final_undecided_as_wrong
    ("full_accuracy", "acc/full"),
    # process accuracy: cell accuracy is THE process figure (acc/macro, acc/micro, right after final and
    # full on the compare page); rows and columns sort after them (acc/process_macro_row, ...)
    ("process_macro_cell", "acc/macro"),
    ("process_micro_cell", "acc/micro"),
    ("process_verified_macro_cell", "acc/verified_macro"),
    ("process_verified_micro_cell", "acc/verified_micro"),
    ("process_verified_", "acc/verified_"),  # acc/verified_macro_row, ...
    ("process_", "acc/process_"),  # acc/process_macro_row, acc/process_micro_column, ...
    ("dev_metric", "dev/metric"),  # a compile's score of its saved program on dev, beside its cost
    ("total_tokens", "lm/tokens"),
    ("cost_usd", "cost/usd"),  # cost/usd, cost/usd_<stage>: dollars of the priced calls
    ("cost_", "cost/"),  # cost/unpriced_calls(_<stage>): calls whose model has no known price
    ("tokens_", "tokens/"),  # tokens/in, tokens/out, tokens/in_<stage>, ...
    ("cascade_", "cascade/"),  # cascade/share, cascade/saved_usd, ...: the extraction cascade's figures
    ("max_tokens", "budget/max_tokens"),
    ("max_usd", "budget/max_usd"),
    ("dev_lm_calls", "dev/lm_calls"),
    ("dev_cache_hits", "dev/cache_hits"),
    ("cache_hits", "lm/cache_hits"),
    ("lm_", "lm/"),  # lm/calls, lm/errors, lm/parse_failures, lm/seconds, lm/calls_<stage>, ...
    ("max_calls", "budget/max_calls"),
    ("refused_calls", "budget/refused_calls"),
    ("budget_exhausted", "budget/exhausted"),
    ("stopped_early", "budget/stopped_early"),
    ("needed_calls", "budget/needed_calls"),
    ("facts_", "facts/"),
    ("repair_calls", "facts/repair_calls"),
    ("changed_predictors", "program/changed_predictors"),
    ("demos_added", "program/demos_added"),
    ("seconds", "time/seconds"),
    *(
        (name, f"answers/{name}")
        for name in (
            "n", "answered", "coverage", "correct", "decided", "judged", "undecided",
            "missing", "empty_answers", "failed_answers", "errors",
        )
    ),
]  # fmt: skip

# The figures a comparison is about, as (MLflow metric, label, format, column width in px). MLflow 3.17's
# runs table has no server-side default columns (the choice lives in the browser's local storage); what
# it reads from the store is a saved view: an experiment tag `mlflow.sharedViewState.<key>` listed under
# "Views" and opened by `?viewStateShareKey=<key>`. Every CLI prints that link (ui_command), the
# experiment's description links it, and each run's description (`mlflow.note.content`) repeats the
# figures rounded; the metrics keep full precision. The widths make the whole view fit 1400 px.
HEADLINE = [
    ("acc/final", "final", "{:.3f}", 72),
    ("acc/macro", "process macro", "{:.3f}", 76),
    ("acc/micro", "micro", "{:.3f}", 76),
    ("acc/full", "full", "{:.3f}", 64),
    ("lm/calls", "LM calls", "{:.0f}", 66),
    ("lm/tokens", "tokens", "{:.0f}", 64),
    ("cost/usd", "cost $", "{:.4f}", 64),
    # in the run's description only (0: no column)
    ("dev/metric", "dev metric", "{:.3f}", 0),
    ("lm/errors", "LM errors", "{:.0f}", 0),
    ("lm/parse_failures", "parse failures", "{:.0f}", 0),
    ("time/seconds", "s", "{:.1f}", 0),
]
HEADLINE_TAGS = [("variant", 120), ("split", 44), ("dataset_hash", 64)]
# The columns MLflow always shows, narrowed (the run name carries variant, program hash, split and n).
FIXED_COLUMNS = [("attributes.`Run Name`", 227), ("runDateAndNestInfo", 76), ("duration", 62)]
# Only evaluation runs: a comparison of variants (compile runs and their trials are in the default view).
EVALUATION = {"kind": "evaluation"}
VIEW_KEY = "collate-headline"
VIEW_NAME = "collate: compare variants"


def metric_name(key: str) -> str:
    """The MLflow name of a run-summary figure: final_accuracy -> acc/final, lm_calls_planner -> lm/calls_planner."""
    for prefix, group in METRIC_GROUPS:
        if key == prefix or (key.startswith(prefix) and (prefix.endswith("_") or key[len(prefix)] == "_")):
            return group + key[len(prefix) :]
    return key


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
    tags = found.tags if found is not None else {}
    view = saved_view(created_ms=_view_created(tags.get(patches.mlflow_view_tag(VIEW_KEY))))
    if tags.get(patches.mlflow_view_tag(VIEW_KEY)) != view:
        client.set_experiment_tag(experiment_id, patches.mlflow_view_tag(VIEW_KEY), view)
    if "mlflow.note.content" not in tags:  # the experiment's description: never overwrite a user's own
        client.set_experiment_tag(experiment_id, "mlflow.note.content", experiment_note(experiment_id))
    return experiment_id


def headline_view() -> dict:
    """The runs table for comparing variants: evaluation runs, best final accuracy first; run name, the
    headline metrics, then the tags that say what ran (variant, split, dataset), sized to fit 1400 px."""
    metrics = [(f"metrics.`{m}`", width) for m, _, _, width in HEADLINE if width]
    tags = [(f"tags.`{t}`", width) for t, width in HEADLINE_TAGS]
    columns = FIXED_COLUMNS + metrics + tags
    return {
        "selectedColumns": [column for column, _ in metrics + tags],
        "columnOrder": [column for column, _ in columns],  # MLflow applies widths to ordered columns only
        "columnWidths": dict(columns),
        "orderByKey": "metrics.`acc/final`",
        "orderByAsc": False,
        "searchFilter": " and ".join(f"tags.{k} = '{v}'" for k, v in EVALUATION.items()),
    }


def saved_view(created_ms: int = 0) -> str:
    """The headline view as MLflow 3.17 stores a saved view: {name, createdAt, updatedAt, state (JSON text)}."""
    return json.dumps(
        {
            "name": VIEW_NAME,
            "createdAt": created_ms,
            "updatedAt": created_ms,
            "state": json.dumps(headline_view()),
        }
    )


def _view_created(stored: str | None) -> int:
    """Keep the first save's time, so an unchanged view is not rewritten on every run."""
    try:
        return int(json.loads(stored or "")["createdAt"])
    except (ValueError, KeyError, TypeError):
        return int(time.time() * 1000)


def experiment_note(experiment_id: str) -> str:
    """The experiment's description (shown above its runs): where the comparison view is."""
    return (
        f"Which variant is best: [compare variants]({view_path(experiment_id)}), best final accuracy first "
        f'(also under Views: "{VIEW_NAME}").'
    )


def headline_text(metrics: Mapping[str, Any]) -> str:
    """'final 0.520 · process macro 0.612 · micro 0.640 · LM calls 57 · tokens 12345 · s 41.2', rounded."""
    parts = []
    for key, label, fmt, _ in HEADLINE:
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
        """Run-summary names in, grouped MLflow names out (metric_name); full precision in the metric, the
        headline figures rounded in the run's description."""
        values = {metric_name(k): v for k, v in numeric_metrics(metrics).items()}
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

    def log_dataset(self, name: str, digest: str, context: str, source: str = "") -> None:
        """The questions as an MLflow dataset input (metadata only: the data stays where it is)."""
        from mlflow.data.meta_dataset import MetaDataset
        from mlflow.data.sources import LocalArtifactDatasetSource  # type: ignore[attr-defined]  # mlflow makes it at import

        # MetaDataset leaves Dataset.profile abstract, but Dataset is no ABC: it instantiates (tests/evaluate).
        data = MetaDataset(LocalArtifactDatasetSource(source or name), name=name, digest=digest)  # type: ignore[abstract]
        MlflowClient(tracking_uri()).log_inputs(self.run_id, [_dataset_input(data, context)])

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


def _dataset_input(data, context: str):
    from mlflow.entities import DatasetInput, InputTag
    from mlflow.utils.mlflow_tags import MLFLOW_DATASET_CONTEXT

    return DatasetInput(patches.mlflow_dataset_entity(data), tags=[InputTag(MLFLOW_DATASET_CONTEXT, context)])


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
    dataset: Mapping[str, str] | None = None,
) -> Iterator[TrackedRun]:
    """Open one MLflow run (nested under the active one, if any); it ends FAILED if the body raises.

    dataset: {name, digest, context[, source]}: the questions the run answered, logged as the run's
    dataset input, which the runs table shows in its default Dataset column (name, digest, context =
    the split) even before anyone opens the headline view.
    """
    nested = nested or mlflow.active_run() is not None  # e.g. an evaluation inside a caller's own run
    if not nested:
        use_store(experiment)
    with mlflow.start_run(run_name=run_name, nested=nested) as run:
        handle = TrackedRun(run)
        if params:
            handle.log_params(params)
        if tags:
            handle.set_tags(tags)
        if dataset:
            handle.log_dataset(**dataset)
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
    except KeyboardInterrupt:
        # Not flushed: the export of the queued traces took ~10 s of a Ctrl-C's exit on the demo (40
        # questions); the run ends FAILED and the same command resumes it, tracing it anew.
        mlflow.dspy.autolog(disable=True, silent=True)
        raise
    else:
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
