"""Issue 32 item 1: every command the README and the commands' own hints print works as printed.

One form everywhere: `collate COMMAND ...` in a shell where the venv is active (setup.sh ends by saying
how to enter it). Each `collate WORD --flag ...` the README shows in code, and each one a command's
messages print, must name a real command and flags that command takes: it is run here with --help
in front, which exits 0 only when every flag name is known.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from collate.cli import COMMANDS
from collate.cli import main as collate

ROOT = Path(__file__).resolve().parents[2]
# a command line in print: `collate WORD` and the rest of its line up to where the command ends
FORM = re.compile(r"\bcollate ([a-z]\w*)([^`'\"|#;\n)]*)")
# where commands print hints: the command layer and the messages of the library under it
HINT_FILES = [
    *sorted((ROOT / "collate").glob("*.py")),
    ROOT / "programs" / "compiled.py",
    ROOT / "retrievers" / "catalog.py",
    ROOT / "retrievers" / "indexing" / "store.py",
    ROOT / "retrievers" / "indexing" / "document_index.py",
    ROOT / "retrievers" / "catalog_draft" / "for_build.py",
    ROOT / "evaluate" / "runs" / "run_reading.py",
]


def _readme_code() -> str:
    """The README's code: fenced blocks and inline `...` spans (prose may say 'collate plans')."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
    inline = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    return "\n".join(blocks + inline)


def _forms(text: str, where: str, only_known: bool) -> list[tuple[str, str, list[str]]]:
    found = []
    for m in FORM.finditer(text):
        word = m.group(1)
        if only_known and word not in COMMANDS:
            continue
        flags = [t.split("=", 1)[0].rstrip(",.:") for t in m.group(2).split() if t.startswith("--")]
        found.append((where, word, [f for f in flags if re.fullmatch(r"--[a-z][a-z0-9-]*", f)]))
    return found


def _all_forms() -> list[tuple[str, str, list[str]]]:
    forms = _forms(_readme_code(), "README.md", only_known=False)
    for path in HINT_FILES:
        forms += _forms(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)), only_known=True)
    return forms


def test_the_readme_and_the_hints_print_commands():
    forms = _all_forms()
    assert len({w for _, w, _ in forms}) >= 8 and sum(1 for where, *_ in forms if where != "README.md") >= 10


@pytest.mark.parametrize(("where", "word", "flags"), _all_forms(), ids=lambda v: str(v)[:40])
def test_each_printed_command_names_a_command_and_flags_it_takes(where, word, flags, capsys):
    if word in ("command", "cmd"):
        pytest.skip("a placeholder")
    assert word in COMMANDS, f"{where}: `collate {word}` is no command"
    code = collate([word, "--help", *flags])
    assert code == 0, f"{where}: collate {word} {' '.join(flags)}: {capsys.readouterr().err}"


def test_setup_ends_by_saying_how_to_enter_the_venv_the_readme_starts_with():
    setup = (ROOT / "setup.sh").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "source $PWD/.venv/bin/activate" in setup
    assert "bash setup.sh && source .venv/bin/activate && collate demo" in readme
    assert 'collate = "collate.cli:main"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
