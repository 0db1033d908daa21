"""scipy's modules, imported when first used rather than when clusterstats is imported.

``import scipy.special`` alone takes about 0.2 s and ``scipy.stats`` 0.5 s more, paid by
every ``import clusterstats`` (and every ``clusterstats --help``) although most sessions
use a few of their functions, late. Each name below stands for its module and imports it on
the first attribute looked up (Python caches the module, so later lookups cost one
dictionary access).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["deferred", "optimize", "special", "stats"]


class _Deferred:
    """A module imported on first attribute access."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported when first used>"


def deferred(name: str) -> Any:
    """The module ``name``, imported on its first attribute lookup (the ``.eval`` accessors
    use it for the statistics, so that registering them costs no statistic's import)."""
    return _Deferred(name)


special: Any = _Deferred("scipy.special")
stats: Any = _Deferred("scipy.stats")
optimize: Any = _Deferred("scipy.optimize")
