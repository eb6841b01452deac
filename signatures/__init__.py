"""Types and DSPy signatures: the contracts between stages. No I/O here.

Importing any part of the project imports this package first, so the environment defaults for the
libraries we use are set once, here, before any of them is imported (signatures/environment.py).
"""

from signatures.environment import apply_defaults

apply_defaults()
