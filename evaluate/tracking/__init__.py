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
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import mlflow  # noqa: E402
from mlflow.tracking import MlflowClient  # noqa: E402

from evaluate.tracking.store_check import DEFAULT_STORE_FILE, tracking_uri  # noqa: F401 (tracking.tracking_uri)
from programs.lm import patches  # noqa: E402 (MLflow's private names, with DSPy's)
from signatures.errors import CollateError

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
    ("before_lm_calls", "dev/before_lm_calls"),  # the starting program's dev scoring (the score before)
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
# The dataset and split are the rows' group (COMPARE_ON), not columns; cost_note says why a cost is empty.
HEADLINE_TAGS = [("variant", 120), ("cost_note", 108)]
# Runs over different questions are no comparison (issue 31: the demo's 10 questions at 0.6 ranked above
# the test split's 8 at 0.25): the view groups evaluation runs by this tag, 'test 4f1e2d3c dataset.json'
# (file, question-set hash, split), each group best first, its header showing the group's best figures.
COMPARE_ON = "compare_on"
# The columns MLflow always shows, narrowed (the run name carries variant, program hash, split and n).
FIXED_COLUMNS = [("attributes.`Run Name`", 227), ("runDateAndNestInfo", 76), ("duration", 62)]
# Only evaluation runs: a comparison of variants (compile runs and their trials are in the default view).
EVALUATION = {"kind": "evaluation"}
VIEW_KEY = "collate-headline"
EXPERIMENT_KIND = "mlflow.experimentKind"
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
    if EXPERIMENT_KIND not in tags:  # a user's own choice (the UI's selector) is kept
        # Without it the UI infers "GenAI" from the question traces and opens an overview of them, not the
        # runs and models the comparison is about (issue 31); the traces keep their own tab.
        client.set_experiment_tag(experiment_id, EXPERIMENT_KIND, "custom_model_development")
    note = tags.get("mlflow.note.content")
    if note is None or note in _older_notes(experiment_id):  # the description: never overwrite a user's own
        client.set_experiment_tag(experiment_id, "mlflow.note.content", experiment_note(experiment_id))
    return experiment_id


def headline_view() -> dict:
    """The runs table for comparing variants: evaluation runs grouped by the questions they answered
    (dataset and split), best final accuracy first; run name, the headline metrics, the variant and why a
    cost is unknown, sized to fit 1400 px."""
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
        "groupBy": {"aggregateFunction": "max", "groupByKeys": [{"mode": "tag", "groupByData": COMPARE_ON}]},
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
    """The experiment's description (shown above its runs and its models): where the comparison view and
    the programs' scores are."""
    return (
        f"Which variant is best: [compare variants]({view_path(experiment_id)}), best final accuracy first "
        f'(also under Views: "{VIEW_NAME}"); each program\'s scores per dataset: '
        f"[programs]({models_path(experiment_id)})."
    )


def _older_notes(experiment_id: str) -> set[str]:
    """Descriptions this module wrote before (replaced by the current one; a user's own is never touched)."""
    return {
        f"Which variant is best: [compare variants]({view_path(experiment_id)}), best final accuracy first "
        f'(also under Views: "{VIEW_NAME}").'
    }


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
    """Handle on one MLflow run (active or not); every method logs into that run only."""

    def __init__(self, run_id: str, experiment_id: str):
        self.run_id = run_id
        self.experiment_id = experiment_id

    def log_params(self, params: Mapping[str, Any], prefix: str = "", keep_logged: bool = False) -> None:
        """keep_logged: leave out the params the run already holds (MLflow refuses a changed value, and a
        run logged again from its folder may differ in one that does not change its answers)."""
        flat = {prefix + k: v for k, v in flat_params(params).items()}
        if keep_logged:
            held = MlflowClient(tracking_uri()).get_run(self.run_id).data.params
            flat = {k: v for k, v in flat.items() if k not in held}
        if flat:
            mlflow.log_params(flat, run_id=self.run_id)

    def log_metrics(
        self,
        metrics: Mapping[str, Any],
        step: int | None = None,
        model_id: str | None = None,
        dataset: Mapping[str, str] | None = None,
        linked: set[str] | None = None,
    ) -> None:
        """Run-summary names in, grouped MLflow names out (metric_name); full precision in the metric, the
        headline figures rounded in the run's description. With `model_id` and `dataset` ({name, digest,
        source}), the headline figures are also the program's scores on that dataset: the Models page
        shows them per dataset, one row per program (`linked`, by default MODEL_METRICS)."""
        # MLflow links a metric to the "active model" when none is given, and DSPy's autolog leaves its
        # dummy model active after a compile: every later metric of the process went to it.
        mlflow.clear_active_model()
        values = {metric_name(k): v for k, v in numeric_metrics(metrics).items()}
        names = MODEL_METRICS if linked is None else linked
        scores = {k: v for k, v in values.items() if model_id and dataset and k in names}
        rest = {k: v for k, v in values.items() if k not in scores}
        if rest:  # the client's call: mlflow.log_metrics also links a metric to every model the run produced
            from mlflow.entities import Metric

            now = int(time.time() * 1000)
            MlflowClient(tracking_uri()).log_batch(
                self.run_id, metrics=[Metric(k, v, now, step or 0) for k, v in rest.items()]
            )
        if scores and model_id and dataset:
            data = _meta_dataset(dataset["name"], dataset["digest"], dataset.get("source", ""))
            mlflow.log_metrics(scores, step=step, run_id=self.run_id, model_id=model_id, dataset=data)
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
        data = _meta_dataset(name, digest, source)
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
        handle = TrackedRun(run.info.run_id, run.info.experiment_id)
        if params:
            handle.log_params(params)
        if tags:
            handle.set_tags(tags)
        if dataset:
            handle.log_dataset(**dataset)
        yield handle


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
        mlflow.clear_active_model()  # autolog's compile leaves its model active (see TrackedRun.log_metrics)
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
    # workflowType: MLflow 3.17's side bar defaults to its GenAI pages (an overview of traces); the
    # comparison is of runs and models, which the "Model training" pages show
    return f"/#/experiments/{experiment_id}/runs?viewStateShareKey={VIEW_KEY}&workflowType=machine_learning"


