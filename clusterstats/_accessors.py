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

from clusterstats.core._lazy import deferred

# the statistics are imported at the first method call, not when the accessors register
diagnostics = deferred("clusterstats.stats.diagnostics")
judged = deferred("clusterstats.stats.judged")
judged_compare = deferred("clusterstats.stats.judged_compare")
judged_plan = deferred("clusterstats.stats.judged_plan")
mean = deferred("clusterstats.stats.mean")
missing = deferred("clusterstats.stats.missing")
paired = deferred("clusterstats.stats.paired")
planning = deferred("clusterstats.stats.planning")
reruns = deferred("clusterstats.stats.reruns")
sequential = deferred("clusterstats.stats.sequential")
slices = deferred("clusterstats.stats.slices")
strata = deferred("clusterstats.stats.strata")

__all__ = ["DaskEvalAccessor", "DatasetEvalAccessor", "EvalAccessor", "register"]


class _StatisticsAccessor:
    """The methods every ``.eval`` accessor has; ``_obj`` is the data."""

    __slots__ = ("_obj",)

    def __init__(self, obj: Any) -> None:
        self._obj = obj

    def cluster_ci(self, outcome, by=None, **options) -> Any:
        """Clustered confidence interval of the mean; see ``clusterstats.cluster_ci``."""
        return mean.cluster_ci(self._obj, outcome, by, **options)

    def icc(self, outcome, by=None, **options) -> Any:
        """Intraclass correlation; see ``clusterstats.icc``."""
        return mean.icc(self._obj, outcome, by, **options)

    def design_effect(self, outcome, by=None, **options) -> Any:
        """Design effect and effective n; see ``clusterstats.design_effect``."""
        return mean.design_effect(self._obj, outcome, by, **options)

    def paired_delta(self, other, outcome, by=None, **options) -> Any:
        """Paired difference with ``other`` (a frame, a column, or a Dataset); see
        ``clusterstats.paired_delta``."""
        return paired.paired_delta(self._obj, other, outcome, by, **options)

    def judged_ci(self, outcome, by=None, **options) -> Any:
        """Interval from a judge on every row and human labels on some; see
        ``clusterstats.judged_ci``."""
        return judged.judged_ci(self._obj, outcome, by, **options)

    def judged_delta(self, other, outcome, by=None, **options) -> Any:
        """Paired difference with ``other`` from a judge and human labels; see
        ``clusterstats.judged_delta``."""
        return judged.judged_delta(self._obj, other, outcome, by, **options)

    def judged_compare(self, outcome, by=None, **options) -> Any:
        """A leaderboard from a judge on every answer and human labels on a few; see
        ``clusterstats.judged_compare``."""
        return judged_compare.judged_compare(self._obj, outcome, by, **options)

    def judged_plan(self, outcome, by=None, **options) -> Any:
        """How many human labels, in how many clusters; see ``clusterstats.judged_plan``."""
        return judged_plan.judged_plan(self._obj, outcome, by, **options)

    def compare(self, outcome, by=None, **options) -> Any:
        """Many models on shared items; see ``clusterstats.compare``."""
        return slices.compare(self._obj, outcome, by, **options)

    def confidence_sequence(self, outcome, by=None, **options) -> Any:
        """A confidence sequence over completed clusters, valid at every look; see
        ``clusterstats.confidence_sequence``."""
        return sequential.confidence_sequence(self._obj, outcome, by, **options)

    def sequence_plan(self, outcome, by=None, **options) -> Any:
        """How many clusters a watching gate needs, beside a fixed gate; see
        ``clusterstats.sequence_plan``."""
        return sequential.sequence_plan(self._obj, outcome, by, **options)

    def missing_report(self, outcome, by=None, **options) -> Any:
        """Where outcomes are missing, why, and how much it matters; see
        ``clusterstats.missing_report``."""
        return missing.missing_report(self._obj, outcome, by, **options)

    def stratum_table(self, outcome, by=None, **options) -> Any:
        """Per-stratum and overall estimates; see ``clusterstats.stratum_table``."""
        return strata.stratum_table(self._obj, outcome, by, **options)

    def plan(self, outcome, by=None, **options) -> Any:
        """Plan the next budget from this pilot; see ``clusterstats.pilot_plan``."""
        return planning.pilot_plan(self._obj, outcome, by, **options)

    def report(self, outcome, by=None, **options) -> Any:
        """What to report about the result; see ``clusterstats.report``."""
        return diagnostics.report(self._obj, outcome, by, **options)

    def check_clustering(self, outcome, candidates=(), **options) -> Any:
        """Which grouping to cluster by; see ``clusterstats.check_clustering``."""
        return diagnostics.check_clustering(self._obj, outcome, candidates, **options)

    def pass_at_k(self, outcome, **options) -> Any:
        """pass@k of cases run several times; see ``clusterstats.pass_at_k``."""
        return reruns.pass_at_k(self._obj, outcome, **options)

    def pass_hat_k(self, outcome, **options) -> Any:
        """pass^k of cases run several times; see ``clusterstats.pass_hat_k``."""
        return reruns.pass_hat_k(self._obj, outcome, **options)

    def flakiness(self, outcome, **options) -> Any:
        """Flaky cases and the worth of a rerun; see ``clusterstats.flakiness``."""
        return reruns.flakiness(self._obj, outcome, **options)


