"""--max-tokens and --max-usd, the budgets in tokens and dollars beside --max-calls, for run and compile.

Checked before anything is spent (a cap of 0 or below is bad input, exit 2). What a cap does once
reached is programs/lm/spend.py's: no new request leaves, what was answered is kept.
"""

from __future__ import annotations

import argparse

from signatures.errors import BadInput


def add_budget_arguments(p: argparse.ArgumentParser, what: str) -> None:
    """`what`: whose requests the caps bound ("the questions'", "the optimizer's")."""
    p.add_argument(
        "--max-tokens",
        type=int,
        help=f"cap on {what} LM tokens (prompt + completion, as the responses report them); once "
        "reached no new request is sent and what was done is kept (default: no cap)",
    )
    p.add_argument(
        "--max-usd",
        type=float,
        help=f"cap on {what} LM dollars, priced per stage (COLLATE_PRICE_IN/_OUT or DSPy's price table); "
        "a model of unknown price is refused at the start, naming the COLLATE_PRICE_IN/_OUT that price it "
        "(default: no cap)",
    )


def check_budget_arguments(args: argparse.Namespace) -> None:
    for flag, value in (
        ("--max-calls", getattr(args, "max_calls", None)),
        ("--max-tokens", args.max_tokens),
        ("--max-usd", args.max_usd),
    ):
        if value is not None and not value > 0:
            raise BadInput(f"{flag} must be above 0 (got {value:g}); omit it for no cap")
