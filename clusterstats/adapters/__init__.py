"""Adapters: each backend's input validated and reduced to a design, nothing else.

One function per kind of design; each looks at the type of ``data`` and hands it to the
backend's module: :mod:`~clusterstats.adapters.frame` and
:mod:`~clusterstats.adapters.pairing` (pandas DataFrames, and plain arrays with
``data=None``), :mod:`~clusterstats.adapters.dataset` (xarray Datasets laid out as (case,
rerun)) and :mod:`~clusterstats.adapters.dask` (dask DataFrames); a polars or pyarrow table
is first converted, its named columns only, by :mod:`~clusterstats.adapters.arrow`. Every
statistic calls these, so a backend gives the same design, and hence the same numbers, notes
and warnings, as every other.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import replace
from typing import Any

import pandas as pd
import xarray as xr

from clusterstats._design import (
    CaseDesign,
    ComparisonDesign,
    MeanDesign,
    PairedDesign,
    RowsDesign,
)
from clusterstats.adapters import arrow, dataset, frame, layout, pairing
from clusterstats.adapters import dask as dask_adapter
from clusterstats.adapters.labels import Columns, as_labels, check_time_column
from clusterstats.errors import InvalidInputError, InvalidOptionError

__all__ = [
    "backend",
    "case_design",
    "comparison_design",
    "mean_design",
    "missing_reasons",
    "paired_design",
    "rows_design",
]


def backend(data: Any) -> str:
    """``"pandas"``, ``"arrays"`` (``data=None``), ``"xarray"`` or ``"dask"``."""
    if data is None:
        return "arrays"
    if isinstance(data, pd.DataFrame):
        return "pandas"
    if dask_adapter.is_dask_frame(data):
        return "dask"
    if isinstance(data, xr.Dataset):
        return "xarray"
    raise InvalidInputError(
        "data must be a pandas DataFrame, an xarray Dataset with (case, rerun) dims, a dask "
        "DataFrame, a polars or pyarrow table, or None with array-like outcome and by; got "
        f"{type(data).__name__}"
    )


def _require_by(by: Any, kind: str) -> None:
    if by is None:
        raise InvalidOptionError(
            f"by= names the cluster column(s) of a {kind}; only a (case, rerun) Dataset "
            "defaults to its cases"
        )


def _frame_only(kind: str, **given: Any) -> None:
    """Options that only a long frame has (a Dataset's layout says them already)."""
    for name, value in given.items():
        if value is not None:
            raise InvalidOptionError(f"{name}= is for DataFrames, not for a {kind}")


def mean_design(
    data: Any,
    outcome: Any,
    by: Any,
    *,
    over: Hashable | None = None,
    responded: Hashable | None = None,
    strata: Hashable | None = None,
    nest: bool = False,
    covariates: Sequence[Hashable] = (),
    case: Hashable = "case",
    rerun: Hashable = "rerun",
    weights: Hashable | None = None,
) -> MeanDesign:
    """The per-cluster statistics of ``cluster_ci``, ``icc``, ``design_effect`` and what is
    built on them."""
    if arrow.is_table(data):
        named = Columns.of(
            outcome=outcome,
            by=by,
            over=over,
            responded=responded,
            strata=strata,
            weights=weights,
            covariates=covariates,
        )
        data = arrow.to_pandas(data, named.names())
    kind = backend(data)
    if weights is not None and kind == "xarray":
        if responded is not None:
            raise InvalidOptionError("weights= with responded= is not available for Datasets yet")
        runs, cluster_columns, extra = dataset.weighted_runs_frame(
            data, outcome, by, weights=weights, case=case, rerun=rerun, strata=strata
        )
        over_columns = None if not extra else extra[0] if len(extra) == 1 else extra
        return frame.mean_design(
            runs,
            outcome,
            cluster_columns[0] if len(cluster_columns) == 1 else cluster_columns,
            over=over_columns,
            strata=strata,
            nest=nest,
            weights=weights,
        )
    options = {"responded": responded, "strata": strata, "nest": nest, "covariates": covariates}
    if kind == "xarray":
        return dataset.mean_design(data, outcome, by, case=case, rerun=rerun, over=over, **options)
    _require_by(by, "DataFrame" if kind != "arrays" else "set of arrays")
    if kind == "dask":
        return dask_adapter.mean_design(data, outcome, by, over=over, weights=weights, **options)
    return frame.mean_design(data, outcome, by, over=over, weights=weights, **options)


def paired_design(
    data: Any,
    other: Any,
    outcome: Hashable,
    by: Any,
    *,
    on: Any = None,
    rerun: Hashable | None = None,
    how: str = "strict",
    missing: str = "drop",
    responded: Hashable | None = None,
    strata: Hashable | None = None,
    nest: bool = False,
    case: Hashable = "case",
    labels: tuple[str, str] | None = None,
    weights: Hashable | None = None,
    over: Any = None,
) -> PairedDesign:
    """Matched items of two sets of results (two frames, two columns, two Datasets); with
    ``over``, one set per group of the frames' ``over`` column(s)."""
    roles = {"by": by, "on": on, "rerun": rerun, "strata": strata, "responded": responded}
    second = Columns.of(outcome=outcome, **roles, over=over)
    if arrow.is_table(data) or arrow.is_table(other):
        two_columns = not (arrow.is_table(other) or hasattr(other, "columns"))
        # the weights are read from the first side only
        second_column = other if two_columns else None
        first = Columns.of(
            outcome=outcome, other=second_column, **roles, over=over, weights=weights
        )
        if two_columns:
            data = arrow.to_pandas(data, first.names(), matched_on=on or "rows")
        else:
            data = arrow.to_pandas(data, first.names(), matched_on=on)
            other = arrow.to_pandas(other, second.names(), matched_on=on)
    kind = backend(data)
    if over is not None and kind == "xarray":
        raise InvalidOptionError(
            "over= slices a frame; a Dataset's extra dims (e.g. task) are its slices already"
        )
    if weights is not None and kind == "xarray":
        return _weighted_paired_datasets(
            data, other, outcome, by, weights=weights, case=case, rerun=rerun, how=how,
            missing=missing, responded=responded, strata=strata, nest=nest, on=on,
        )  # fmt: skip
    if kind == "xarray":
        return dataset.paired_design(
            data,
            other,
            outcome,
            by,
            case=case,
            rerun="rerun" if rerun is None else rerun,
            how=how,
            missing=missing,
            responded=responded,
            strata=strata,
            nest=nest,
            on=on,
            labels=labels or ("A", "B"),
        )
    if kind == "arrays":
        raise InvalidInputError("paired_delta needs a DataFrame (or two), not arrays")
    _require_by(by, "DataFrame")
    if kind == "dask":
        frames = dask_adapter.is_dask_frame(other)
        # the weights are read from the first side only
        second_column = None if frames else other
        first = Columns.of(
            outcome=outcome, other=second_column, **roles, over=over, weights=weights
        )
        if frames and on is None:
            raise InvalidOptionError("dask DataFrames are matched on columns: pass on=")
        data = dask_adapter.compute_columns(data, first.names())
        if frames:
            other = dask_adapter.compute_columns(other, second.names())
    return pairing.paired_design(
        data,
        other,
        outcome,
        by,
        on=on,
        rerun=rerun,
        how=how,
        missing=missing,
        responded=responded,
        strata=strata,
        nest=nest,
        weights=weights,
        over=over,
    )


def _weighted_paired_datasets(
    data: Any,
    other: Any,
    outcome: Hashable,
    by: Any,
    *,
    weights: Hashable,
    case: Hashable,
    rerun: Hashable | None,
    how: str,
    missing: str,
    responded: Hashable | None,
    strata: Hashable | None,
    nest: bool,
    on: Any,
) -> PairedDesign:
    """Two Datasets with a weight per case, as the long frames of their runs (the cases are
    the items; the weights are read from the first)."""

    if responded is not None or on is not None:
        raise InvalidOptionError(
            "weights= on Datasets takes neither responded= nor on= yet (their cases are the items)"
        )
    rerun_dim = "rerun" if rerun is None else rerun
    frames = []
    for side, side_weights in ((data, weights), (other, None)):
        runs, cluster_columns, extra = dataset.weighted_runs_frame(
            side, outcome, by, weights=side_weights, case=case, rerun=rerun_dim, strata=strata
        )
        if extra:
            raise InvalidOptionError(
                f"weights= on Datasets with extra dims {extra} is not available for "
                "paired_delta yet: select one label of each first"
            )
        frames.append(runs)
    design = pairing.paired_design(
        frames[0], frames[1], outcome,
        cluster_columns[0] if len(cluster_columns) == 1 else cluster_columns,
        on=str(case), rerun=str(rerun_dim), how=how, missing=missing, responded=None,
        strata=strata, nest=nest, weights=weights,
    )  # fmt: skip
    return replace(design, default_labels=("A", "B"))


def comparison_design(
    data: Any,
    outcome: Hashable,
    by: Any,
    *,
    model: Hashable,
    on: Any = None,
    rerun: Hashable | None = None,
    how: str = "strict",
    missing: str = "drop",
    responded: Hashable | None = None,
    strata: Hashable | None = None,
    nest: bool = False,
    case: Hashable = "case",
    weights: Hashable | None = None,
) -> ComparisonDesign:
    """Per-item values of many models on shared items."""
    named = Columns.of(
        outcome=outcome,
        by=by,
        model=model,
        on=on,
        rerun=rerun,
        strata=strata,
        responded=responded,
        weights=weights,
    )
    if arrow.is_table(data):
        data = arrow.to_pandas(data, named.names(), matched_on=on)
    kind = backend(data)
    options = {"how": how, "missing": missing, "responded": responded, "strata": strata}
    if weights is not None and kind == "xarray":
        if responded is not None or on is not None:
            raise InvalidOptionError(
                "weights= on a Dataset takes neither responded= nor on= yet (its cases are "
                "the items)"
            )
        runs, cluster_columns, extra = dataset.weighted_runs_frame(
            data, outcome, by, weights=weights, case=case,
            rerun="rerun" if rerun is None else rerun, strata=strata,
        )  # fmt: skip
        if extra != [str(model)]:
            raise InvalidOptionError(
                f"compare needs the models along one extra dim {model!r}; the outcome has "
                f"extra dims {extra}"
            )
        return pairing.comparison_design(
            runs, outcome, cluster_columns[0] if len(cluster_columns) == 1 else cluster_columns,
            model=model, on=str(case), rerun=str("rerun" if rerun is None else rerun),
            nest=nest, weights=weights, how=how, missing=missing, responded=None, strata=strata,
        )  # fmt: skip
    if kind == "xarray":
        return dataset.comparison_design(
            data,
            outcome,
            by,
            model=model,
            case=case,
            rerun="rerun" if rerun is None else rerun,
            nest=nest,
            on=on,
            **options,
        )
    if kind == "arrays":
        raise InvalidInputError("compare needs a DataFrame, not arrays")
    _require_by(by, "DataFrame")
    if kind == "dask":
        if on is None:
            raise InvalidOptionError("dask DataFrames are matched on columns: pass on=")
        data = dask_adapter.compute_columns(data, named.names())
    return pairing.comparison_design(
        data, outcome, by, model=model, on=on, rerun=rerun, nest=nest, weights=weights, **options
    )


def case_design(
    data: Any,
    outcome: Hashable,
    *,
    by: Hashable | None,
    case: Hashable,
    rerun: Hashable | None,
    over: Hashable | None,
) -> CaseDesign:
    """Per-case moments of runs (a long frame is laid out as (case, rerun) first)."""

    named = Columns.of(outcome=outcome, case=case, rerun=rerun, by=by, over=over)
    if arrow.is_table(data):
        data = arrow.to_pandas(data, named.names())
    kind = backend(data)
    if kind == "arrays":
        raise InvalidInputError("the rerun statistics need a DataFrame or a (case, rerun) Dataset")
    if kind in ("pandas", "dask"):
        if kind == "dask":
            data = dask_adapter.compute_columns(data, named.names())
        dims = [] if over is None else as_labels(over, role="over")
        # the clusters must be a coordinate along the cases: named, so that a by= column that
        # varies within a case is an error that says so
        coords = "auto" if by is None else list(as_labels(by))
        laid_out = layout.from_frame(
            data, case=case, rerun=rerun, outcome=outcome, dims=dims, coords=coords
        )
        return dataset.case_design(laid_out, outcome, by=by, case="case", rerun="rerun")
    if over is not None:
        raise InvalidOptionError(
            "over= is for DataFrames; a Dataset's extra dims are used as they are"
        )
    if rerun is None:
        raise InvalidOptionError(
            "rerun=None (number the runs) is for DataFrames; name the rerun dim"
        )
    return dataset.case_design(data, outcome, by=by, case=case, rerun=rerun)


def rows_design(
    data: Any,
    outcome: Hashable,
    groupings: Sequence[tuple[str, Sequence[Hashable]]],
    *,
    missing: str,
    time: Hashable | None = None,
    window: str | None = None,
    case: Hashable = "case",
    rerun: Hashable = "rerun",
) -> RowsDesign:
    """The usable outcomes row by row, with each candidate grouping's codes (and, with
    ``time`` and ``window``, the codes of the time windows, last)."""
    # the candidate groupings are each a set of cluster columns
    candidates = [label for _, labels in groupings for label in labels]
    named = Columns.of(outcome=outcome, time=time, groupings=candidates)
    if time is not None and window is not None:
        check_time_column(data, time, window)
    if arrow.is_table(data):
        data = arrow.to_pandas(data, named.names())
    kind = backend(data)
    windows = {"time": time, "window": window}
    if kind == "xarray":
        return dataset.rows_design(
            data, outcome, groupings, missing=missing, case=case, rerun=rerun, **windows
        )
    if kind == "arrays":
        raise InvalidInputError("check_clustering needs a DataFrame or a Dataset, not arrays")
    if kind == "dask":
        data = dask_adapter.compute_columns(data, named.names())
    return frame.rows_design(data, outcome, groupings, missing=missing, **windows)


def missing_reasons(
    data: Any,
    outcome: Hashable,
    by: Any,
    *,
    reason: Hashable,
    responded: Hashable | None = None,
    case: Hashable = "case",
    rerun: Hashable = "rerun",
) -> tuple[tuple[Any, int, int], ...]:
    """The missing rows by ``reason``: ``(reason, rows, clusters)``, most frequent first."""
    named = Columns.of(outcome=outcome, by=by, reason=reason, responded=responded)
    if arrow.is_table(data):
        data = arrow.to_pandas(data, named.names())
    kind = backend(data)
    if kind == "xarray":
        return dataset.missing_reasons(
            data, outcome, by, reason=reason, responded=responded, case=case, rerun=rerun
        )
    if kind == "dask":
        data = dask_adapter.compute_columns(data, named.names())
    return frame.missing_reasons(data, outcome, by, reason=reason, responded=responded)
