"""Types and DSPy signatures: the contracts between stages. No I/O here."""
