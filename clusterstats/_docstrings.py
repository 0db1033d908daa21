"""Docstring passages that several result methods share, written once.

A method of a result class (every class deriving from :class:`SharedDocstrings`: ``Result``,
``TableResult`` and ``GroupedResults``) may hold in its docstring a line that is only
``{name}``, where ``name`` is a key of :data:`PASSAGES`. When the class is created the line is
replaced by that passage, indented as the line was, so ``help()``, ``__doc__`` and the doctests
read the whole text. The documentation site reads docstrings from the sources, not from the
imported objects; its griffe extension (``tools/griffe_shared_docstrings.py``, listed in
``mkdocs.yml``) fills them with the same :func:`fill`, loading this file by its path: so this
module imports nothing from ``clusterstats``.

Examples
--------
>>> print(fill("Parameters\\n----------\\n    {plot_ax}"))
Parameters
----------
    ax : matplotlib Axes, optional
        Where to draw (a new figure by default).
"""

from __future__ import annotations

import re
from types import FunctionType
from typing import Any

__all__ = ["PASSAGES", "SharedDocstrings", "fill"]

_PLOT_AX = """\
ax : matplotlib Axes, optional
    Where to draw (a new figure by default)."""

#: The shared passages by name, each written flush left (a placeholder gives the indent).
PASSAGES: dict[str, str] = {
    "plot_ax": _PLOT_AX,
    # the forest of one interval per group: GroupedResults.plot and Report.plot
    "group_forest_parameters": f"""\
Parameters
----------
{_PLOT_AX}
order : {{"estimate", "label"}}, default "estimate"
    Rows sorted by estimate, highest at the top, or in the groups' own order.
values : bool, default False
    Print each estimate above its interval.
percent : bool, optional
    Show the values as percentages. By default they are when every estimate and
    bound lies in [0, 1] (pass rates).""",
    "plot_returns": """\
Returns
-------
matplotlib Axes""",
    # the examples draw into memory: they run without a display (doctests, CI)
    "plot_examples_head": """\
Examples
--------
>>> import matplotlib
>>> matplotlib.use("Agg")""",
    "metrics_parameters": """\
Parameters
----------
prefix : str
    Put before every key, e.g. ``"eval/"``.

Returns
-------
dict of str to float""",
    "metrics_row_clash": """\
Raises
------
MetricKeyError
    Two rows whose labels give the same key.""",
}

# A placeholder stands alone on its line; braces elsewhere (type specs, dict output) are text.
_PLACEHOLDER = re.compile(r"^([ \t]*)\{(\w+)\}[ \t]*$", re.MULTILINE)


def fill(doc: str) -> str:
    """``doc`` with every placeholder line replaced by its passage, indented as the line.

    Raises
    ------
    KeyError
        A placeholder that names no passage (a typo would otherwise reach the docs).
    """

    def passage(match: re.Match[str]) -> str:
        indent, name = match.groups()
        if name not in PASSAGES:
            raise KeyError(f"{{{name}}} names no shared docstring passage ({sorted(PASSAGES)})")
        return "\n".join(indent + line if line else line for line in PASSAGES[name].split("\n"))

    return _PLACEHOLDER.sub(passage, doc)


class SharedDocstrings:
    """Mixin: a subclass's methods have their docstring placeholders filled at class creation."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for member in vars(cls).values():
            function = getattr(member, "__func__", member)  # classmethod, staticmethod
            if isinstance(function, FunctionType) and function.__doc__:
                function.__doc__ = fill(function.__doc__)
