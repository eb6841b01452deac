"""Every place collate reaches into DSPy's or MLflow's internals, in one module behind one version check.

Why here: DSPy 3.4 has no public hook to refuse a request (budgets), to bound the wait before a retry,
to send a schema to a model its metadata does not know, or to see a candidate's score inside an
optimizer; MLflow 3.17 has none to log a dataset's metadata or to save a runs-table view. Each need is
met by reaching into one private name, listed in TARGETS, and tests/programs/test_patches.py holds
every target to the installed library: a new version that moves or changes one fails there, naming the
patch, not in the middle of a user's run. `check()` runs before a patch is applied: an installed version
outside SUPPORTED whose targets are gone is refused with the pin to restore; one whose targets are still
there is used with one warning.

This module imports no mlflow (evaluate/tracking/ is the one module that does): the MLflow targets are
reached through objects tracking hands it.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

import dspy
import dspy.clients.base_lm as base_lm
import dspy.clients.execution as execution
import dspy.teleprompt.simba as simba_module
from dspy.adapters.json_adapter import JSONAdapter

logger = logging.getLogger(__name__)

# The versions these patches were written against and tested with (pyproject.toml pins them).
SUPPORTED = {"dspy": "3.4.", "mlflow": "3.17."}

# What each patch reaches into: (module, attribute path). test_patches.py checks each on the installed
# library; check() checks them before a patch is applied.
TARGETS: dict[str, tuple[str, str]] = {
    "budgets: charge each request, count cache hits": ("dspy.clients.execution", "_engine"),
    "budgets: the cached path": ("dspy.clients.execution", "execute"),
    "budgets: the cached path, async": ("dspy.clients.execution", "aexecute"),
    "retries: bound each wait": ("dspy.clients.execution", "_delay"),
    "schema for any model": ("dspy.adapters.json_adapter", "JSONAdapter._prepare_response_format"),
    "schema of a signature": ("dspy.adapters.json_adapter", "_get_structured_outputs_response_format"),
    "open-ended outputs": ("dspy.adapters.json_adapter", "_has_open_ended_mapping"),
    "best so far: every evaluation": ("dspy.evaluate.evaluate", "Evaluate.__call__"),
    "best so far: SIMBA's scoring": ("dspy.teleprompt.simba", "wrap_program"),
    "MLflow: a dataset's metadata as a run input": ("mlflow.data.dataset", "Dataset._to_mlflow_entity"),
    "histories: every call's entry, process-wide": ("dspy.clients.base_lm", "GLOBAL_HISTORY"),
    "cache: its memory layer": ("dspy", "cache.memory_cache"),
    "cache: the lock of its memory layer": ("dspy", "cache._lock"),
}
# MLflow 3.17's saved runs-table views: one experiment tag per view, its value a JSON text
# {name, createdAt, updatedAt, state}, where state is the table's own JSON text (evaluate/tracking/).
MLFLOW_VIEW_TAG = "mlflow.sharedViewState.{key}"

_checked: dict[str, bool] = {}
_lock = threading.Lock()


def installed(library: str) -> str:
    try:
        return importlib.metadata.version(library)
    except importlib.metadata.PackageNotFoundError:
        return ""


def missing_targets(library: str) -> list[str]:
    """The patches of `library` whose target is not in the installed version (by their names in TARGETS)."""
    missing = []
    for name, (module_name, path) in TARGETS.items():
        if module_name.split(".")[0] != library:
            continue
        try:
            found: Any = importlib.import_module(module_name)
            for part in path.split("."):
                found = getattr(found, part)
        except (ImportError, AttributeError):
            missing.append(name)
    return missing


def check(library: str) -> None:
    """Before a patch of `library` is applied: refuse a version whose targets are gone (naming the pin),
    warn once about a version outside SUPPORTED whose targets are all there."""
    with _lock:
        if _checked.get(library):
            return
        version = installed(library)
        if not version.startswith(SUPPORTED[library]):
            gone = missing_targets(library)
            if gone:
                raise RuntimeError(
                    f"{library} {version} moved what collate patches ({'; '.join(gone)}): install "
                    f"{library} {SUPPORTED[library]}x (pyproject.toml), or update programs/lm/patches.py"
                )
            logger.warning(
                "%s %s is not the %sx collate's patches were tested with (programs/lm/patches.py); "
                "their targets are there, so they are used",
                library,
                version,
                SUPPORTED[library],
            )
        _checked[library] = True


# ---- budgets: every request and every cache hit, whatever LM object made it -----------------------
@contextlib.contextmanager
def request_hooks(on_request: Callable[[Any], None], on_cache_hit: Callable[[], None]) -> Iterator[None]:
    """While inside, `on_request(lm)` runs before every request that leaves for an LM (it may raise to
    refuse it) and `on_cache_hit()` after every answer DSPy's cache gave.

    DSPy 3.4's execution.execute / aexecute answer from the cache first and only on a miss pick a
    backend with `_engine(lm, call, asynchronous)`: every LM object (per-stage LMs, an optimizer's copies,
    GEPA's reflection LM) goes through there. (A DSPy callback could count, but DSPy swallows exceptions
    raised in callbacks, so it could never refuse.)"""
    check("dspy")
    inner_engine, inner_execute, inner_aexecute = execution._engine, execution.execute, execution.aexecute

    def charged_engine(lm, call, asynchronous):
        on_request(lm)  # reached only on a cache miss: a real request follows
        return inner_engine(lm, call, asynchronous)

    def counted_execute(lm, call):
        result = inner_execute(lm, call)
        if getattr(result, "cache_hit", False):
            on_cache_hit()
        return result

    async def counted_aexecute(lm, call):
        result = await inner_aexecute(lm, call)
        if getattr(result, "cache_hit", False):
            on_cache_hit()
        return result

    execution._engine, execution.execute, execution.aexecute = (  # type: ignore[assignment]
        charged_engine,
        counted_execute,
        counted_aexecute,
    )
    try:
        yield
    finally:
        execution._engine, execution.execute, execution.aexecute = inner_engine, inner_execute, inner_aexecute


# ---- retries: the wait before each one ---------------------------------------------------------------
# DSPy's own wait (backoff, or the server's Retry-After), kept before anything replaces it
DSPY_DELAY: Callable[[Exception, int], float] = getattr(execution, "_delay", None)  # type: ignore[assignment]


def replace_retry_delay(delay: Callable[[Exception, int], float]) -> None:
    """DSPy's retry loop asks `execution._delay(exc, attempt)` how long to wait; from now on `delay` answers
    (it may raise to fail the call instead). DSPy 3.4 has no setting for it. Idempotent."""
    check("dspy")
    execution._delay = delay


# ---- the histories DSPy keeps of every call --------------------------------------------------------------
def trim_histories(lm, kept: int) -> None:
    """Keep the last `kept` entries of each history DSPy just recorded a call in: the process-wide one
    (`dspy.inspect_history` reads it), `lm`'s, and each module's the call was made in (DSPy's own
    record_history appends to the modules in `settings.caller_modules`). DSPy 3.4 caps each at
    MAX_HISTORY_SIZE / max_history_size (10,000) and has no setting for the process-wide one."""
    check("dspy")
    for history in (
        base_lm.GLOBAL_HISTORY,
        lm.history,
        *(m.history for m in dspy.settings.caller_modules or []),
    ):
        if len(history) > kept:
            del history[: len(history) - kept]


def bound_memory_cache(entries: int) -> None:
    """Keep at most `entries` responses in the memory layer of DSPy's cache, the most recently used.

    DSPy's cache answers from memory, then from disk, and keeps every response in both; its memory layer
    holds up to 1,000,000 (an LRUCache whose size DSPy 3.4 sets only by building a new cache, which would
    also reset the disk layer's place and size). With a disk layer, memory holds a faster copy of what is
    on disk, so a response let go there is still a cache hit. Without one it is the only copy: left as is."""
    check("dspy")
    cache = dspy.cache
    if not (cache.enable_disk_cache and cache.enable_memory_cache):
        return
    with cache._lock:
        held = cache.memory_cache
        if getattr(held, "maxsize", 0) <= entries:
            return
        bounded = type(held)(maxsize=entries)  # DSPy's own kind of LRU cache, smaller
        for key in list(held.keys())[-entries:]:
            bounded[key] = held[key]
        cache.memory_cache = bounded


# ---- a JSON schema sent to any model -------------------------------------------------------------------
class ResponseFormatAdapter(JSONAdapter):
    """DSPy's JSONAdapter with the response_format decided by `response_format(signature)` for every
    model: JSONAdapter sends a schema only for models its metadata snapshot knows, and a local model is
    never in it. Subclasses say what to send (programs/lm/endpoint.py)."""

    def response_format(self, signature) -> dict | None:
        raise NotImplementedError

    def _prepare_response_format(self, lm, lm_kwargs, signature):
        fmt = self.response_format(signature)
        if fmt is not None:
            lm_kwargs["response_format"] = fmt


def structured_outputs_model(signature, native_function_calling: bool):
    """The pydantic model DSPy makes of a signature's outputs (raises where pydantic cannot express it)."""
    from dspy.adapters.json_adapter import _get_structured_outputs_response_format

    return _get_structured_outputs_response_format(signature, native_function_calling)


def has_open_ended_mapping(signature) -> bool:
    """An output with an open-ended mapping (dict[str, Any]) has no closed schema."""
    from dspy.adapters.json_adapter import _has_open_ended_mapping

    return _has_open_ended_mapping(signature)


# ---- what an optimizer scored, before a budget stops it ------------------------------------------------
@contextlib.contextmanager
def scoring_hooks(
    on_evaluation: Callable[[Any, float, list], None], on_example: Callable[[Any, float], None]
) -> Iterator[None]:
    """While inside, `on_evaluation(program, score 0..1, devset)` hears every completed dspy.Evaluate call
    (MIPROv2's trials, GEPA's validation) and `on_example(program, score)` every example SIMBA scores
    (its module-level wrap_program builds the scorer). An interrupted scoring never completes, so is
    never heard."""
    check("dspy")
    inner_call, inner_wrap = dspy.Evaluate.__call__, simba_module.wrap_program

    def recording_call(evaluate, program, metric=None, devset=None, *args, **kwargs):
        result = inner_call(evaluate, program, metric, devset, *args, **kwargs)
        on_evaluation(program, float(result.score) / 100.0, devset if devset is not None else evaluate.devset)
        return result

    def recording_wrap(program, metric):
        wrapped = inner_wrap(program, metric)

        def scored(example):
            out = wrapped(example)
            on_example(program, out.get("score", 0.0))
            return out

        return scored

    dspy.Evaluate.__call__, simba_module.wrap_program = recording_call, recording_wrap  # type: ignore[method-assign]
    try:
        yield
    finally:
        dspy.Evaluate.__call__, simba_module.wrap_program = inner_call, inner_wrap  # type: ignore[method-assign]


# ---- MLflow ---------------------------------------------------------------------------------------------
def mlflow_dataset_entity(dataset):
    """The entity MLflow's client logs for a dataset (mlflow.data Dataset objects make it privately;
    MlflowClient.log_inputs takes only entities)."""
    check("mlflow")
    return dataset._to_mlflow_entity()


def mlflow_view_tag(key: str) -> str:
    """The experiment tag that holds a saved runs-table view under `key`."""
    return MLFLOW_VIEW_TAG.format(key=key)
