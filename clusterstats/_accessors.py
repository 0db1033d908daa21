"""The ``.eval`` accessors of pandas DataFrames, xarray Datasets and dask DataFrames.

pandas, xarray and dask already have ``.eval`` (and ``DataFrame.query`` works by calling
``self.eval(...)``), so each accessor stays callable: ``df.eval("c = a + b")`` forwards to the
original method, while ``df.eval.cluster_ci(...)`` and friends call the functional API with
the object as ``data``. Every method is one line: the functions dispatch on the type of the
data, so the three accessors share their methods. They hold no state (pandas 3 builds a new
accessor at every attribute access).

dask is registered without importing it: at once if ``dask.dataframe`` is already imported,
otherwise right after it is.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import warnings
from collections.abc import Callable
from typing import Any

import pandas as pd
import xarray as xr

from clusterstats import comparison, diagnostics, mean, missing, paired, planning, reruns, strata

__all__ = ["DaskEvalAccessor", "DatasetEvalAccessor", "EvalAccessor", "register"]


class _StatisticsAccessor:
    """The methods every ``.eval`` accessor has; ``_obj`` is the data."""

    __slots__ = ("_obj",)

    def __init__(self, obj: Any) -> None:
        self._obj = obj

    def cluster_ci(self, outcome, by=None, **options) -> Any:
        """Clustered confidence interval of the mean; see :func:`clusterstats.cluster_ci`."""
        return mean.cluster_ci(self._obj, outcome, by, **options)

    def icc(self, outcome, by=None, **options) -> Any:
        """Intraclass correlation; see :func:`clusterstats.icc`."""
        return mean.icc(self._obj, outcome, by, **options)

    def design_effect(self, outcome, by=None, **options) -> Any:
        """Design effect and effective n; see :func:`clusterstats.design_effect`."""
        return mean.design_effect(self._obj, outcome, by, **options)

    def paired_delta(self, other, outcome, by=None, **options) -> Any:
        """Paired difference with ``other`` (a frame, a column, or a Dataset); see
        :func:`clusterstats.paired_delta`."""
        return paired.paired_delta(self._obj, other, outcome, by, **options)

    def compare(self, outcome, by=None, **options) -> Any:
        """Many models on shared items; see :func:`clusterstats.compare`."""
        return comparison.compare(self._obj, outcome, by, **options)

    def missing_report(self, outcome, by=None, **options) -> Any:
        """Where outcomes are missing, why, and how much it matters; see
        :func:`clusterstats.missing_report`."""
        return missing.missing_report(self._obj, outcome, by, **options)

    def stratum_table(self, outcome, by=None, **options) -> Any:
        """Per-stratum and overall estimates; see :func:`clusterstats.stratum_table`."""
        return strata.stratum_table(self._obj, outcome, by, **options)

    def plan(self, outcome, by=None, **options) -> Any:
        """Plan the next budget from this pilot; see :func:`clusterstats.pilot_plan`."""
        return planning.pilot_plan(self._obj, outcome, by, **options)

    def report(self, outcome, by=None, **options) -> Any:
        """What to report about the result; see :func:`clusterstats.report`."""
        return diagnostics.report(self._obj, outcome, by, **options)

    def check_clustering(self, outcome, candidates=(), **options) -> Any:
        """Which grouping to cluster by; see :func:`clusterstats.check_clustering`."""
        return diagnostics.check_clustering(self._obj, outcome, candidates, **options)

    def pass_at_k(self, outcome, **options) -> Any:
        """pass@k of cases run several times; see :func:`clusterstats.pass_at_k`."""
        return reruns.pass_at_k(self._obj, outcome, **options)

    def pass_hat_k(self, outcome, **options) -> Any:
        """pass^k of cases run several times; see :func:`clusterstats.pass_hat_k`."""
        return reruns.pass_hat_k(self._obj, outcome, **options)

    def flakiness(self, outcome, **options) -> Any:
        """Flaky cases and the worth of a rerun; see :func:`clusterstats.flakiness`."""
        return reruns.flakiness(self._obj, outcome, **options)


class EvalAccessor(_StatisticsAccessor):
    """Clustered statistics on a DataFrame (``df.eval.cluster_ci(...)``), and pandas' own
    ``DataFrame.eval`` when called (``df.eval("c = a + b")``)."""

    __slots__ = ()

    def __call__(self, expr: str, *args: Any, **kwargs: Any) -> Any:
        """pandas' own :meth:`pandas.DataFrame.eval`, unchanged (``df.query`` relies on it)."""
        # pandas finds ``@local`` names ``level`` frames above DataFrame.eval; this call adds one.
        kwargs["level"] = kwargs.pop("level", 0) + 1
        return _ORIGINAL["pandas"](self._obj, expr, *args, **kwargs)


