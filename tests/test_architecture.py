"""The numeric core never imports pandas or xarray; accessors only delegate."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import clusterstats
from clusterstats import _pandas

CORE = Path(clusterstats.__file__).parent / "core"
ALLOWED_TOP_LEVEL = {
    "numpy",
    "scipy",
    "math",
    "typing",
    "dataclasses",
    "__future__",
    "collections",
    "clusterstats",
}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_core_imports_only_numpy_scipy_and_itself():
    files = sorted(CORE.glob("*.py"))
    assert files
    for path in files:
        for module in imported_modules(path):
            top = module.split(".")[0]
            assert top in ALLOWED_TOP_LEVEL, f"{path.name} imports {module}"
            if top == "clusterstats":
                assert module.startswith(("clusterstats.core", "clusterstats.errors")), (
                    f"{path.name} imports {module}"
                )


def test_accessor_methods_are_one_line_delegations():
    for name in ("cluster_ci", "icc", "design_effect"):
        source = inspect.getsource(getattr(_pandas.EvalAccessor, name))
        body = [
            line.strip()
            for line in source.splitlines()[1:]
            if line.strip() and not line.strip().startswith(('"""', "#"))
        ]
        assert body == [f"return api.{name}(self._obj, outcome, by, **options)"], body
