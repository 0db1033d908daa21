"""A griffe extension for the documentation site: fill the shared docstring passages.

mkdocstrings reads the docstrings from the sources (griffe's static analysis), where a result
method's docstring may still hold ``{name}`` placeholder lines that the class fills only when
it is imported (``clusterstats/_docstrings.py``). This extension fills them in what the site
renders with that module's own ``fill``, loaded by its path from the package griffe found, so
the site, ``help()`` and the doctests show the same text. ``mkdocs.yml`` lists it under the
python handler's ``extensions``; an unknown placeholder fails the build (``fill`` raises).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import griffe

PACKAGE = "clusterstats"


def _load_fill(package_dir: Path) -> Callable[[str], str]:
    """``fill`` of the package's ``_docstrings.py``, without importing the package."""
    spec = importlib.util.spec_from_file_location(
        "_clusterstats_shared_docstrings", package_dir / "_docstrings.py"
    )
    if spec is None or spec.loader is None:  # pragma: no cover - the file is part of the package
        raise ImportError(f"no _docstrings.py in {package_dir}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.fill


def _methods(obj: griffe.Object) -> Iterator[griffe.Function]:
    """The functions defined in the classes of ``obj`` and of its submodules (not aliases)."""
    for member in obj.members.values():
        if member.is_alias:
            continue
        if member.is_function and obj.is_class:
            yield member
        elif member.is_module or member.is_class:
            yield from _methods(member)


class SharedDocstrings(griffe.Extension):
    """Fill the placeholders of the methods' docstrings once the package is loaded."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        if pkg.name != PACKAGE:
            return
        fill = _load_fill(Path(pkg.filepath).parent)
        for method in _methods(pkg):
            if method.docstring is not None:
                method.docstring.value = fill(method.docstring.value)