def models_path(experiment_id: str) -> str:
    """The UI path of the Models page as charts: per dataset, one bar per program and metric, its value
    printed on the bar, all on screen at 1400 px.

    Why not the page's table: MLflow 3.17 puts its metric columns after four attribute columns (Logged
    from, Source run, Registered models, Dataset; 200 px each, unpinned), so at 1400 px the first score
    starts ~190 px right of the window; the table's column choice and order are React state, read from
    neither the URL, the browser's storage nor the store. The page reads only its view mode from the URL
    (`viewMode`), and the chart view lays out the metrics logged on each LoggedModel with a dataset."""
    return f"/#/experiments/{experiment_id}/models?viewMode=CHART&workflowType=machine_learning"


def mlflow_executable() -> str:
    """The `mlflow` beside this Python, as the user can type it from here: `.venv/bin/mlflow` in the project,
    its full path from any other folder (a relative `.venv/bin/mlflow` printed there was no command)."""
    exe = Path(sys.executable).parent / "mlflow"
    if not exe.is_file():
        return "mlflow"  # installed elsewhere: on PATH
    try:
        return str(exe.relative_to(Path.cwd()))
    except ValueError:
        return str(exe)


def ui_command(uri: str | None = None, port: int = 5000, experiment_id: str | None = None) -> str:
    """The command that opens the UI on this store in seconds (a single-worker server, no job runner)."""
    uri = uri or tracking_uri()
    page = view_path(experiment_id) if experiment_id else ""
    models = f" (each program's scores: {{site}}{models_path(experiment_id)})" if experiment_id else ""
    if urlparse(uri).scheme in ("http", "https"):
        site = uri.rstrip("/")
        return f"open {site}{page} in a browser" + models.format(site=site)
    site = f"http://127.0.0.1:{port}"
    return (
        f"MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false {mlflow_executable()} server --host 127.0.0.1 --port {port} "
        f"--backend-store-uri {uri} --workers 1   # then open {site}{page}" + models.format(site=site)
    )


# --- Store faults: retried, then one line (issue 33) ------------------------------------------------
# MLflow's SQLite sessions already wait 20 s for another process's lock on every statement; these are the
# waits between whole attempts after that (a lock held by a second `collate run` that is writing its own
# run passes; one held by a forgotten sqlite3 shell does not, and the run folder keeps what to log).
RETRY_WAITS: tuple[float, ...] = (5.0, 20.0)


class StoreFault(CollateError):
    """The MLflow store could not take what was logged, even after the retries: exit 1, the reason in one line."""


def _store_errors() -> tuple[type[BaseException], ...]:
    import sqlalchemy.exc
    from mlflow.exceptions import MlflowException

    return (MlflowException, sqlalchemy.exc.SQLAlchemyError, OSError)  # OSError: requests' errors, the disk


def fault_reason(exc: BaseException) -> str:
    """MLflow's reason in one line: 'database is locked', not the SQL statement and a traceback."""
    inner = getattr(exc, "orig", None) or exc  # SQLAlchemy wraps the driver's error
    text = str(getattr(inner, "message", None) or inner).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    line = line.removeprefix("(sqlite3.OperationalError) ").strip()
    return line if len(line) <= 200 else line[:197] + "..."


