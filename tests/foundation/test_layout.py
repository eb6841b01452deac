"""The shape of the code: dependencies point one way, and only the allowed modules touch LMs and MLflow."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = [
    "signatures",
    "factcheck",
    "retrievers",
    "programs",
    "evaluate",
    "optimize",
    "data",
    "collate",
    "fakes",
]
# What each package may import from this project (itself included).
ALLOWED = {
    "signatures": {"signatures"},
    # the fact check reads text with the shared vocabulary; retrieval, stages and scoring all ask it
    "factcheck": {"signatures", "factcheck"},
    "retrievers": {"signatures", "factcheck", "retrievers"},
    "data": {"data"},
    # the demo reader, its server and the tests' stand-ins: they read prompts, never the program that asks
    "fakes": {"signatures", "retrievers", "fakes"},
    "programs": {"signatures", "factcheck", "retrievers", "programs"},
    "evaluate": {"signatures", "factcheck", "retrievers", "programs", "evaluate", "data"},
    "optimize": {"signatures", "factcheck", "retrievers", "programs", "evaluate", "optimize", "data"},
    # the command layer on top: every main() lives here, and it may use every layer
    "collate": set(PACKAGES),
}
# `python -m X` entry points kept where users learned them; each only runs its collate/ command.
ENTRY_POINTS = {
    "retrievers/build.py": "collate.build",
    "retrievers/search.py": "collate.search",
    "programs/sandbox/__main__.py": "collate.sandbox",
    "evaluate/run.py": "collate.run",
    "evaluate/score.py": "collate.score",
    "evaluate/demo.py": "collate.demo",
    "optimize/compile.py": "collate.compile",
    "data/synth/__main__.py": "collate.synth",
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
    return found


def _sources(package: str):
    return sorted((ROOT / package).rglob("*.py"))


def test_required_top_level_exists():
    for name in [*PACKAGES, "tests", "pyproject.toml"]:
        assert (ROOT / name).exists(), f"missing top-level {name}"


def test_dependencies_point_one_way():
    wrong = []
    for package in PACKAGES:
        for path in _sources(package):
            if str(path.relative_to(ROOT)) in ENTRY_POINTS:
                continue  # checked to be thin below
            for module in _imports(path):
                top = module.split(".")[0]
                if top in ALLOWED and top not in ALLOWED[package]:
                    wrong.append(f"{path.relative_to(ROOT)} imports {module}")
    assert not wrong, "dependency direction violated:\n" + "\n".join(wrong)


# Rooms inside a package, bottom up: what each room may import of its package's rooms (besides itself).
# retrievers: a build writes what an index reads, never the other way (the index serving a room of the
# builder made the reader depend on the writer); its top-level modules (retrievers/*.py) import no room.
RETRIEVER_ROOMS = {
    "documents": set(),
    "embedding": {"documents"},
    "indexing": {"documents", "embedding"},
    "catalog_draft": {"documents"},
    "building": {"documents", "embedding", "indexing", "catalog_draft"},
}
# programs: the sandbox is a leaf (it is copied alone where an ordinary user runs it); the LM plumbing
# and the fact store know no stage; the quote reads the LM's prices and wire format and the fact store's
# repair history, never a stage. The
# top-level modules (analyst.py, batch.py, ...) compose the rooms; protocols.py and result.py, which
# the stages type against, import no room.
PROGRAM_ROOMS = {
    "sandbox": set(),
    "lm": {"sandbox"},  # the settings of a run hold the sandbox's bounds too
    "facts": set(),
    "quote": {"lm", "facts"},
    "stages": {"lm", "facts", "sandbox"},
}
# evaluate: matching decides whether an answer is right (no run, no MLflow); tracking is the one MLflow
# user; runs answer a dataset, keep its folder and track it. Its top-level modules (dataset.py: the
# datasets and their gold; the entry points) import no room.
EVALUATE_ROOMS = {
    "matching": set(),
    "tracking": set(),
    "runs": {"matching", "tracking"},
}
ROOMS = {
    "retrievers": (RETRIEVER_ROOMS, {"*": set()}),
    "evaluate": (EVALUATE_ROOMS, {"*": set()}),
    "programs": (PROGRAM_ROOMS, {"protocols.py": set(), "result.py": set(), "*": set(PROGRAM_ROOMS)}),
}


def _room_imports_wrong(package: str) -> list[str]:
    rooms, top_level = ROOMS[package]
    wrong = []
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = path.relative_to(ROOT / package).parts
        room = parts[0] if len(parts) > 1 else None
        if room:
            allowed = rooms[room] | {room}
        else:
            allowed = top_level.get(parts[0], top_level["*"])
        for module in _imports(path):
            names = module.split(".")
            if names[0] == package and len(names) > 1 and names[1] in rooms and names[1] not in allowed:
                wrong.append(f"{path.relative_to(ROOT)} imports {module}")
    return wrong


def test_rooms_are_the_folders():
    """Every folder of a package with rooms is a room the tests know (a new one gets its place above)."""
    for package, (rooms, _) in ROOMS.items():
        folders = {p.name for p in (ROOT / package).iterdir() if p.is_dir() and any(p.glob("*.py"))}
        assert folders == set(rooms), f"{package}: folders {sorted(folders)} vs rooms {sorted(rooms)}"


def test_retrievers_rooms_point_one_way():
    wrong = _room_imports_wrong("retrievers")
    assert not wrong, "retrievers' rooms import the wrong way:\n" + "\n".join(wrong)


def test_programs_rooms_point_one_way():
    wrong = _room_imports_wrong("programs")
    assert not wrong, "programs' rooms import the wrong way:\n" + "\n".join(wrong)


def test_evaluate_rooms_point_one_way():
    wrong = _room_imports_wrong("evaluate")
    assert not wrong, "evaluate's rooms import the wrong way:\n" + "\n".join(wrong)


def test_the_sandbox_imports_nothing_of_the_program():
    """The sandbox runs alone (tests/sandbox/test_attacks_as_user.py copies it with signatures/ only)."""
    wrong = [
        f"{p.relative_to(ROOT)} imports {m}"
        for p in sorted((ROOT / "programs" / "sandbox").glob("*.py"))
        if p.name != "__main__.py"
        for m in _imports(p)
        if m.split(".")[0] in ALLOWED and not m.startswith(("programs.sandbox", "signatures"))
    ]
    assert not wrong, "\n".join(wrong)


def test_entry_points_only_run_their_command():
    for relative, command in ENTRY_POINTS.items():
        path = ROOT / relative
        assert _imports(path) <= {"sys", command}, f"{relative} does more than run {command}"
        assert len(path.read_text(encoding="utf-8").splitlines()) <= 10, f"{relative} is not thin"


def test_every_main_is_in_the_command_layer():
    """Library below, application on top: a main() outside collate/ is a command in the wrong place
    (the sandbox's runner is not a command: it is the program the sandbox runs)."""
    stray = []
    for package in PACKAGES:
        if package == "collate":
            continue
        for path in _sources(package):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            if any(isinstance(n, ast.FunctionDef) and n.name == "main" for n in tree.body):
                stray.append(str(path.relative_to(ROOT)))
    assert set(stray) <= {"programs/sandbox/runner.py"}, stray


def test_no_lm_in_signatures_or_retrievers():
    for package in ("signatures", "retrievers"):
        for path in _sources(package):
            assert "dspy.LM(" not in path.read_text(encoding="utf-8"), f"{path} builds an LM"


def test_only_settings_builds_an_lm():
    builders = [
        str(p.relative_to(ROOT))
        for package in PACKAGES
        for p in _sources(package)
        if "dspy.LM(" in p.read_text(encoding="utf-8")
    ]
    # the fakes build LMs pointed at themselves (the reader's server, the in-process brain engine)
    assert set(builders) <= {"programs/lm/settings.py", "fakes/server.py", "fakes/engine.py"}, builders


def test_only_tracking_imports_mlflow():
    users = [
        str(p.relative_to(ROOT))
        for package in PACKAGES
        for p in _sources(package)
        if any(m.split(".")[0] == "mlflow" for m in _imports(p))
    ]
    assert set(users) <= {"evaluate/tracking/__init__.py"}, users


def test_bench_imports_the_project_not_the_tests():
    """Benchmarks run as `python -m bench.NAME` from the root: no sys.path patching, nothing from tests/."""
    wrong = []
    for path in sorted((ROOT / "bench").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "sys.path" in text:
            wrong.append(f"{path.relative_to(ROOT)} patches sys.path")
        wrong += [
            f"{path.relative_to(ROOT)} imports {m}" for m in _imports(path) if m.split(".")[0] == "tests"
        ]
    assert not wrong, "\n".join(wrong)


# The demo reader is honest only if it answers from the prompt: the modules behind its replies open no
# file (truth.jsonl, the corpus) and import nothing that reads one.
READER_MODULES = ["brain", "chat_format", "coding", "fields", "reading", "outputs", "server"]
# Project modules the reader may share, held to the same rule: the words and numerals the scorer reads with.
READER_SHARED = {"signatures.vocabulary": "signatures/vocabulary.py"}


def test_the_demo_reader_reads_only_the_prompt():
    readers = {"pathlib", "os", "io", "shutil", "sqlite3", "glob", "csv"}
    wrong = []
    paths = [Path("fakes") / f"{name}.py" for name in READER_MODULES] + [
        Path(p) for p in READER_SHARED.values()
    ]
    for relative in paths:
        path = ROOT / relative
        tree = ast.parse(path.read_text(encoding="utf-8"))
        opens = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "open"]
        project = {
            m
            for m in _imports(path)
            if m.split(".")[0] in ALLOWED and not m.startswith("fakes.") and m not in READER_SHARED
        }
        bad = {m for m in _imports(path) if m.split(".")[0] in readers} | project
        if opens or bad:
            wrong.append(f"{relative}: open() x{len(opens)}, imports {sorted(bad)}")
    assert not wrong, "\n".join(wrong)


PRIVATE_USERS = {"programs/lm/patches.py"}  # every patch of DSPy's or MLflow's internals, behind one check
OUTSIDE = ("dspy", "mlflow", "litellm")


def test_only_the_patches_module_reaches_into_dspy_or_mlflow():
    """No private name imported from DSPy, MLflow or LiteLLM, and no attribute of theirs assigned,
    outside programs/lm/patches.py (four modules patched DSPy and MLflow unaware of each other)."""
    wrong = []
    for package in PACKAGES:
        for path in _sources(package):
            relative = str(path.relative_to(ROOT))
            if relative in PRIVATE_USERS:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            aliases = set()
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    aliases |= {
                        (a.asname or a.name).split(".")[0]
                        for a in node.names
                        if a.name.split(".")[0] in OUTSIDE
                    }
                elif (
                    isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in OUTSIDE
                ):
                    wrong += [
                        f"{relative}: imports {node.module}.{a.name}"
                        for a in node.names
                        if a.name.startswith("_")
                    ]
                    aliases |= {a.asname or a.name for a in node.names}
            for node in ast.walk(tree):
                targets = node.targets if isinstance(node, ast.Assign) else []
                for target in (t for t in targets for t in (t.elts if isinstance(t, ast.Tuple) else [t])):
                    root = target
                    while isinstance(root, ast.Attribute):
                        root = root.value
                    if (
                        isinstance(target, ast.Attribute)
                        and isinstance(root, ast.Name)
                        and root.id in aliases
                    ):
                        wrong.append(f"{relative}:{node.lineno}: assigns {ast.unparse(target)}")
    assert not wrong, "\n".join(wrong)
