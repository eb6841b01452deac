"""The process environment, read in one place: every variable the library reads below programs/, and the
defaults the project sets for the libraries it uses.

It sits in the bottom layer because retrieval, stages and commands all need it and none may import a
layer above. Settings of a run (COLLATE_LM, COLLATE_K, ... ) are read by programs/lm/settings.py
from the mapping it is given; everything else goes through `read` here, so `VARIABLES` is the list of
what the environment can change, and a word a variable does not take is refused with the fix, when the
setting is used (never at import).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from signatures.errors import BadInput

# Set (unless the user set them) before dspy, litellm, transformers or mlflow are imported.
THIRD_PARTY_DEFAULTS = {
    # the embedder ships inside a pip package: never let transformers reach for a model hub
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "TOKENIZERS_PARALLELISM": "false",
    # DSPy's HTTP engine (and litellm) otherwise download a model price list on first use
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "MLFLOW_DISABLE_TELEMETRY": "true",
    # MLflow exports traces from a background queue whose consumer polls it once a second: waiting until
    # one question's trace is stored (tracking.log_trace) took 1.2-1.4 s, written at once 0.23-0.53 s, CPU
    # 0.08-0.14 s either way (bench/trace_logging.py, bench/README.md)
    "MLFLOW_ENABLE_ASYNC_TRACE_LOGGING": "false",
}

# name -> what it changes. Read through read()/choice() only.
VARIABLES = {
    "COLLATE_MINILM_BACKEND": "onnx or torch: how MiniLM runs (default onnx when onnxruntime is installed)",
    "COLLATE_MINILM_DTYPE": "float32 or bfloat16 for the torch backend (default bfloat16 where the CPU has it)",
    "COLLATE_TORCH_THREADS": "threads one process's embedder uses (default 1: processes are the parallelism)",
    "COLLATE_OCR_PAGES": "pages of one document OCR reads side by side (default the cores, at most 2)",
    "COLLATE_CACHE_DIR": "where derived model files go (default $XDG_CACHE_HOME/collate or ~/.cache/collate)",
    "XDG_CACHE_HOME": "the user's cache folder (the freedesktop convention)",
    "COLLATE_RAY_ADDRESS": "the Ray cluster a bare --ray builds on (default auto)",
    "MLFLOW_TRACKING_URI": "the MLflow store (default sqlite:///mlflow.db)",
    "MLFLOW_ALLOW_FILE_STORE": "true lets MLflow 3 use a file:// store (it refuses one otherwise)",
}


def apply_defaults() -> None:
    for name, value in THIRD_PARTY_DEFAULTS.items():
        os.environ.setdefault(name, value)


def read(name: str, environ: Mapping[str, str] | None = None) -> str:
    """The variable's value without surrounding blanks ("" when unset)."""
    if name not in VARIABLES:
        raise KeyError(f"{name} is not a documented variable: add it to signatures.environment.VARIABLES")
    return (os.environ if environ is None else environ).get(name, "").strip()


def choice(name: str, allowed: tuple[str, ...], default: str) -> str:
    """One of `allowed` (case-insensitive), the default when unset; any other word names the fix."""
    value = read(name).lower()
    if not value:
        return default
    if value not in allowed:
        raise BadInput(
            f"{name}={value!r} is not a value it takes: use one of {', '.join(allowed)}, or unset it"
        )
    return value


def positive_int(name: str, default: int) -> int:
    value = read(name)
    if not value:
        return default
    if not value.isdigit() or int(value) < 1:
        raise BadInput(f"{name}={value!r}: give a whole number of at least 1, or unset it")
    return int(value)