class EvalAccessor(_StatisticsAccessor):
    """``df.eval``: clustered statistics on a pandas DataFrame, and pandas' own
    ``DataFrame.eval`` when called.

    After ``import clusterstats`` every DataFrame has these methods. Each calls the function
    of the same name with the frame as ``data`` (``df.eval.plan`` calls ``pilot_plan``), so
    ``df.eval.cluster_ci("correct", by="task", method="cr2")`` is
    ``clusterstats.cluster_ci(df, "correct", by="task", method="cr2")`` and the keyword
    options are the function's. The accessor holds no state.

    ``df.eval`` stays callable: ``df.eval(expr, ...)`` is pandas' ``DataFrame.eval`` with the
    same arguments and result, ``@variable`` references included, and ``DataFrame.query``,
    which calls ``DataFrame.eval`` internally, works unchanged.

    Examples
    --------
    >>> import clusterstats
    >>> df = clusterstats.datasets.load("bbh")
    >>> res = df.eval.cluster_ci("correct", by="task", over="condition")
    >>> res.to_frame().equals(clusterstats.cluster_ci(df, "correct", by="task",
    ...                                              over="condition").to_frame())
    True
    >>> limit = 100
    >>> df.query("condition == 'cot' and item_index < @limit").shape
    (2700, 7)
    """

    __slots__ = ()

    def __call__(self, expr: str, *args: Any, **kwargs: Any) -> Any:
        """pandas' own ``pandas.DataFrame.eval``, unchanged (``df.query`` relies on it)."""
        # pandas finds ``@local`` names ``level`` frames above DataFrame.eval; this call adds one.
        kwargs["level"] = kwargs.pop("level", 0) + 1
        return _ORIGINAL["pandas"](self._obj, expr, *args, **kwargs)


