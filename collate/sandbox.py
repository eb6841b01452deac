"""`collate sandbox` / `python -m programs.sandbox --code FILE.py --records FILE.json [--timeout SECONDS]`: run analysis
code the way the program does and print the SandboxResult as JSON. Like the program, it refuses to run
the code where bubblewrap cannot isolate it, unless COLLATE_SANDBOX=off (programs/sandbox/policy.py)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from collate.errors import Exit
from collate.inputs import parse_cli
from programs.sandbox.core import _check_records, check_timeout, run_code

DESCRIPTION = "Run analysis code over records the way the program does: isolated, bounded, reported as JSON."


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m programs.sandbox", description=DESCRIPTION)
    parser.add_argument("--code", required=True, type=Path, help="Python file to run")
    parser.add_argument("--records", required=True, type=Path, help="JSON file: a list of record objects")
    parser.add_argument(
        "--timeout", type=float, default=20.0, help="wall-clock seconds, 0 < timeout <= 3600 (default 20)"
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="retired, accepted and ignored: refusing to run without isolation is the default "
        "(COLLATE_SANDBOX=off runs the code without it)",
    )
    args = parse_cli(parser, argv)
    if isinstance(args, int):  # argparse already printed its one-line reason (or --help)
        return args
    try:
        code = args.code.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"error: cannot read --code {args.code}: {exc}; pass a UTF-8 Python file", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    try:
        records = json.loads(args.records.read_text(encoding="utf-8"))
        _check_records(records)
    except (OSError, ValueError, TypeError) as exc:
        print(
            f"error: --records {args.records}: {exc}; pass a JSON file holding a list of objects",
            file=sys.stderr,
        )
        return int(Exit.BAD_INPUT)
    try:
        check_timeout(args.timeout)
    except (TypeError, ValueError) as exc:
        print(f"error: --{exc}", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    try:
        result = run_code(code, records, timeout=args.timeout)  # reads COLLATE_SANDBOX, as documented
    except ValueError as exc:  # a setting with a word it does not know
        print(f"error: {exc}", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    print(result.to_json())
    return 0


if __name__ == "__main__":
    sys.exit(main())
