"""What every command-line entry point shares: the user-error type and opening an index with a fix-naming error."""

from __future__ import annotations

import argparse
import difflib
import logging
import os
import re
import sys
import types
from pathlib import Path
from typing import NoReturn

from collate.errors import Exit
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
            f"no index at {path}: build one with collate build --catalog DS.json "
            f"--pdf-dir PDFS --index {path}"
        )
    from retrievers.indexing.store import (
        IndexStore,  # lazy: loading FAISS/torch is not needed for --help or bad input
    )

    try:
        return IndexStore.open(path)
    except (OSError, ValueError, LookupError) as e:
        raise BadInput(f"cannot open index {path}: {e}; rebuild it with collate build") from None


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


# The name the user typed the command by ("collate run"), set by collate.cli before the command runs;
# None when a module's own entry point runs it (`python -m evaluate.run`): its parser's prog then.
invoked_as: str | None = None

# Loggers of libraries that talk at INFO/WARNING on every run about things a user cannot act on
# (pip's version check, onnxruntime's provider list, MLflow's store migrations and autolog lines):
# quiet unless -v/--verbose.
NOISY_LOGGERS = ("pip", "onnxruntime", "mlflow", "alembic", "httpx", "urllib3", "LiteLLM", "faiss", "jieba")


def command(name: str) -> str:
    """How a message names another command: the one form the README uses (`collate NAME`)."""
    return f"collate {name}"


def parse_cli(parser: argparse.ArgumentParser, argv) -> argparse.Namespace | int:
    """The parsed flags, with logging to stderr set up (INFO under a --verbose flag), or argparse's exit code.

    Every command parses through here: its prog is the command as the user typed it, a mistyped flag
    is one line with "did you mean" (not argparse's usage block), and third-party loggers stay quiet
    unless -v. Why return the code instead of letting SystemExit fly: `main(argv) -> int` stays
    callable from tests and from other CLIs (collate.demo runs collate.run's main).
    """
    if invoked_as:
        parser.prog = invoked_as
    parser.error = types.MethodType(_short_error, parser)  # type: ignore[method-assign]
    try:
        _check_flag_names(parser, sys.argv[1:] if argv is None else argv)
        parse = parser.parse_intermixed_args if getattr(parser, "intermixed", False) else parser.parse_args
        args = parse(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    verbose = bool(getattr(args, "verbose", False))
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        stream=sys.stderr,
        format="%(levelname)s %(name)s: %(message)s",
    )
    quiet_libraries(verbose)
    return args


def quiet_libraries(verbose: bool) -> None:
    """Third-party log noise off (ERROR and above still shows); -v lets it through."""
    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.INFO if verbose else logging.ERROR)
    os.environ.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")


def did_you_mean(word: str, choices) -> str:
    """' (did you mean X?)' for the closest of choices, or '' when none is close."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]}?)" if close else ""


def _check_flag_names(parser: argparse.ArgumentParser, argv) -> None:
    """A mistyped flag is named first, before argparse's "required" complaint it would otherwise cause."""
    flags = [opt for action in parser._actions for opt in action.option_strings]
    for word in argv:
        if word == "--":
            return
        name = word.split("=", 1)[0]
        if name.startswith("--") and not any(flag.startswith(name) for flag in flags):
            parser.error(f"unrecognized arguments: {word}")


def _short_error(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    """argparse's error, as one line naming the fix: a mistyped flag gets the closest real one."""
    hint = ""
    unknown = re.match(r"unrecognized arguments: (.+)", message)
    if unknown:
        flags = [opt for action in parser._actions for opt in action.option_strings]
        words = unknown.group(1).split()
        first = next((w for w in words if w.startswith("-")), words[0])
        hint = did_you_mean(first.split("=", 1)[0], flags)
        message = f"unrecognized argument {first}" + (
            f" (and {len(words) - 1} more)" if len(words) > 1 else ""
        )
    sys.stderr.write(f"{parser.prog}: error: {message}{hint}; {parser.prog} --help lists the flags\n")
    sys.exit(int(Exit.BAD_INPUT))


def lm_argv(args) -> list[str]:
    """add_lm_arguments' flags as given, back as argv: for a CLI that runs another CLI (collate.demo)."""
    return [
        arg
        for key, value in lm_overrides(args).items()
        if value
        for arg in (f"--{key.replace('_', '-')}", str(value))
    ]