def with_retries(attempt, waits: tuple[float, ...] | None = None, on_retry=None):
    """attempt() until the store takes it; StoreFault with the reason after the last wait."""
    waits = RETRY_WAITS if waits is None else waits
    for wait in [*waits, None]:
        try:
            with _quiet_store():
                return attempt()
        except _store_errors() as exc:
            reason = fault_reason(exc)
            if wait is None:
                raise StoreFault(reason) from None
            logger.debug("store fault (%s), trying again in %s s", reason, wait, exc_info=True)
            if on_retry is not None:
                on_retry(reason, wait)
            time.sleep(wait)
    raise AssertionError("unreachable")


@contextlib.contextmanager
def _quiet_store() -> Iterator[None]:
    """MLflow's SQL store logs every database error with its whole traceback (~100 lines) before raising
    it; the fault is reported once, in one line, by the caller."""
    store_logger = logging.getLogger("mlflow.store.db.utils")
    level = store_logger.level
    store_logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        store_logger.setLevel(level)


def create_run(run_name: str, tags: Mapping[str, Any], experiment: str = DEFAULT_EXPERIMENT) -> TrackedRun:
    """A new run, RUNNING and not active (nothing else in the process logs into it by accident)."""
    experiment_id = use_store(experiment)
    run = MlflowClient(tracking_uri()).create_run(experiment_id, tags=flat_params(tags), run_name=run_name)
    return TrackedRun(run.info.run_id, experiment_id)


def reopen_run(run_id: str) -> TrackedRun | None:
    """The run of an earlier attempt to log the same run folder, when the store still has it unfinished."""
    use_store()
    try:
        run = MlflowClient(tracking_uri()).get_run(run_id)
    except _store_errors()[0]:  # deleted, or another store: log a new one
        return None
    if run.info.status != "RUNNING":
        return None
    return TrackedRun(run.info.run_id, run.info.experiment_id)


def finish_run(run_id: str, failure: str | None = None) -> None:
    """End a run FINISHED, or FAILED with its reason in the `failure` tag."""
    client = MlflowClient(tracking_uri())
    if failure:
        client.set_tag(run_id, "failure", flat_params({"r": failure})["r"])
    client.set_terminated(run_id, status="FAILED" if failure else "FINISHED")


# --- One trace per question (evaluate.runs.question_trace builds the tree) ----------------------------------
def log_trace(
    tree: Mapping[str, Any],
    experiment_id: str,
    seconds: float,
    tags: Mapping[str, Any] | None = None,
    run_id: str | None = None,
    model_id: str | None = None,
) -> str:
    """A trace from a tree of {name, type, inputs, outputs, status, children}, linked to the run (its
    Traces tab) and the program's LoggedModel; every span spans the question's `seconds`. Its id, once
    the store holds it (a store fault raises here, so the caller retries it)."""
    end = time.time_ns()
    start = end - int(max(seconds, 0.001) * 1e9)
    metadata = {}
    if run_id:
        metadata["mlflow.sourceRun"] = run_id
    if model_id:
        metadata["mlflow.modelId"] = model_id
    root = mlflow.start_span_no_context(
        name=str(tree["name"]),
        span_type=str(tree.get("type") or "CHAIN"),
        inputs=tree.get("inputs"),
        tags=flat_params(tags or {}),
        metadata=metadata,
        experiment_id=experiment_id,
        start_time_ns=start,
    )
    _child_spans(root, tree.get("children") or [], start, end)
    root.end(outputs=tree.get("outputs"), status=str(tree.get("status") or "OK"), end_time_ns=end)
    mlflow.flush_trace_async_logging()
    MlflowClient(tracking_uri()).get_trace(root.trace_id)  # raises when the store did not take it
    return root.trace_id


def _child_spans(parent, children, start: int, end: int) -> None:
    for child in children:
        span = mlflow.start_span_no_context(
            name=str(child["name"]),
            span_type=str(child.get("type") or "CHAIN"),
            parent_span=parent,
            inputs=child.get("inputs"),
            start_time_ns=start,
        )
        _child_spans(span, child.get("children") or [], start, end)
        span.end(outputs=child.get("outputs"), status=str(child.get("status") or "OK"), end_time_ns=end)


