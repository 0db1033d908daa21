"""The shared docstring passages (``clusterstats/_docstrings.py``) reach every reader.

A result method's docstring may hold ``{name}`` lines that stand for a passage written once.
Importing fills them (``help()``, ``__doc__``, the doctests); the documentation site reads the
sources and fills them with its griffe extension (``tools/griffe_shared_docstrings.py``).
Both must give the whole text, the same text, with numpy sections that still parse.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import textwrap
from pathlib import Path

import pytest

import clusterstats
from clusterstats._docstrings import PASSAGES, fill

PACKAGE = Path(clusterstats.__file__).parent
REPO = PACKAGE.parent
PLACEHOLDER = re.compile(r"^([ \t]*)\{(\w+)\}[ \t]*$", re.MULTILINE)


def _placeholders_in_sources() -> dict[str, list[tuple[str, str]]]:
    """``"module.Class.method"`` -> the (indent relative to the text, passage name) of each
    placeholder line of its docstring, for every docstring of the package's sources that
    holds one (methods or not)."""
    found: dict[str, list[tuple[str, str]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)):
                continue
            # cleaned as ``inspect.cleandoc`` does: Python 3.13 strips the common indent of a
            # docstring when it compiles it, so only the indent relative to the text is fixed
            placeholders = PLACEHOLDER.findall(ast.get_docstring(node, clean=True) or "")
            if placeholders:
                parent = parents.get(node)
                owner = parent.name if isinstance(parent, ast.ClassDef) else "<not a method>"
                found[f"{module}.{owner}.{getattr(node, 'name', '')}"] = placeholders
    return found


FILLED = _placeholders_in_sources()


def _runtime(path: str):
    """The function a ``"module.Class.method"`` path names, as importing made it."""
    module, cls, method = path.rsplit(".", 2)
    member = vars(getattr(importlib.import_module(module), cls))[method]
    return getattr(member, "__func__", member)


def test_the_result_methods_use_the_shared_passages():
    # the plots and the metrics of the results write these once (issue 45): if a refactor
    # drops the placeholders, this test says so rather than passing on an empty list
    expected = {
        "clusterstats._result.GroupedResults.plot",
        "clusterstats._result.GroupedResults.to_metrics",
        "clusterstats._result.TableResult.to_metrics",
        "clusterstats.stats.mean.ClusterCI.plot",
        "clusterstats.stats.diagnostics.Report.plot",
        "clusterstats.gating.GateReport.to_metrics",
        "clusterstats.harness.LmEvalTable.to_metrics",
    }
    assert expected <= set(FILLED)
    used = {name for placeholders in FILLED.values() for _, name in placeholders}
    assert used == set(PASSAGES), f"passages nothing uses: {sorted(set(PASSAGES) - used)}"


@pytest.mark.parametrize("path", sorted(FILLED))
def test_import_fills_every_placeholder(path):
    assert "<not a method>" not in path, f"{path}: only methods of result classes are filled"
    doc = inspect.cleandoc(_runtime(path).__doc__)
    assert not PLACEHOLDER.search(doc), f"{path}: a placeholder is left in __doc__"
    for indent, name in FILLED[path]:
        # the passage stands whole in the docstring, at the indent of its placeholder
        assert textwrap.indent(PASSAGES[name], indent) in doc, f"{path}: {name}"


def test_the_filled_text_is_what_help_shows():
    doc = inspect.getdoc(clusterstats.GroupedResults.plot) or ""
    assert "percent : bool, optional" in doc
    assert "Where to draw (a new figure by default)." in doc
    assert '>>> matplotlib.use("Agg")' in doc


def test_fill_keeps_the_indent_and_other_braces():
    doc = '    A.\n\n    {plot_ax}\n    kind : {"a", "b"}\n    >>> {}\n    {}\n'
    assert fill(doc) == (
        "    A.\n\n"
        "    ax : matplotlib Axes, optional\n"
        "        Where to draw (a new figure by default).\n"
        '    kind : {"a", "b"}\n    >>> {}\n    {}\n'
    )
    assert fill("\n\n    {metrics_parameters}\n").count("\n\n") == 2  # blank lines stay blank
    assert "    \n" not in fill("    {metrics_parameters}")


def test_an_unknown_placeholder_raises():
    with pytest.raises(KeyError, match="plot_axes"):
        fill("    {plot_axes}\n")


# -- the documentation site --------------------------------------------------------------------

griffe = pytest.importorskip("griffe")


@pytest.fixture(scope="module")
def site_package():
    """The package as the site's mkdocstrings reads it: griffe, statically, with the extension
    ``mkdocs.yml`` lists."""
    extension = REPO / "tools" / "griffe_shared_docstrings.py"
    assert f"{extension.relative_to(REPO).as_posix()}:SharedDocstrings" in (
        (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    )
    extensions = griffe.load_extensions(f"{extension}:SharedDocstrings")
    return griffe.load(
        "clusterstats", search_paths=[str(REPO)], extensions=extensions, docstring_parser="numpy"
    )


@pytest.mark.parametrize("path", sorted(p for p in FILLED if "<not a method>" not in p))
def test_the_site_renders_what_import_gives(site_package, path):
    method = site_package[path.removeprefix("clusterstats.")]
    assert method.docstring.value == inspect.cleandoc(_runtime(path).__doc__)
    # the numpy sections still parse: every parameter of the signature is documented
    documented = {
        p.name.lstrip("*")
        for section in method.docstring.parsed
        if section.kind.value == "parameters"
        for p in section.value
    }
    parameters = set(inspect.signature(_runtime(path)).parameters) - {"self"}
    assert parameters <= documented, f"{path}: {sorted(parameters - documented)}"