class DatasetEvalAccessor(_StatisticsAccessor):
    """``ds.eval``: clustered statistics of an xarray Dataset laid out as (case, rerun), and
    xarray's own ``Dataset.eval`` when called (``ds.eval("a + b")``).

    Each variable holds the runs of a case along the ``rerun`` dim, with NaN where a case has
    no run (unequal rerun counts); ``to_case_rerun`` builds such a Dataset from a long frame.
    The methods are those of ``df.eval``, with every option of the functions (``strata=``,
    ``missing=`` including ``"ipw"``, ``responded=``, ...):

    - ``case=`` and ``rerun=`` name the two dims (default ``"case"`` and ``"rerun"``); a
      variable without them raises ``DimensionError``, naming the dims it has.
    - The cases are the clusters unless ``by`` names a coordinate along the case dim (e.g.
      ``user_id``: clusters of cases); strata and covariates are coordinates along it too.
    - The numbers are the pandas path's on the same rows (the runs of each case are reduced
      to their count, total and within-case sum of squares, which is all the statistics
      need).
    - Any other dim (``model``, ``task``) gives one result per label, as a
      ``GroupedResults`` whose ``to_xarray()`` is a Dataset over those dims.
    - A NaN outcome is "no run", unless the boolean variable named by the outcome's ``ran``
      attribute (which ``to_case_rerun`` adds when some outcome is missing) or
      ``responded=`` says the run happened: then it is a missing outcome, for ``missing=``
      and ``missing_report`` as in a frame.
    - ``paired_delta`` matches two Datasets' cases by their label along ``case``; the runs
      of a case are averaged first, and ``rerun_variance_share`` reports what the rerun
      noise contributes. ``compare`` takes the models along a ``model`` dim.
    - With dask-backed variables (a store opened with ``xr.open_zarr`` or
      ``open_mfdataset``, chunked along ``case``) every method computes through dask, chunk
      by chunk, under whatever scheduler is active (a ``dask.distributed`` Client included):
      only five numbers per case come back into memory. ``benchmarks/dask_scale.py``
      measures 10^9 cells.

    Examples
    --------
    >>> import clusterstats
    >>> tau = clusterstats.datasets.load("tau_bench_airline")
    >>> ds = clusterstats.to_case_rerun(tau, case="task_id", rerun="trial", outcome="reward")
    >>> by_case, by_user = ds.eval.cluster_ci("reward"), ds.eval.cluster_ci("reward", by="user_id")
    >>> by_case.n_clusters, by_user.n_clusters, round(by_case.estimate, 2)
    (50, 34, 0.42)
    >>> by_case.to_frame().drop(columns="by").equals(
    ...     tau.eval.cluster_ci("reward", by="task_id").to_frame().drop(columns="by"))
    True
    """

    __slots__ = ()

    def __call__(self, statement: str, *args: Any, **kwargs: Any) -> Any:
        """xarray's own ``xarray.Dataset.eval``, unchanged."""
        return _ORIGINAL["xarray"](self._obj, statement, *args, **kwargs)


class DaskEvalAccessor(_StatisticsAccessor):
    """``ddf.eval``: clustered statistics on a dask DataFrame (say logs in Parquet shards,
    ``dd.read_parquet(...)``), and dask's own ``DataFrame.eval`` when called
    (``ddf.eval("c = a + b")``).

    It needs dask (``pip install "clusterstats[dask]"``). The methods and their options are
    those of ``df.eval``, and the numbers are pandas' on the same rows:

    - ``cluster_ci``, ``icc``, ``design_effect`` and everything built on them (``report``,
      ``stratum_table``, ``missing_report``, ``plan``, ``strata=``, the ``missing=``
      policies) reduce the frame lazily to per-cluster sums, in one grouped aggregation
      computed under whatever scheduler is active; so does ``confidence_sequence``, whose
      ``order=`` column then loads with the cluster columns;
    - ``paired_delta``, ``compare``, ``pass_at_k``, ``pass_hat_k``, ``flakiness``,
      ``check_clustering`` and logistic propensities (``missing="ipw"``,
      ``propensity="logistic"``) need rows: they load only the columns their options name,
      then run the pandas path; two dask frames in ``paired_delta``, and ``compare``, are
      matched on columns, so they need ``on=``;
    - ``over=`` groups come in sorted label order, as for pandas.

    The accessor is registered when ``dask.dataframe`` is imported, before or after
    ``clusterstats``; ``import clusterstats`` does not import dask.

    Examples
    --------
    >>> import clusterstats, dask.dataframe as dd
    >>> df = clusterstats.datasets.load("bbh")
    >>> ddf = dd.from_pandas(df, npartitions=4)
    >>> lazy = ddf.eval.cluster_ci("correct", by="task", over="condition")
    >>> lazy.groups, round(lazy["cot"].estimate, 4)
    (('cot', 'direct'), 0.7397)
    >>> lazy["cot"].to_frame().equals(df.eval.cluster_ci("correct", by="task",
    ...                                                  over="condition")["cot"].to_frame())
    True
    """

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
