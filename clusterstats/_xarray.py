"""The ``Dataset.eval`` accessor, for Datasets laid out as (case, rerun).

Like the pandas accessor it stays callable and forwards to the original ``Dataset.eval``, so
``ds.eval("a + b")`` keeps working after ``import clusterstats``; its methods delegate to the
functional API (``_dataset_api`` and ``reruns``). It holds no state (xarray caches one
accessor per object).
"""

from __future__ import annotations

import warnings
from typing import Any

import xarray as xr

from clusterstats import _dataset_api, reruns

_ORIGINAL_EVAL = xr.Dataset.eval


class DatasetEvalAccessor:
    """Clustered statistics of a (case, rerun) Dataset (``ds.eval.cluster_ci("reward")``),
    and xarray's own ``Dataset.eval`` when called (``ds.eval("a + b")``).

    Dims are named ``case`` and ``rerun`` unless ``case=``/``rerun=`` say otherwise; any other
    dim (e.g. ``model``) gives one result per label, as a GroupedResults.
    """

    __slots__ = ("_obj",)

    def __init__(self, xarray_obj: xr.Dataset) -> None:
        self._obj = xarray_obj

    def __call__(self, statement: str, *args: Any, **kwargs: Any) -> Any:
        """xarray's own :meth:`xarray.Dataset.eval`, unchanged."""
        return _ORIGINAL_EVAL(self._obj, statement, *args, **kwargs)

    def cluster_ci(self, outcome, by=None, **options) -> Any:
        """Clustered interval of the mean of the runs (cases are the clusters unless ``by``
        names a coordinate along ``case``); see :func:`clusterstats.cluster_ci`."""
        return _dataset_api.cluster_ci(self._obj, outcome, by, **options)

    def icc(self, outcome, by=None, **options) -> Any:
        """ICC of the runs within cases (or within ``by``); see :func:`clusterstats.icc`."""
        return _dataset_api.icc(self._obj, outcome, by, **options)

    def design_effect(self, outcome, by=None, **options) -> Any:
        """Design effect of the clustering; see :func:`clusterstats.design_effect`."""
        return _dataset_api.design_effect(self._obj, outcome, by, **options)

    def paired_delta(self, other, outcome, by=None, **options) -> Any:
        """Paired difference with ``other`` (a Dataset), cases matched by label; see
        :func:`clusterstats.paired_delta`."""
        return _dataset_api.paired_delta(self._obj, other, outcome, by, **options)

    def pass_at_k(self, outcome, **options) -> Any:
        """pass@k with a clustered interval; see :func:`clusterstats.pass_at_k`."""
        return reruns.pass_at_k(self._obj, outcome, **options)

    def pass_hat_k(self, outcome, **options) -> Any:
        """pass^k with a clustered interval; see :func:`clusterstats.pass_hat_k`."""
        return reruns.pass_hat_k(self._obj, outcome, **options)

    def flakiness(self, outcome, **options) -> Any:
        """Flaky cases and the worth of a rerun; see :func:`clusterstats.flakiness`."""
        return reruns.flakiness(self._obj, outcome, **options)


def register() -> None:
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*overriding a preexisting attribute")
        xr.register_dataset_accessor("eval")(DatasetEvalAccessor)
