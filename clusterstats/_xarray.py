"""The ``Dataset.eval`` accessor.

Like the pandas accessor it stays callable and forwards to the original ``Dataset.eval``, so
``ds.eval("a + b")`` keeps working after ``import clusterstats``. It holds no state (xarray
caches one accessor per object).
"""

from __future__ import annotations

import warnings
from typing import Any

import xarray as xr

_ORIGINAL_EVAL = xr.Dataset.eval


class DatasetEvalAccessor:
    """xarray's own ``Dataset.eval`` when called (``ds.eval("a + b")``)."""

    __slots__ = ("_obj",)

    def __init__(self, xarray_obj: xr.Dataset) -> None:
        self._obj = xarray_obj

    def __call__(self, statement: str, *args: Any, **kwargs: Any) -> Any:
        """xarray's own :meth:`xarray.Dataset.eval`, unchanged."""
        return _ORIGINAL_EVAL(self._obj, statement, *args, **kwargs)


def register() -> None:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*overriding a preexisting attribute")
        xr.register_dataset_accessor("eval")(DatasetEvalAccessor)
