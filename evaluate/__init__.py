"""Datasets, metrics, runners and MLflow tracking for the MuDABench protocol."""

import signatures  # noqa: F401  (sets the environment defaults before dspy or mlflow is imported)
