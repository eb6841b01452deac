"""The docs name files that exist: README's Layout, docs/ and the packages' READMEs are true to the tree.

Why: after two rounds of moves README's Layout section and docs/interfaces.md still described the
house before the last one (issue 30 item 6). Every path under a top-level folder of the project that a
doc names, and every module it runs with `python -m`, must exist.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOP = (
    "signatures",
    "factcheck",
    "retrievers",
    "programs",
    "evaluate",
    "optimize",
    "collate",
    "data",
    "fakes",
)
DOCS = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted(p for top in (*TOP, "bench", "tests") for p in (ROOT / top).rglob("README.md")),
]
NAMES = "|".join(TOP)
PATH = re.compile(rf"(?<![\w./-])((?:{NAMES}|bench|tests|docs)/[\w./-]*[\w/])")
MODULE = re.compile(rf"python -m ((?:{NAMES}|bench)(?:\.[a-z_][a-z0-9_]*)+)")
# What a command writes, not what the repository holds.
WRITTEN = ("bench/out/",)


def _named(pattern: re.Pattern) -> list[tuple[str, int, str]]:
    found = []
    for doc in DOCS:
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            found += [
                (str(doc.relative_to(ROOT)), number, m.group(1).rstrip(".")) for m in pattern.finditer(line)
            ]
    return found


def test_the_docs_are_found():
    assert {"README.md", "docs/interfaces.md"} <= {str(d.relative_to(ROOT)) for d in DOCS}


def test_every_path_the_docs_name_exists():
    missing = [
        f"{doc}:{line}: {path}"
        for doc, line, path in _named(PATH)
        if not path.startswith(WRITTEN) and not (ROOT / path).exists()
    ]
    assert not missing, "the docs name paths that do not exist:\n" + "\n".join(missing)


def test_every_module_the_docs_run_exists():
    missing = []
    for doc, line, module in _named(MODULE):
        base = ROOT / module.replace(".", "/")
        if not (base.with_suffix(".py").exists() or (base / "__main__.py").exists()):
            missing.append(f"{doc}:{line}: python -m {module}")
    assert not missing, "the docs run modules that do not exist:\n" + "\n".join(missing)


# A tree drawn in a doc (README's Layout, docs/interfaces.md): a line is `NAME/` or `NAME.py` at its
# indentation, then what it holds; its path is the folders above it.
TREE_ENTRY = re.compile(r"^( *)([\w.]+/|[\w]+\.py)(?=\s|$)")


def _tree_paths(text: str) -> list[tuple[int, str]]:
    paths, in_block, stack = [], False, []
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            in_block, stack = not in_block, []
            continue
        entry = TREE_ENTRY.match(line) if in_block else None
        if not entry:
            continue
        indent, name = len(entry.group(1)), entry.group(2)
        stack = [(i, n) for i, n in stack if i < indent]
        if not stack and name.rstrip("/") not in (*TOP, "bench", "tests", "data"):
            continue  # not a tree of this repository (a run folder, a corpus folder)
        path = "".join(n for _, n in stack) + name
        paths.append((number, path))
        # more files named on the line ("a.py  what   b.py  what"; a folder's line names what it holds)
        inside = path if name.endswith("/") else "".join(n for _, n in stack)
        for extra in re.findall(r"\s{2,}([\w]+\.py)\b", line[entry.end() :]):
            paths.append((number, inside + extra))
        if name.endswith("/"):
            stack.append((indent, name))
    return paths


def test_the_trees_the_docs_draw_are_the_tree():
    missing = [
        f"{doc.relative_to(ROOT)}:{line}: {path}"
        for doc in (ROOT / "README.md", ROOT / "docs" / "interfaces.md")
        for line, path in _tree_paths(doc.read_text(encoding="utf-8"))
        if not (ROOT / path).exists()
    ]
    assert not missing, "the docs draw files that are not there:\n" + "\n".join(missing)
