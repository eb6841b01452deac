"""`collate reader [--port P]`: the demo reader behind an OpenAI-compatible API on 127.0.0.1, until Ctrl-C.

The demo reader (fakes/brain.py) is a rule-based reader of the project's prompts, written for the
synthetic demo corpus: it plans, extracts, normalizes, writes pandas code and answers from what each
prompt shows, and nothing else (no truth.jsonl, no corpus file). It is not a language model. Point any
command at it to try the whole chain offline:

    collate reader &                 # prints the three lines to export
    export COLLATE_LM=openai/collate-reader COLLATE_API_BASE=http://127.0.0.1:8321/v1 COLLATE_API_KEY=none
    collate ask --index demo/index "..."; collate compile ...; collate run ...

What it cannot show: a prompt's wording does not change its answers, so an optimizer (collate compile)
finds nothing to improve, and questions outside the demo corpus's fields get a "not found" plan.
`collate demo` starts it by itself (on a free port) when no COLLATE_LM is set.
"""

from __future__ import annotations

import argparse
import sys
import threading
from typing import TYPE_CHECKING

from collate.errors import Exit
from collate.inputs import parse_cli

if TYPE_CHECKING:
    from fakes.server import FakeLMServer

DEFAULT_PORT = 8321
MODEL = "collate-reader"
# The one line every place that starts the reader prints: what answers, and what it is not.
WHAT_IT_IS = (
    "a rule-based reader written for the demo corpus that reads only what each prompt shows, "
    "not a language model"
)


def start_reader(port: int = 0) -> FakeLMServer:
    """The reader's server, started on 127.0.0.1:port (0 = a free port); stop() it when done."""
    # Imported here: the reader's rules load pydantic and http.server (1.1 s), and `collate reader
    # --help` answered in 2.1 s with them at the top (bench/help_speed.py).
    from fakes.brain import Brain
    from fakes.server import FakeLMServer

    return FakeLMServer(Brain(), model_name=MODEL, port=port).start()


def reader_settings(server: FakeLMServer) -> dict[str, str]:
    """The three COLLATE_* settings that point a command at a running reader."""
    return {"COLLATE_LM": f"openai/{MODEL}", "COLLATE_API_BASE": server.url, "COLLATE_API_KEY": "none"}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="collate reader", description=__doc__.split("\n")[0])
    p.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port on 127.0.0.1 (default {DEFAULT_PORT})"
    )
    return p


def main(argv=None) -> int:
    args = parse_cli(build_parser(), argv)
    if isinstance(args, int):
        return args
    if not 0 < args.port < 65536:
        print(f"error: --port must be 1-65535 (got {args.port})", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    try:
        server = start_reader(args.port)
    except OSError as exc:
        print(
            f"error: cannot listen on 127.0.0.1:{args.port} ({exc.strerror}): pick another --port",
            file=sys.stderr,
        )
        return int(Exit.BAD_INPUT)
    try:  # from the moment it listens: a Ctrl-C that came just after the settings were printed, before
        # the wait, ended it with exit 130 and no "stopped after" (seen once in a fresh clone's suite)
        print(f"collate reader: {WHAT_IT_IS}.")
        print(f"Serving {server.url} until Ctrl-C. Point a command at it (in another shell):")
        for name, value in reader_settings(server).items():
            print(f"export {name}={value}")
        sys.stdout.flush()
        threading.Event().wait()
    except KeyboardInterrupt:
        print(f"collate reader: stopped after {server.calls} calls", file=sys.stderr)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
