"""The ``.eval`` accessor on dask DataFrames (logs in Parquet shards), an optional extra.

``cluster_ci``, ``icc`` and ``design_effect`` reduce the frame lazily to per-cluster sums (one
grouped aggregation, computed under whatever scheduler is active) and finish on those; the
methods that pair items, count runs per case or fit a response model (``paired_delta``,
``compare``, ``pass_at_k``, ``pass_hat_k``, ``flakiness``, ``missing_report`` and
``cluster_ci(missing="ipw")``) load only the columns they name and run the pandas path.

dask is imported only when the user imports it: ``import clusterstats`` registers the accessor
at once if ``dask.dataframe`` is already imported, and otherwise when it is.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import warnings
from collections.abc import Hashable
from typing import Any

import numpy as np
import pandas as pd

from clusterstats import api, reruns
from clusterstats._frame import MISSING_POLICIES, Prepared, _as_labels
from clusterstats.core.grouping import ClusterSums
from clusterstats.errors import (
    ColumnNotFoundError,
    EmptyDataError,
    InvalidClusterError,
    InvalidOptionError,
    InvalidOutcomeError,
    MissingOutcomeError,
)
from clusterstats.results import GroupedResults

INSTALL_HINT = "dask is an optional extra: pip install 'clusterstats[dask]'"


def require_dask() -> Any:
    """``dask.dataframe``, or an ImportError that says how to install it."""
    try:
        import dask.dataframe
    except ImportError as error:  # pragma: no cover - exercised without dask installed
        raise ImportError(INSTALL_HINT) from error
    return dask.dataframe


def prepare(
    data: Any, outcome: Hashable, by: Any, *, over: Hashable | None, missing: str
) -> list[Prepared]:
    """Per-cluster sums of a dask DataFrame, from one lazy grouped aggregation."""
    import dask

    if missing not in MISSING_POLICIES:
        raise InvalidOptionError(f"missing must be one of {MISSING_POLICIES}, got {missing!r}")
    by_labels = _as_labels(by)
    keys = ([over] if over is not None else []) + by_labels
    for column in [outcome, *keys]:
        if column not in data.columns:
            raise ColumnNotFoundError(column, list(data.columns))
    dtype = data[outcome].dtype
    if not (pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype)):
        raise InvalidOutcomeError(f"outcome column {outcome!r} has dtype {dtype}, not numeric")
    y = data[outcome].astype("float64")
    first = y.dropna().head(1, npartitions=-1)
    shift = float(first.iloc[0]) if len(first) else 0.0
    is_missing = y.isna()
    filled = {"fail": 0.0, "pass": 1.0}.get(missing)
    centred = (y if filled is None else y.fillna(filled)) - shift
    frame = data[keys].assign(
        _y=centred,
        _y2=centred * centred,
        _missing=is_missing.astype("int64"),
    )
    aggregated = frame.groupby(keys, sort=True, dropna=False).agg(
        {"_y": ["count", "sum"], "_y2": "sum", "_missing": "sum"}
    )
    binary = ((y == 0.0) | (y == 1.0) | is_missing).all()
    infinite = np.isinf(y).any()
    missing_ids = data[keys].isna().sum()
    table, is_binary, has_inf, missing_ids = dask.compute(aggregated, binary, infinite, missing_ids)
    for column, count in missing_ids.items():
        if count:
            raise InvalidClusterError(f"column {column!r} has {int(count)} missing ids")
    if has_inf:
        raise InvalidOutcomeError(f"outcome column {outcome!r} contains infinite values")
    n_missing = int(table[("_missing", "sum")].sum())
    if n_missing and missing == "raise":
        raise MissingOutcomeError(
            f"outcome column {outcome!r} has {n_missing} missing values; use missing='drop' "
            "or missing='fail' to handle them"
        )
    if n_missing and filled is not None and not is_binary:
        raise InvalidOutcomeError(
            f"missing={missing!r} counts a missing outcome as {filled:g}, which needs a binary "
            "(0/1) outcome"
        )
    table = table.sort_index()
    groups = (
        [(None, table)]
        if over is None
        else [(label, part.droplevel(0)) for label, part in table.groupby(level=0, sort=True)]
    )
    prepared = []
    for label, part in groups:
        counts = part[("_y", "count")].to_numpy(dtype=np.float64)
        missing_rows = part[("_missing", "sum")].to_numpy()
        occupied = counts > 0
        if not occupied.any():
            where = "" if over is None else f" in group {label!r} of {over!r}"
            raise EmptyDataError(f"no non-missing outcomes{where}")
        sums = ClusterSums(
            counts=counts[occupied],
            totals=part[("_y", "sum")].to_numpy(dtype=np.float64)[occupied],
            squares=part[("_y2", "sum")].to_numpy(dtype=np.float64)[occupied],
            shift=shift,
        )
        prepared.append(
            Prepared(
                group=label,
                sums=sums,
                is_binary=bool(is_binary),
                n_missing=int(missing_rows.sum()),
                n_missing_clusters=int((missing_rows > 0).sum()),
                outcome=str(outcome),
                by=tuple(str(b) for b in by_labels),
            )
        )
    return prepared


def _grouped(prepared: list[Prepared], over: Hashable | None, build) -> Any:
    results = tuple(build(p) for p in prepared)
    if over is None:
        return results[0]
    return GroupedResults(over=str(over), groups=tuple(p.group for p in prepared), results=results)


def cluster_ci(
    data: Any,
    outcome: Hashable,
    by: Any,
    *,
    estimand: str = "pooled",
    method: str = "auto",
    confidence: float = 0.95,
    over: Hashable | None = None,
    missing: str = "drop",
    icc: float | None = None,
    n_resamples: int = 9999,
    rng: int | np.random.Generator | None = None,
    **ipw_options: Any,
) -> Any:
    """:func:`clusterstats.cluster_ci` on a dask DataFrame (groups of ``over`` sorted).

    ``missing="ipw"`` (and ``responded``, ``propensity``, ``covariates``, ``min_propensity``)
    fits a response model on the rows, so it loads the columns it names and runs the pandas
    path."""
    if missing == "ipw" or ipw_options:
        names = [ipw_options.get("responded"), *(ipw_options.get("covariates") or [])]
        frame = _columns(data, outcome, by, over, *[n for n in names if n is not None])
        return api.cluster_ci(
            frame,
            outcome,
            by,
            estimand=estimand,
            method=method,
            confidence=confidence,
            over=over,
            missing=missing,
            icc=icc,
            n_resamples=n_resamples,
            rng=rng,
            **ipw_options,
        )
    confidence = api._check_confidence(confidence)
    api._check_estimand(estimand)
    api._check_ci_options(method, icc, n_resamples)
    prepared = prepare(data, outcome, by, over=over, missing=missing)
    api._check_binary_method(method, prepared[0].is_binary)
    options = {
        "estimand": estimand,
        "method": method,
        "confidence": confidence,
        "icc": icc,
        "n_resamples": n_resamples,
        "rng": rng,
        "missing": missing,
    }
    return _grouped(prepared, over, lambda p: api._build_ci(p, **options))


def icc(
    data: Any,
    outcome: Hashable,
    by: Any,
    *,
    confidence: float = 0.95,
    over: Hashable | None = None,
    missing: str = "drop",
) -> Any:
    """:func:`clusterstats.icc` on a dask DataFrame."""
    confidence = api._check_confidence(confidence)
    prepared = prepare(data, outcome, by, over=over, missing=missing)
    return _grouped(prepared, over, lambda p: api._build_icc(p, confidence=confidence))


def design_effect(
    data: Any,
    outcome: Hashable,
    by: Any,
    *,
    estimand: str = "pooled",
    over: Hashable | None = None,
    missing: str = "drop",
) -> Any:
    """:func:`clusterstats.design_effect` on a dask DataFrame."""
    api._check_estimand(estimand)
    prepared = prepare(data, outcome, by, over=over, missing=missing)
    return _grouped(prepared, over, lambda p: api._build_design_effect(p, estimand=estimand))


def _columns(data: Any, *labels: Any) -> pd.DataFrame:
    """The named columns (None skipped, lists flattened) computed into a pandas frame."""
    wanted: list[Hashable] = []
    for label in labels:
        if label is None:
            continue
        for column in _as_labels(label):
            if column not in wanted:
                wanted.append(column)
    for column in wanted:
        if column not in data.columns:
            raise ColumnNotFoundError(column, list(data.columns))
    return data[wanted].compute()


def paired_delta(data: Any, other: Any, outcome: Hashable, by: Any, **options: Any) -> Any:
    """:func:`clusterstats.paired_delta` (two frames, or two columns) on dask DataFrames."""
    keys = (by, options.get("on"), options.get("rerun"))
    if isinstance(other, type(data)):
        if options.get("on") is None:
            raise InvalidOptionError("dask DataFrames are matched on columns: pass on=")
        return api.paired_delta(
            _columns(data, outcome, *keys), _columns(other, outcome, *keys), outcome, by, **options
        )
    return api.paired_delta(_columns(data, outcome, other, *keys), other, outcome, by, **options)


def compare(data: Any, outcome: Hashable, by: Any, **options: Any) -> Any:
    """:func:`clusterstats.compare` on a dask DataFrame."""
    if options.get("on") is None:
        raise InvalidOptionError("dask DataFrames are matched on columns: pass on=")
    frame = _columns(data, outcome, by, options.get("model"), options["on"], options.get("rerun"))
    return api.compare(frame, outcome, by, **options)


def _rerun_frame(data: Any, outcome: Hashable, options: dict[str, Any]) -> pd.DataFrame:
    return _columns(
        data,
        outcome,
        options.get("case", "case"),
        options.get("rerun", "rerun"),
        options.get("by"),
        options.get("over"),
    )


class DaskEvalAccessor:
    """Clustered statistics on a dask DataFrame, and dask's own ``DataFrame.eval`` when
    called (``ddf.eval("c = a + b")``)."""

    __slots__ = ("_obj",)

    def __init__(self, dask_obj: Any) -> None:
        self._obj = dask_obj

    def __call__(self, expr: str, *args: Any, **kwargs: Any) -> Any:
        """dask's own ``DataFrame.eval``, unchanged."""
        return _ORIGINAL_EVAL[0](self._obj, expr, *args, **kwargs)

    def cluster_ci(self, outcome, by, **options) -> Any:
        """Clustered interval, reduced lazily; see :func:`clusterstats.cluster_ci`."""
        return cluster_ci(self._obj, outcome, by, **options)

    def icc(self, outcome, by, **options) -> Any:
        """Intraclass correlation, reduced lazily; see :func:`clusterstats.icc`."""
        return icc(self._obj, outcome, by, **options)

    def design_effect(self, outcome, by, **options) -> Any:
        """Design effect, reduced lazily; see :func:`clusterstats.design_effect`."""
        return design_effect(self._obj, outcome, by, **options)

    def paired_delta(self, other, outcome, by, **options) -> Any:
        """Paired difference (loads the named columns); see
        :func:`clusterstats.paired_delta`."""
        return paired_delta(self._obj, other, outcome, by, **options)

    def compare(self, outcome, by, **options) -> Any:
        """Many models on shared items (loads the named columns); see
        :func:`clusterstats.compare`."""
        return compare(self._obj, outcome, by, **options)

    def missing_report(self, outcome, by, **options) -> Any:
        """Where outcomes are missing and how much it matters (loads the named columns);
        see :func:`clusterstats.missing_report`."""
        frame = _columns(self._obj, outcome, by, options.get("reason"), options.get("responded"))
        return api.missing_report(frame, outcome, by, **options)

    def pass_at_k(self, outcome, **options) -> Any:
        """pass@k (loads the named columns); see :func:`clusterstats.pass_at_k`."""
        return reruns.pass_at_k(_rerun_frame(self._obj, outcome, options), outcome, **options)

    def pass_hat_k(self, outcome, **options) -> Any:
        """pass^k (loads the named columns); see :func:`clusterstats.pass_hat_k`."""
        return reruns.pass_hat_k(_rerun_frame(self._obj, outcome, options), outcome, **options)

    def flakiness(self, outcome, **options) -> Any:
        """Flaky cases (loads the named columns); see :func:`clusterstats.flakiness`."""
        return reruns.flakiness(_rerun_frame(self._obj, outcome, options), outcome, **options)


# dask's DataFrame.eval, captured when the accessor is registered.
_ORIGINAL_EVAL: list[Any] = []


def register_accessor() -> None:
    """Register ``.eval`` on dask DataFrames (dask.dataframe must be importable)."""
    if _ORIGINAL_EVAL:
        return
    # sys.modules first: right after dask.dataframe has run, dask's attribute is not set yet
    dd = sys.modules.get("dask.dataframe") or require_dask()
    from dask.dataframe.extensions import register_dataframe_accessor

    _ORIGINAL_EVAL.append(dd.DataFrame.eval)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*overriding a preexisting attribute")
        register_dataframe_accessor("eval")(DaskEvalAccessor)


class _RegisterWhenImported(importlib.abc.MetaPathFinder):
    """Registers the accessor right after ``dask.dataframe`` is first imported, so that
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
            register_accessor()

        loader.exec_module = exec_then_register  # type: ignore[method-assign]
        return spec


def register() -> None:
    """Register now if dask.dataframe is loaded, else when it is; nothing if dask is absent."""
    if "dask.dataframe" in sys.modules:
        register_accessor()
    elif importlib.util.find_spec("dask") is not None:
        sys.meta_path.insert(0, _RegisterWhenImported())
