"""DSPy optimizers over the analyst program, tracked in MLflow."""

import signatures  # noqa: F401  (sets the environment defaults before dspy or mlflow is imported)
