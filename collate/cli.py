"""`collate COMMAND [ARGS]`: one console script for every entry point; `python -m MODULE` keeps working.

Each command is the `main(argv) -> int` of its module, imported only when run (so `collate --help`
does not load torch or mlflow).
"""

from __future__ import annotations

import importlib
import sys

from collate.errors import Exit, exit_process, run_main

# command -> (module whose main() it runs, what it does)
COMMANDS = {
    "synth": ("collate.synth", "generate synthetic filings with ground truth"),
    "catalog": ("collate.catalog", "draft a catalog from a folder of PDFs"),
    "dataset": ("collate.dataset", "start a dataset of your own questions and gold answers; check one"),
    "build": ("collate.build", "parse, chunk, embed and index a catalog's PDFs"),
    "search": ("collate.search", "what the extractor would read from one document"),
    "ask": ("collate.ask", "answer one question over an index"),
    "sandbox": ("collate.sandbox", "run analysis code the way the program does"),
    "run": ("collate.run", "answer and score a dataset, logged to MLflow"),
    "score": ("collate.score", "score saved answers"),
    "demo": ("collate.demo", "the demo corpus, indexed, answered and scored"),
    "compile": ("collate.compile", "tune the program with a DSPy optimizer"),
    "reader": ("collate.reader", "the rule-based demo reader as a local LM endpoint (offline)"),
}


def usage() -> str:
    lines = ["usage: collate COMMAND [ARGS...]   (collate COMMAND --help for its flags)", "", "commands:"]
    lines += [f"  {name:<8} {about}" for name, (_, about) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage())
        return 0
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        from collate.inputs import did_you_mean

        hint = did_you_mean(command, COMMANDS) or f"; the commands: {', '.join(COMMANDS)}"
        print(
            f"collate: error: unknown command {command!r}{hint}; collate --help says what each does",
            file=sys.stderr,
        )
        return int(Exit.BAD_INPUT)
    from collate import inputs

    inputs.invoked_as = f"collate {command}"  # every message of its parser names it so
    try:
        return _run(command, rest)
    finally:
        inputs.invoked_as = None  # a later main(argv) in this process (a test) is not `collate COMMAND`


def _run(command: str, rest: list[str]) -> int:
    if {"-h", "--help"} & set(rest):  # the flags alone: the command's module loads dspy, mlflow, faiss
        from collate import parsers

        build = getattr(parsers, command, None)
        if build is not None:
            return _help(build(), rest)
    module = importlib.import_module(COMMANDS[command][0])
    # one exit path: an error of ours a command let through is its one line and code, Ctrl-C 130
    code = run_main(lambda: module.main(rest))
    if code == Exit.INTERRUPTED:  # it said what it kept: end now, not after its threads (exit_process)
        exit_process(code)
    return code


def _help(parser, rest: list[str]) -> int:
    from collate.inputs import parse_cli

    args = parse_cli(parser, rest)  # prints the help (or a usage error) and returns its code
    return args if isinstance(args, int) else 0
