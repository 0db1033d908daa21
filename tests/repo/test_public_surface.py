"""The public surface, frozen: names, signatures, accessor methods, result fields and columns,
and the command line.

``tests/golden/surface.json`` records the surface as it was released. The test allows only
additions: every recorded name must still exist, every recorded parameter must keep its
position, kind and default, every recorded result field and ``to_frame()`` column must keep
its place. New keyword-only options and new names may be added. To record a deliberate
addition, run ``CLUSTERSTATS_UPDATE_GOLDEN=1 python -m pytest tests/repo/test_public_surface.py``
and review the diff.
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import os
from pathlib import Path
from typing import Any

import pytest

import clusterstats as cs

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "surface.json"
UPDATE = os.environ.get("CLUSTERSTATS_UPDATE_GOLDEN") == "1"


def _signature(func: Any, *, skip_self: bool = False) -> list[str]:
    """One ``"name | KIND | default"`` string per parameter."""
    rows = []
    for p in inspect.signature(func).parameters.values():
        if skip_self and p.name == "self":
            continue
        default = "<required>" if p.default is p.empty else repr(p.default)
        rows.append(f"{p.name} | {p.kind.name} | {default}")
    return rows


def _parts(rows: list[str]) -> list[list[str]]:
    return [row.split(" | ", 2) for row in rows]


def _accessors() -> dict[str, Any]:
    from clusterstats import _accessors

    found = {"pandas": _accessors.EvalAccessor, "xarray": _accessors.DatasetEvalAccessor}
    try:
        import dask.dataframe  # noqa: F401 - registers the dask accessor

        found["dask"] = _accessors.DaskEvalAccessor
    except ImportError:  # pragma: no cover - dask is a test extra
        pass
    return found


def _cli() -> dict[str, list[str]]:
    from clusterstats.cli import build_parser

    parser = build_parser()
    commands: dict[str, list[str]] = {
        "": sorted(o for a in parser._actions for o in a.option_strings)
    }
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                options = []
                for a in sub._actions:
                    options += a.option_strings or [f"<{a.dest}>"]
                commands[name] = sorted(options)
    return commands


def surface() -> dict[str, Any]:
    functions, classes = {}, {}
    for name in cs.__all__:
        obj = getattr(cs, name)
        if inspect.isclass(obj):
            entry: dict[str, Any] = {
                "kind": "exception" if issubclass(obj, BaseException) else "class"
            }
            if dataclasses.is_dataclass(obj):
                entry["fields"] = [f.name for f in dataclasses.fields(obj)]
            if isinstance(getattr(obj, "columns", None), tuple):
                entry["columns"] = list(obj.columns)
            # methods of our own, not those a builtin base lends on some Pythons only
            # (BaseException.add_note is new in 3.11)
            inherited = set(dir(BaseException)) | set(dir(object))
            entry["methods"] = sorted(
                m
                for m in dir(obj)
                if not m.startswith("_") and callable(getattr(obj, m, None)) and m not in inherited
            )
            classes[name] = entry
        elif callable(obj):
            functions[name] = _signature(obj)
    accessors = {
        backend: {
            m: _signature(getattr(cls, m), skip_self=True)
            for m in sorted(dir(cls))
            if not m.startswith("_") and callable(getattr(cls, m))
        }
        for backend, cls in _accessors().items()
    }
    datasets = {name: _signature(getattr(cs.datasets, name)) for name in ("list", "load", "info")}
    return {
        "all": sorted(cs.__all__),
        "functions": functions,
        "classes": classes,
        "accessors": accessors,
        "datasets": datasets,
        "cli": _cli(),
    }


def _compatible(old_rows: list[str], new_rows: list[str], where: str) -> list[str]:
    """Old parameters keep their order, kind and default (a required one may gain a default);
    new ones may only be appended as keyword-only options (or inserted among them)."""
    old, new = _parts(old_rows), _parts(new_rows)
    problems = []
    new_by_name = {p[0]: (i, p) for i, p in enumerate(new)}
    positional_old = [p[:2] for p in old if p[1] != "KEYWORD_ONLY"]
    positional_new = [p[:2] for p in new if p[1] != "KEYWORD_ONLY"]
    if positional_new[: len(positional_old)] != positional_old:
        problems.append(
            f"{where}: positional parameters changed: {positional_old} -> {positional_new}"
        )
    for extra in positional_new[len(positional_old) :]:
        if extra[2] == "<required>":
            problems.append(f"{where}: new required positional parameter {extra[0]!r}")
    for name, kind, default in old:
        if name not in new_by_name:
            problems.append(f"{where}: parameter {name!r} was removed")
            continue
        _, (_, new_kind, new_default) = new_by_name[name]
        loosened = default == "<required>" and new_default != "<required>"
        if new_kind != kind or (new_default != default and not loosened):
            problems.append(
                f"{where}: parameter {name!r} changed from {kind}={default} to "
                f"{new_kind}={new_default}"
            )
    for name, kind, default in new:
        if name not in {p[0] for p in old} and kind == "KEYWORD_ONLY" and default == "<required>":
            problems.append(f"{where}: new required keyword {name!r}")
    return problems


def _prefix(old: list[str], new: list[str], where: str) -> list[str]:
    if new[: len(old)] != old:
        return [f"{where}: {old} is no longer a prefix of {new}"]
    return []


def test_public_surface_only_grows():
    now = surface()
    if UPDATE:
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    recorded = json.loads(GOLDEN.read_text(encoding="utf-8"))
    problems = [f"name {n!r} is no longer public" for n in recorded["all"] if n not in now["all"]]
    for name, old in recorded["functions"].items():
        if name in now["functions"]:
            problems += _compatible(old, now["functions"][name], name)
    for name, old in recorded["classes"].items():
        new = now["classes"].get(name, {})
        if "fields" in old:  # the set of fields; their order is the columns' order below
            lost = sorted(set(old["fields"]) - set(new.get("fields", [])))
            problems += [f"{name}.{field} was removed" for field in lost]
        if "columns" in old:
            problems += _prefix(old["columns"], new.get("columns", []), f"{name}.columns")
        problems += [
            f"{name}.{m}() was removed" for m in old["methods"] if m not in new.get("methods", [])
        ]
    for backend, methods in recorded["accessors"].items():
        if backend not in now["accessors"]:
            continue
        for method, old in methods.items():
            new = now["accessors"][backend].get(method)
            if new is None:
                problems.append(f"{backend} accessor lost .{method}()")
            else:
                problems += _compatible(old, new, f"{backend}.eval.{method}")
    for name, old in recorded["datasets"].items():
        problems += _compatible(old, now["datasets"][name], f"datasets.{name}")
    for command, options in recorded["cli"].items():
        missing = sorted(set(options) - set(now["cli"].get(command, [])))
        if missing:
            problems.append(f"clusterstats {command or '(top level)'} lost {missing}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("backend", ["pandas", "xarray", "dask"])
def test_recorded_surface_covers_every_accessor(backend):
    recorded = json.loads(GOLDEN.read_text(encoding="utf-8"))
    if backend not in _accessors():
        pytest.skip(f"{backend} not installed")
    assert backend in recorded["accessors"]
