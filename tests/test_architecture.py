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
    import textwrap

    for name in ("cluster_ci", "icc", "design_effect", "paired_delta", "compare"):
        source = textwrap.dedent(inspect.getsource(getattr(_pandas.EvalAccessor, name)))
        body = ast.parse(source).body[0].body
        statements = [
            node
            for node in body
            if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
        ]  # docstring
        assert len(statements) == 1, name
        call = statements[0].value
        assert isinstance(statements[0], ast.Return), name
        assert isinstance(call, ast.Call), name
        assert ast.unparse(call.func) == f"api.{name}", name
        assert ast.unparse(call.args[0]) == "self._obj", name
