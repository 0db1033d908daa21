"""The numeric core never imports pandas or xarray; accessors only delegate."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import clusterstats
from clusterstats import _pandas, _xarray

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


def _delegation(method) -> ast.Call:
    """The single call a method's body consists of (its docstring aside)."""
    import textwrap

    source = textwrap.dedent(inspect.getsource(method))
    body = ast.parse(source).body[0].body
    statements = [
        node
        for node in body
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
    ]  # docstring
    assert len(statements) == 1, method.__qualname__
    assert isinstance(statements[0], ast.Return), method.__qualname__
    call = statements[0].value
    assert isinstance(call, ast.Call), method.__qualname__
    return call


def test_accessor_methods_are_one_line_delegations():
    for name in ("cluster_ci", "icc", "design_effect", "paired_delta", "compare"):
        call = _delegation(getattr(_pandas.EvalAccessor, name))
        assert ast.unparse(call.func) == f"api.{name}", name
        assert ast.unparse(call.args[0]) == "self._obj", name
    targets = {
        "pass_at_k": "reruns.pass_at_k",
        "pass_hat_k": "reruns.pass_hat_k",
        "flakiness": "reruns.flakiness",
        "missing_report": "api.missing_report",
        "plan": "planning.pilot_plan",
        "report": "diagnostics.report",
        "check_clustering": "diagnostics.check_clustering",
    }
    for name, target in targets.items():
        call = _delegation(getattr(_pandas.EvalAccessor, name))
        assert ast.unparse(call.func) == target, name
        assert ast.unparse(call.args[0]) == "self._obj", name


def test_dataset_accessor_methods_are_one_line_delegations():
    targets = {
        "cluster_ci": "_dataset_api",
        "icc": "_dataset_api",
        "design_effect": "_dataset_api",
        "paired_delta": "_dataset_api",
        "pass_at_k": "reruns",
        "pass_hat_k": "reruns",
        "flakiness": "reruns",
    }
    for name, module in targets.items():
        call = _delegation(getattr(_xarray.DatasetEvalAccessor, name))
        assert ast.unparse(call.func) == f"{module}.{name}", name
        assert ast.unparse(call.args[0]) == "self._obj", name
