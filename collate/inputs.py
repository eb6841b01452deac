"""What every command-line entry point shares: the user-error type and opening an index with a fix-naming error."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from programs.lm.stages import STAGES
from signatures.errors import BadInput

# The settings add_lm_arguments adds a flag for beyond --lm/--api-base/--api-key/--timeout: the models
# that are no stage of the Analyst, and every stage's own endpoint (issue 31 item 8).
OWN_LM_SETTINGS = [
    "lm_extractor_escalate",
    "lm_reflection",
    *(name for row in STAGES.values() for name in row.endpoint_fields or ()),
]


def open_store(index_dir: str | Path):
    """Open the index folder built by python -m retrievers.build, or say how to build one."""
    path = Path(index_dir)
    if not path.is_dir():
        raise BadInput(
            f"no index at {path}: build one with python -m retrievers.build --catalog DS.json "
            f"--pdf-dir PDFS --index {path}"
        )
    from retrievers.indexing.store import (
        IndexStore,  # lazy: loading FAISS/torch is not needed for --help or bad input
    )

    try:
        return IndexStore.open(path)
    except (OSError, ValueError, LookupError) as e:
        raise BadInput(f"cannot open index {path}: {e}; rebuild it with python -m retrievers.build") from None


def add_lm_arguments(parser, model_help: str = "model id (COLLATE_LM), e.g. openai/gpt-4.1-mini") -> None:
    """The connection flags every LM-using command takes; each overrides its COLLATE_* variable."""
    parser.add_argument("--lm", help=model_help)
    parser.add_argument("--api-base", help="OpenAI-compatible endpoint (COLLATE_API_BASE)")
    parser.add_argument("--api-key", help="API key (COLLATE_API_KEY)")
    parser.add_argument(
        "--timeout", type=float, help="seconds an LM request may take (COLLATE_TIMEOUT, default 120)"
    )
    parser.add_argument(
        "--lm-extractor-escalate",
        help="the cascade's strong extractor, asked where the extractor's facts are doubted "
        "(COLLATE_LM_EXTRACTOR_ESCALATE)",
    )
    parser.add_argument(
        "--lm-reflection", help="GEPA's reflection model (COLLATE_LM_REFLECTION; default --lm)"
    )
    for row in STAGES.values():  # a stage on a server of its own (programs/lm/stages.py)
        for name in row.endpoint_fields or ():
            what = "API base" if name.startswith("api_base") else "API key"
            shared = "COLLATE_API_BASE" if name.startswith("api_base") else "COLLATE_API_KEY"
            parser.add_argument(
                "--" + name.replace("_", "-"),
                help=f"the {row.name} stage's own {what} (COLLATE_{name.upper()}; default {shared})",
            )


def lm_overrides(args) -> dict:
    """The Settings overrides of add_lm_arguments' flags (None = keep the environment's)."""
    return {
        "lm": args.lm,
        "api_base": args.api_base,
        "api_key": args.api_key,
        "timeout": getattr(args, "timeout", None),
        **{name: getattr(args, name, None) for name in OWN_LM_SETTINGS},
    }


def parse_cli(parser: argparse.ArgumentParser, argv) -> argparse.Namespace | int:
    """The parsed flags, with logging to stderr set up (INFO under a --verbose flag), or argparse's exit code.

    Why return the code instead of letting SystemExit fly: `main(argv) -> int` stays callable from tests
    and from other CLIs (collate.demo runs evaluate.run's main); argparse has already printed why.
    """
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    logging.basicConfig(
        level=logging.INFO if getattr(args, "verbose", False) else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    return args


def lm_argv(args) -> list[str]:
    """add_lm_arguments' flags as given, back as argv: for a CLI that runs another CLI (collate.demo)."""
    return [
        arg
        for key, value in lm_overrides(args).items()
        if value
        for arg in (f"--{key.replace('_', '-')}", str(value))
    ]