def log_assessments(
    trace_id: str, expectations: Mapping[str, Any], feedback: Sequence[Mapping[str, Any]]
) -> None:
    """The gold answer as an expectation, the verdict and scores as feedback, on the trace: the trace view
    shows them as columns and filters on them (e.g. correct = false)."""
    from mlflow.entities import AssessmentSource

    for name, value in expectations.items():
        mlflow.log_expectation(
            trace_id=trace_id, name=name, value=value, source=AssessmentSource("HUMAN", "dataset gold")
        )
    for item in feedback:
        source = AssessmentSource(
            str(item["source"]), "collate judge" if item["source"] == "LLM_JUDGE" else "collate scoring"
        )
        mlflow.log_feedback(
            trace_id=trace_id,
            name=str(item["name"]),
            value=item["value"],
            rationale=str(item.get("rationale") or "") or None,
            source=source,
        )


# --- One LoggedModel per program, linked to every run of it ---------------------------------------------
MODEL_TYPE = "collate-program"
# The figures that score a program on a dataset (the Models page's columns): the headline view's, what was
# paid where the price is unknown, and a compile's score on its dev split.
MODEL_METRICS = {m for m, _, _, width in HEADLINE if width} | {"cost/paid_usd", "dev/metric"}


def model_name(variant: str, program_hash: str) -> str:
    """'bootstrap-3f9a1c2', 'uncompiled-a1b2c3d': the Models page's row, told apart by the program's hash."""
    return f"{variant.removeprefix('compiled:').replace(':', '-')}-{program_hash}"


def program_model(
    name: str,
    program_hash: str,
    experiment_id: str,
    *,
    params: Mapping[str, Any] | None = None,
    tags: Mapping[str, Any] | None = None,
    source_run_id: str | None = None,
    files: tuple[Path, ...] = (),
    state: Any = None,
) -> str:
    """The id of the program's LoggedModel, found by its hash, else made: its params, its program file
    (and the compile's sidecar) or state as artifacts, READY. A compile makes it (source_run_id = the
    compile run); an evaluation of a program no compile logged (uncompiled, flat-rag) makes its own."""
    found = mlflow.search_logged_models(
        experiment_ids=[experiment_id],
        filter_string=f"tags.program_hash = '{program_hash}'",
        max_results=1,
        output_format="list",
    )
    if found:
        return found[0].model_id
    model = mlflow.initialize_logged_model(
        name=name,
        source_run_id=source_run_id,
        tags={**flat_params(tags or {}), "program_hash": program_hash},
        params=flat_params(params or {}),
        model_type=MODEL_TYPE,
        experiment_id=experiment_id,
    )
    with tempfile.TemporaryDirectory(prefix="collate-model-") as folder:
        for path in files:
            shutil.copy(path, Path(folder) / Path(path).name)
        if state is not None:
            Path(folder, "state.json").write_text(
                json.dumps(state, ensure_ascii=False, indent=1, default=str)
            )
        MlflowClient(tracking_uri()).log_model_artifacts(model.model_id, folder)
    mlflow.finalize_logged_model(model.model_id, "READY")
    return model.model_id


def drop_autolog_models(run_id: str) -> int:
    """Delete the empty "dspy" LoggedModels DSPy's autolog makes for a compile and each of its evaluations
    (no params, no files: a row per trial on the Models page, beside the compiled program's own). How many."""
    client = MlflowClient(tracking_uri())
    run = client.get_run(run_id)
    children = client.search_runs(
        [run.info.experiment_id], filter_string=f"tags.mlflow.parentRunId = '{run_id}'", max_results=10000
    )
    runs = {run_id, *(child.info.run_id for child in children)}
    dummies = [
        model
        for model in mlflow.search_logged_models(
            experiment_ids=[run.info.experiment_id], filter_string="name = 'dspy'", output_format="list"
        )
        if model.source_run_id in runs and not model.params
    ]
    for model in dummies:
        client.delete_logged_model(model.model_id)
    return len(dummies)


def link_model(run_id: str, model_id: str, produced: bool = False) -> None:
    """The run used the model (an evaluation: its input) or produced it (a compile: its output)."""
    from mlflow.entities import LoggedModelInput, LoggedModelOutput

    client = MlflowClient(tracking_uri())
    if produced:
        client.log_outputs(run_id, [LoggedModelOutput(model_id, step=0)])
    else:
        client.log_inputs(run_id, models=[LoggedModelInput(model_id)])


def _meta_dataset(name: str, digest: str, source: str = ""):
    from mlflow.data.meta_dataset import MetaDataset
    from mlflow.data.sources import LocalArtifactDatasetSource  # type: ignore[attr-defined]  # mlflow makes it at import

    # MetaDataset leaves Dataset.profile abstract, but Dataset is no ABC: it instantiates (tests/evaluate).
    return MetaDataset(LocalArtifactDatasetSource(source or name), name=name, digest=digest)  # type: ignore[abstract]
