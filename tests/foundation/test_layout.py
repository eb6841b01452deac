"""The shape of the code: dependencies point one way, and only the allowed modules touch LMs and MLflow."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ["signatures", "retrievers", "programs", "evaluate", "optimize", "data", "collate"]
# What each package may import from this project (itself included).
ALLOWED = {
    "signatures": {"signatures"},
    "retrievers": {"signatures", "retrievers"},
    "data": {"data"},
    "programs": {"signatures", "retrievers", "programs"},
    "evaluate": {"signatures", "retrievers", "programs", "evaluate", "data"},
    "optimize": {"signatures", "retrievers", "programs", "evaluate", "optimize", "data"},
    # the command line on top: it may use every layer (so `ask` loads datasets the one way, evaluate's)
    "collate": {"signatures", "retrievers", "programs", "evaluate", "optimize", "data", "collate"},
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
            for module in _imports(path):
                top = module.split(".")[0]
                if top in ALLOWED and top not in ALLOWED[package]:
                    wrong.append(f"{path.relative_to(ROOT)} imports {module}")
    assert not wrong, "dependency direction violated:\n" + "\n".join(wrong)


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
    assert set(builders) <= {"programs/runtime/settings.py"}, builders


def test_only_tracking_imports_mlflow():
    users = [
        str(p.relative_to(ROOT))
        for package in PACKAGES
        for p in _sources(package)
        if any(m.split(".")[0] == "mlflow" for m in _imports(p))
    ]
    assert set(users) <= {"evaluate/tracking.py"}, users
