"""The one error base class: every error a user can fix is a CollateError whose message names the fix.

It lives at the bottom layer so the library (retrievers, programs, evaluate, optimize) can raise it;
the command layer (collate/errors.py) turns it into one line on stderr and its exit code.
"""

from __future__ import annotations


class CollateError(Exception):
    """An error the user can fix; `exit_code` is what a command exits with (collate.errors.Exit)."""

    exit_code = 1

    def __init__(self, message: str, exit_code: int | None = None):
        super().__init__(message)
        if exit_code is not None:
            self.exit_code = exit_code


class BadInput(CollateError, ValueError):
    """Bad arguments, files or settings, found before anything was spent: exit 2."""

    exit_code = 2