class DatasetEvalAccessor(_StatisticsAccessor):
    """Clustered statistics of a (case, rerun) Dataset (``ds.eval.cluster_ci("reward")``),
    and xarray's own ``Dataset.eval`` when called (``ds.eval("a + b")``).

    Dims are named ``case`` and ``rerun`` unless ``case=``/``rerun=`` say otherwise; any other
    dim (e.g. ``model``) gives one result per label, as a GroupedResults.
    """

    __slots__ = ()

    def __call__(self, statement: str, *args: Any, **kwargs: Any) -> Any:
        """xarray's own :meth:`xarray.Dataset.eval`, unchanged."""
        return _ORIGINAL["xarray"](self._obj, statement, *args, **kwargs)


class DaskEvalAccessor(_StatisticsAccessor):
    """Clustered statistics on a dask DataFrame (reduced lazily where the statistic allows),
    and dask's own ``DataFrame.eval`` when called (``ddf.eval("c = a + b")``)."""

    __slots__ = ()

    def __call__(self, expr: str, *args: Any, **kwargs: Any) -> Any:
        """dask's own ``DataFrame.eval``, unchanged."""
        return _ORIGINAL["dask"](self._obj, expr, *args, **kwargs)


# The original ``eval`` of each library, captured before the accessor replaces it.
_ORIGINAL: dict[str, Callable[..., Any]] = {
    "pandas": pd.DataFrame.eval,
    "xarray": xr.Dataset.eval,
}


def _quietly(register_accessor: Callable[[type], Any], accessor: type) -> None:
    with warnings.catch_warnings():
        # The libraries warn that the name shadows their eval: that is intended (see above).
        warnings.filterwarnings("ignore", message=".*overriding a preexisting attribute")
        register_accessor(accessor)


def register_dask() -> None:
    """Register ``.eval`` on dask DataFrames (dask.dataframe must be importable)."""
    if "dask" in _ORIGINAL:
        return
    from clusterstats.adapters.dask import require_dask

    # sys.modules first: right after dask.dataframe has run, dask's attribute is not set yet
    dd = sys.modules.get("dask.dataframe") or require_dask()
    from dask.dataframe.extensions import register_dataframe_accessor

    _ORIGINAL["dask"] = dd.DataFrame.eval
    _quietly(register_dataframe_accessor("eval"), DaskEvalAccessor)


class _RegisterWhenImported(importlib.abc.MetaPathFinder):
    """Registers the dask accessor right after ``dask.dataframe`` is first imported, so that
    ``import clusterstats`` need not import dask (about a second) to support it."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != "dask.dataframe":
            return None
        sys.meta_path.remove(self)  # one shot; the lookup below must not come back here
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        exec_module = loader.exec_module

        def exec_then_register(module: Any) -> None:
            exec_module(module)
            register_dask()

        loader.exec_module = exec_then_register  # type: ignore[method-assign]
        return spec


def register() -> None:
    """Register the accessors: pandas and xarray now, dask now or when it is imported."""
    _quietly(pd.api.extensions.register_dataframe_accessor("eval"), EvalAccessor)
    _quietly(xr.register_dataset_accessor("eval"), DatasetEvalAccessor)
    if "dask.dataframe" in sys.modules:
        register_dask()
    elif importlib.util.find_spec("dask") is not None:
        sys.meta_path.insert(0, _RegisterWhenImported())
