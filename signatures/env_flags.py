"""Yes/no settings read from the environment: the one parser, which refuses words it does not know.

    env_flag("COLLATE_SANDBOX", default=True)              # the process environment
    parse_flag("COLLATE_USE_UNVERIFIED", raw, default=False)

1/true/yes/on and 0/false/no/off in any case (surrounding blanks ignored); unset or blank is the
default. Anything else raises FlagError naming the variable, the word and the words accepted: a
safety setting spelled "enabled" was once read as off without a word and let generated code run
without isolation (issue 22). Standard library only: the sandbox imports it, and the sandbox is
copied alone where an ordinary user runs it (tests/sandbox/test_attacks_as_user.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from signatures.errors import BadInput

TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


class FlagError(BadInput):  # a ValueError too, as before
    """A yes/no setting holds a word outside TRUE_WORDS and FALSE_WORDS."""

    def __init__(self, name: str, word: str):
        self.name, self.word = name, word
        super().__init__(
            f"{name}={word!r} is not a yes/no word: use one of {', '.join(TRUE_WORDS)} (yes) or "
            f"{', '.join(FALSE_WORDS)} (no), in any case, or unset it for the default"
        )


def parse_flag(name: str, raw: str | None, default: bool | None) -> bool | None:
    """The yes/no value of `raw` (the text of variable `name`); `default` when it is unset or blank."""
    if raw is None or not raw.strip():
        return default
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise FlagError(name, raw)


def env_flag(name: str, default: bool | None, environ: Mapping[str, str] | None = None) -> bool | None:
    """`parse_flag` of variable `name` in `environ` (the process environment when None)."""
    environ = os.environ if environ is None else environ
    return parse_flag(name, environ.get(name), default)
