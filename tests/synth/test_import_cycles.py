"""No import cycle inside data/synth (issue 20): modules form a one-way graph, read with `ast`.

Imports inside functions count too: a lazy import hides a cycle from Python's import machinery,
not from the reader (render.py once imported the layouts inside `render()` because every layout
imported `Page` back from it).
"""

from __future__ import annotations

import ast
from pathlib import Path

import data.synth

PACKAGE = "data.synth"
FOLDER = Path(data.synth.__file__).parent


def _module_name(path: Path) -> str:
    return PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}"


def _resolve(current: str, node: ast.ImportFrom) -> str:
    """The absolute module an ImportFrom reads from (`from . import x` -> the package)."""
    if not node.level:
        return node.module or ""
    package = current if current == PACKAGE else current.rsplit(".", 1)[0]
    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
    return f"{base}.{node.module}" if node.module else base


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The modules of this package that `path` imports, anywhere in the file.

    `from . import fmt` imports the submodule fmt, not the package's __init__ (which Python runs for
    every submodule anyway, so counting it would make every module look cyclic).
    """
    current = _module_name(path)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            source = _resolve(current, node)
            submodules = {f"{source}.{alias.name}" for alias in node.names} & modules
            found |= submodules or {source}
    return (found & modules) - {current}


def import_graph(folder: Path) -> dict[str, set[str]]:
    paths = sorted(folder.glob("*.py"))
    modules = {_module_name(p) for p in paths}
    return {_module_name(p): imports_of(p, modules) for p in paths}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as [a, b, ..., a], or None: depth-first search with the path on a stack."""
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return path[path.index(node) :] + [node]
        if node in done:
            return None
        for nxt in sorted(graph.get(node, ())):
            cycle = visit(nxt, [*path, node])
            if cycle:
                return cycle
        done.add(node)
        return None

    for start in sorted(graph):
        cycle = visit(start, [])
        if cycle:
            return cycle
    return None


def test_data_synth_has_no_import_cycle():
    graph = import_graph(FOLDER)
    assert len(graph) > 20 and graph[f"{PACKAGE}.corpus"]  # the package was read, imports were found
    cycle = find_cycle(graph)
    assert cycle is None, (
        "import cycle in data/synth: " + " -> ".join(cycle) + "; move what both sides need into a module "
        "that imports neither (as data/synth/page.py holds Page and DocSpec for render and the layouts)"
    )


def test_the_cycle_finder_sees_lazy_imports_and_relative_forms(tmp_path):
    pkg = tmp_path / "synth"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .a import run\n")
    (pkg / "a.py").write_text("def run():\n    from .b import helper\n    return helper()\n")
    (pkg / "b.py").write_text("from . import c\nhelper = c.helper\n")
    (pkg / "c.py").write_text("from data.synth import a\ndef helper():\n    return 1\n")
    graph = import_graph(pkg)
    assert graph["data.synth.a"] == {"data.synth.b"}  # imported inside a function
    assert graph["data.synth.b"] == {"data.synth.c"}  # `from . import c` is the submodule c
    assert find_cycle(graph) == ["data.synth.a", "data.synth.b", "data.synth.c", "data.synth.a"]
    (pkg / "c.py").write_text("def helper():\n    return 1\n")
    assert find_cycle(import_graph(pkg)) is None
