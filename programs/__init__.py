"""The DSPy modules, their composition, LM settings and the code sandbox."""

import signatures  # noqa: F401  (sets the environment defaults before dspy is imported)
