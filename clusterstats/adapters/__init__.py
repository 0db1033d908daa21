"""Adapters: each backend's input validated and reduced to a design, nothing else.

One function per kind of design. Each builds the call's
:class:`~clusterstats.adapters.labels.Columns` once, at its front (every label checked, the
outcome distinct from the other roles), then looks the backend of ``data`` up in that
design's dispatch table and hands both to the backend's module:
:mod:`~clusterstats.adapters.frame` and :mod:`~clusterstats.adapters.pairing` (pandas
DataFrames, and plain arrays with ``data=None``), :mod:`~clusterstats.adapters.dataset`
(xarray Datasets laid out as (case, rerun)) and :mod:`~clusterstats.adapters.dask` (dask
DataFrames); a polars or pyarrow table is first converted, its named columns only, by
:mod:`~clusterstats.adapters.arrow`. Every statistic calls these, so a backend gives the same
design, and hence the same numbers, notes and warnings, as every other.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
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
from clusterstats.adapters.labels import (
    Columns,
    as_labels,
    check_time_column,
    is_hashable,
    require_columns,
)
from clusterstats.errors import (
    InvalidInputError,
    InvalidOptionError,
    RepeatedItemsWarning,
    warn,
)

__all__ = [
    "backend",
    "case_design",
    "cluster_arrivals",
    "comparison_design",
    "comparison_slices",
    "is_dataset",
    "mean_design",
    "missing_reasons",
    "paired_arrivals",
    "paired_design",
    "rows_design",
    "slice_arrivals",
]


def is_dataset(data: Any) -> bool:
    """Whether ``data`` is an xarray Dataset laid out as (case, rerun): its slices are its
    extra dims, not an ``over=`` column."""
    return isinstance(data, xr.Dataset)


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


def _require_by(columns: Columns, kind: str) -> None:
    if columns.given("by") is None:
        raise InvalidOptionError(
            f"by= names the cluster column(s) of a {kind}; only a (case, rerun) Dataset "
            "defaults to its cases"
        )


def _no_arrays(message: str) -> Callable[..., Any]:
    """The dispatch entry of ``data=None`` for a design that arrays cannot give."""

    def refuse(*_: Any, **__: Any) -> Any:
        raise InvalidInputError(message)

    return refuse


def _one_or_several(labels: Sequence[Hashable]) -> Any:
    return labels[0] if len(labels) == 1 else list(labels)


# --- the per-cluster statistics of cluster_ci, icc, design_effect and what builds on them


def _mean_of_frame(data: Any, columns: Columns, *, nest: bool, **_: Any) -> MeanDesign:
    _require_by(columns, "DataFrame")
    design = frame.mean_design(data, columns, nest=nest)
    _warn_repeated_items(data, columns)
    return design


def _warn_repeated_items(data: pd.DataFrame, columns: Columns) -> None:
    """A ``RepeatedItemsWarning`` when the clusters' rows repeat once per value of a text
    column the call does not name (several models' results stacked in one frame): the
    statistic would pool them without a word."""
    found = frame.repeated_label(data, as_labels(columns.given("by")), columns.names())
    if found is None:
        return
    column, values = found
    shown = ", ".join(repr(v) for v in values[:3]) + (", ..." if len(values) > 3 else "")
    warn(
        f"column {column!r} repeats every cluster's rows for each of its {len(values)} values "
        f"({shown}): the statistic pools them, each item counted once per value; pass "
        f"over={column!r} for one result per value, or keep one value's rows "
        f"(df[df[{column!r}] == {values[0]!r}]); to pool on purpose, filter "
        "RepeatedItemsWarning",
        RepeatedItemsWarning,
    )


def _mean_of_dask(data: Any, columns: Columns, *, nest: bool, **_: Any) -> MeanDesign:
    _require_by(columns, "DataFrame")
    return dask_adapter.mean_design(data, columns, nest=nest)


def _mean_of_dataset(
    data: Any, columns: Columns, *, nest: bool, case: Hashable, rerun: Hashable
) -> MeanDesign:
    if not columns.weights:
        return dataset.mean_design(data, columns, case=case, rerun=rerun, nest=nest)
    # a weight per case: the runs as a long frame, its cases the clusters' members
    if columns.responded:
        raise InvalidOptionError("weights= with responded= is not available for Datasets yet")
    strata = columns.given("strata")
    runs, cluster_columns, extra = dataset.weighted_runs_frame(
        data, columns.given("outcome"), columns.given("by"), weights=columns.given("weights"),
        case=case, rerun=rerun, strata=strata,
    )  # fmt: skip
    long = Columns.of(
        outcome=columns.given("outcome"),
        by=_one_or_several(cluster_columns),
        over=None if not extra else _one_or_several(extra),
        strata=strata,
        weights=columns.given("weights"),
    )
    return frame.mean_design(runs, long, nest=nest)


_MEAN_DESIGNS: dict[str, Callable[..., MeanDesign]] = {
    "pandas": _mean_of_frame,
    "dask": _mean_of_dask,
    "xarray": _mean_of_dataset,
}


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
    roles = {"over": over, "responded": responded, "strata": strata, "weights": weights}
    if data is None:  # outcome and by are the values themselves
        return frame.arrays_mean_design(outcome, by, **roles, covariates=covariates)
    columns = Columns.of(outcome=outcome, by=by, **roles, covariates=covariates)
    data = arrow.to_pandas(data, columns.names())
    return _MEAN_DESIGNS[backend(data)](data, columns, nest=nest, case=case, rerun=rerun)


# --- two sets of results matched item by item


def _is_label(other: Any) -> bool:
    """Whether ``other`` names a second outcome column (rather than being a second table)."""
    return is_hashable(other) and not (
        arrow.is_table(other) or hasattr(other, "columns") or isinstance(other, xr.Dataset)
    )


def _paired_of_frame(
    data: Any, other: Any, first: Columns, second: Columns, **options: Any
) -> PairedDesign:
    _require_by(first, "DataFrame")
    options.pop("case"), options.pop("labels")
    return pairing.paired_design(data, other, first, **options)


def _paired_of_dask(
    data: Any, other: Any, first: Columns, second: Columns, **options: Any
) -> PairedDesign:
    _require_by(first, "DataFrame")
    frames = dask_adapter.is_dask_frame(other)
    if frames and not first.on:
        raise InvalidOptionError("dask DataFrames are matched on columns: pass on=")
    data = dask_adapter.compute_columns(data, first.names())
    if frames:
        other = dask_adapter.compute_columns(other, second.names())
    return _paired_of_frame(data, other, first, second, **options)


def _paired_of_dataset(
    data: Any, other: Any, first: Columns, second: Columns, **options: Any
) -> PairedDesign:
    if first.over:
        raise InvalidOptionError(
            "over= slices a frame; a Dataset's extra dims (e.g. task) are its slices already"
        )
    if first.weights:
        return _weighted_paired_datasets(data, other, first, **options)
    labels = options.pop("labels")
    rerun = first.given("rerun")
    return dataset.paired_design(
        data, other, first, **options, rerun="rerun" if rerun is None else rerun,
        labels=labels or ("A", "B"),
    )  # fmt: skip


_PAIRED_DESIGNS: dict[str, Callable[..., PairedDesign]] = {
    "pandas": _paired_of_frame,
    "arrays": _no_arrays("paired_delta needs a DataFrame (or two), not arrays"),
    "dask": _paired_of_dask,
    "xarray": _paired_of_dataset,
}


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
    if data is None:
        return _PAIRED_DESIGNS["arrays"]()
    two_columns = _is_label(other)
    # the weights are read from the first side only
    first = Columns.of(
        outcome=outcome, other=other if two_columns else None, **roles, over=over,
        weights=weights,
    )  # fmt: skip
    second = Columns.of(outcome=outcome, **roles, over=over)
    names = None if labels is not None or two_columns else side_names(data, other, first)
    if arrow.is_table(data) or arrow.is_table(other):
        if two_columns:
            data = arrow.to_pandas(data, first.names(), matched_on=on or "rows")
        else:
            data = arrow.to_pandas(data, first.names(), matched_on=on)
            other = arrow.to_pandas(other, second.names(), matched_on=on)
    options = {"how": how, "missing": missing, "nest": nest, "case": case, "labels": labels}
    design = _PAIRED_DESIGNS[backend(data)](data, other, first, second, **options)
    return design if names is None else replace(design, default_labels=names)


#: Columns (or a Dataset's scalar coordinates) that name what produced the results: where
#: each side of a paired comparison holds one value of one of them, that value names the side.
SIDE_LABEL_COLUMNS = (
    "model", "model_name", "system", "condition", "arm", "variant", "agent", "checkpoint",
    "config", "run",
)  # fmt: skip


def side_names(data: Any, other: Any, columns: Columns) -> tuple[str, str] | None:
    """Each side's name where the data say it: the first column of
    :data:`SIDE_LABEL_COLUMNS` (not a role of the call) holding one value on each side, the
    two values different; None when no such column exists."""
    roles = set(columns.names())
    for name in SIDE_LABEL_COLUMNS:
        if name in roles:
            continue
        a, b = _constant_value(data, name), _constant_value(other, name)
        if a is not None and b is not None and str(a) != str(b):
            return str(a), str(b)
    return None


def _constant_value(data: Any, name: str) -> Any:
    """The one value of column (or scalar coordinate) ``name``, or None (absent, missing, or
    several values)."""
    if isinstance(data, xr.Dataset):
        coordinate = data.coords.get(name)
        return coordinate.item() if coordinate is not None and coordinate.ndim == 0 else None
    if arrow.is_table(data):
        if name not in arrow.column_names(data):
            return None
        data = arrow.to_pandas(data, [name])
    elif not hasattr(data, "columns") or name not in data.columns:
        return None
    elif dask_adapter.is_dask_frame(data):
        data = dask_adapter.compute_columns(data, [name])
    values = data[name]
    if not isinstance(values, pd.Series) or values.empty or pd.isna(values.iloc[0]):
        return None
    first = values.iloc[0]
    return first if bool((values == first).all()) else None


def _weighted_paired_datasets(
    data: Any,
    other: Any,
    columns: Columns,
    *,
    how: str,
    missing: str,
    nest: bool,
    case: Hashable,
    labels: tuple[str, str] | None,
) -> PairedDesign:
    """Two Datasets with a weight per case, as the long frames of their runs (the cases are
    the items; the weights are read from the first)."""

    if columns.responded or columns.on:
        raise InvalidOptionError(
            "weights= on Datasets takes neither responded= nor on= yet (their cases are the items)"
        )
    rerun = columns.given("rerun")
    rerun_dim = "rerun" if rerun is None else rerun
    strata = columns.given("strata")
    frames = []
    for side, side_weights in ((data, columns.given("weights")), (other, None)):
        runs, cluster_columns, extra = dataset.weighted_runs_frame(
            side, columns.given("outcome"), columns.given("by"), weights=side_weights,
            case=case, rerun=rerun_dim, strata=strata,
        )  # fmt: skip
        if extra:
            raise InvalidOptionError(
                f"weights= on Datasets with extra dims {extra} is not available for "
                "paired_delta yet: select one label of each first"
            )
        frames.append(runs)
    long = Columns.of(
        outcome=columns.given("outcome"), by=_one_or_several(cluster_columns), on=str(case),
        rerun=str(rerun_dim), strata=strata, weights=columns.given("weights"),
    )  # fmt: skip
    design = pairing.paired_design(frames[0], frames[1], long, how=how, missing=missing, nest=nest)
    return replace(design, default_labels=("A", "B"))


# --- many models' results on shared items


def _comparison_of_frame(data: Any, columns: Columns, **options: Any) -> ComparisonDesign:
    _require_by(columns, "DataFrame")
    options.pop("case")
    return pairing.comparison_design(data, columns, **options)


def _comparison_of_dask(data: Any, columns: Columns, **options: Any) -> ComparisonDesign:
    _require_by(columns, "DataFrame")
    if not columns.on:
        raise InvalidOptionError("dask DataFrames are matched on columns: pass on=")
    data = dask_adapter.compute_columns(data, columns.names())
    return _comparison_of_frame(data, columns, **options)


def _comparison_of_dataset(
    data: Any, columns: Columns, *, case: Hashable, **options: Any
) -> ComparisonDesign:
    rerun = columns.given("rerun")
    rerun_dim = "rerun" if rerun is None else rerun
    if not columns.weights:
        return dataset.comparison_design(data, columns, case=case, rerun=rerun_dim, **options)
    if columns.responded or columns.on:
        raise InvalidOptionError(
            "weights= on a Dataset takes neither responded= nor on= yet (its cases are the items)"
        )
    model = columns.given("model")
    runs, cluster_columns, extra = dataset.weighted_runs_frame(
        data, columns.given("outcome"), columns.given("by"), weights=columns.given("weights"),
        case=case, rerun=rerun_dim, strata=columns.given("strata"),
    )  # fmt: skip
    if extra != [str(model)]:
        raise InvalidOptionError(
            f"compare needs the models along one extra dim {model!r}; the outcome has "
            f"extra dims {extra}"
        )
    long = Columns.of(
        outcome=columns.given("outcome"), by=_one_or_several(cluster_columns), model=model,
        on=str(case), rerun=str(rerun_dim), strata=columns.given("strata"),
        weights=columns.given("weights"),
    )  # fmt: skip
    return pairing.comparison_design(runs, long, **options)


_COMPARISON_DESIGNS: dict[str, Callable[..., ComparisonDesign]] = {
    "pandas": _comparison_of_frame,
    "arrays": _no_arrays("compare needs a DataFrame, not arrays"),
    "dask": _comparison_of_dask,
    "xarray": _comparison_of_dataset,
}


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
    columns = Columns.of(
        outcome=outcome,
        by=by,
        model=model,
        on=on,
        rerun=rerun,
        strata=strata,
        responded=responded,
        weights=weights,
    )
    data = arrow.to_pandas(data, columns.names(), matched_on=on)
    options = {"how": how, "missing": missing, "nest": nest, "case": case}
    return _COMPARISON_DESIGNS[backend(data)](data, columns, **options)


# --- per-case moments of runs (the rerun statistics)


def _cases_of_frame(data: Any, columns: Columns) -> CaseDesign:
    # the clusters must be a coordinate along the cases: named, so that a by= column that
    # varies within a case is an error that says so
    by, over = columns.given("by"), columns.given("over")
    laid_out = layout.from_frame(
        data,
        case=columns.given("case"),
        rerun=columns.given("rerun"),
        outcome=columns.given("outcome"),
        dims=[] if over is None else as_labels(over, role="over"),
        coords="auto" if by is None else list(as_labels(by)),
    )
    outcome = columns.given("outcome")
    return dataset.case_design(laid_out, outcome, by=by, case="case", rerun="rerun")


def _cases_of_dask(data: Any, columns: Columns) -> CaseDesign:
    return _cases_of_frame(dask_adapter.compute_columns(data, columns.names()), columns)


def _cases_of_dataset(data: Any, columns: Columns) -> CaseDesign:
    if columns.over:
        raise InvalidOptionError(
            "over= is for DataFrames; a Dataset's extra dims are used as they are"
        )
    if not columns.rerun:
        raise InvalidOptionError(
            "rerun=None (number the runs) is for DataFrames; name the rerun dim"
        )
    outcome, by = columns.given("outcome"), columns.given("by")
    case, rerun = columns.given("case"), columns.given("rerun")
    return dataset.case_design(data, outcome, by=by, case=case, rerun=rerun)


_CASE_DESIGNS: dict[str, Callable[..., CaseDesign]] = {
    "pandas": _cases_of_frame,
    "arrays": _no_arrays("the rerun statistics need a DataFrame or a (case, rerun) Dataset"),
    "dask": _cases_of_dask,
    "xarray": _cases_of_dataset,
}


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
    columns = Columns.of(outcome=outcome, case=case, rerun=rerun, by=by, over=over)
    data = arrow.to_pandas(data, columns.names())
    return _CASE_DESIGNS[backend(data)](data, columns)


# --- the outcome row by row, with candidate groupings (check_clustering)


def _rows_of_frame(data: Any, columns: Columns, groupings: Any, **options: Any) -> RowsDesign:
    options.pop("case"), options.pop("rerun")
    return frame.rows_design(data, columns.given("outcome"), groupings, **options)


def _rows_of_dask(data: Any, columns: Columns, groupings: Any, **options: Any) -> RowsDesign:
    data = dask_adapter.compute_columns(data, columns.names())
    return _rows_of_frame(data, columns, groupings, **options)


def _rows_of_dataset(data: Any, columns: Columns, groupings: Any, **options: Any) -> RowsDesign:
    return dataset.rows_design(data, columns.given("outcome"), groupings, **options)


_ROWS_DESIGNS: dict[str, Callable[..., RowsDesign]] = {
    "pandas": _rows_of_frame,
    "arrays": _no_arrays("check_clustering needs a DataFrame or a Dataset, not arrays"),
    "dask": _rows_of_dask,
    "xarray": _rows_of_dataset,
}


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
    columns = Columns.of(outcome=outcome, time=time, groupings=candidates)
    if time is not None and window is not None:
        check_time_column(data, time, window)
    data = arrow.to_pandas(data, columns.names())
    options = {"missing": missing, "time": time, "window": window, "case": case, "rerun": rerun}
    return _ROWS_DESIGNS[backend(data)](data, columns, groupings, **options)


# --- when each cluster was complete (confidence_sequence's order of arrival)


def _arrivals_of_frame(data: Any, columns: Columns, **_: Any) -> Any:
    _require_by(columns, "DataFrame")
    return frame.cluster_arrivals(data, list(columns.by), columns.given("order"))


def _arrivals_of_dask(data: Any, columns: Columns, **_: Any) -> Any:
    return _arrivals_of_frame(dask_adapter.compute_columns(data, columns.names()), columns)


def _arrivals_of_dataset(data: Any, columns: Columns, *, case: Hashable, **_: Any) -> Any:
    return dataset.cluster_arrivals(data, columns.given("by"), columns.given("order"), case=case)


_ARRIVALS: dict[str, Callable[..., Any]] = {
    "pandas": _arrivals_of_frame,
    "arrays": _no_arrays("order= names a column: give the rows as a DataFrame, not arrays"),
    "dask": _arrivals_of_dask,
    "xarray": _arrivals_of_dataset,
}


def cluster_arrivals(
    data: Any, outcome: Hashable, by: Any, *, order: Hashable | None, case: Hashable = "case"
) -> Any:
    """When each cluster was complete: the largest value of the ``order`` column among its
    rows (without one, its last row's position: a file that grows by appending; for arrays,
    the last position of its value), indexed by cluster code (the codes of
    :func:`mean_design`, in sorted label order)."""
    if data is None:  # outcome and by are the values themselves: no column to order by
        if order is not None:
            return _ARRIVALS["arrays"]()
        values, _, by_labels = frame.as_frame(None, outcome, by)
        return frame.cluster_arrivals(values, by_labels, None)
    columns = Columns.of(outcome=outcome, by=by, order=order)
    data = arrow.to_pandas(data, columns.names())
    return _ARRIVALS[backend(data)](data, columns, case=case)


def _slices_of_frame(data: Any, columns: Columns, **_: Any) -> list[tuple[Any, Any]]:
    require_columns(data, as_labels(columns.given("over"), role="over"))
    codes, labels = frame.over_groups(data, columns.given("over"))
    return [(label, data[codes == i]) for i, label in enumerate(labels)]


def _slices_of_dask(data: Any, columns: Columns, **_: Any) -> list[tuple[Any, Any]]:
    over = as_labels(columns.given("over"), role="over")
    _, labels = frame.over_groups(dask_adapter.compute_columns(data, over), _one_or_several(over))
    slices = []
    for label in labels:
        values = label if len(over) > 1 else (label,)
        keep = None
        for column, value in zip(over, values, strict=True):
            match = data[column] == value
            keep = match if keep is None else keep & match
        slices.append((label, data[keep]))
    return slices


def _slices_of_dataset(data: Any, columns: Columns, *, case: Hashable, **_: Any) -> list:
    over = as_labels(columns.given("over"), role="over")
    coords = dataset.case_coordinates(data, over, case=case)
    codes, labels = frame.over_groups(coords, _one_or_several(over))
    return [
        (label, data.isel({case: np.flatnonzero(codes == i)})) for i, label in enumerate(labels)
    ]


_COMPARISON_SLICES: dict[str, Callable[..., list[tuple[Any, Any]]]] = {
    "pandas": _slices_of_frame,
    "arrays": _no_arrays("over= names a column: give the rows as a DataFrame, not arrays"),
    "dask": _slices_of_dask,
    "xarray": _slices_of_dataset,
}


def comparison_slices(
    data: Any, over: Any, *, model: Hashable, on: Any = None, case: Hashable = "case"
) -> list[tuple[Any, Any]]:
    """The ``over=`` slices of the data of ``compare``: ``(label, the rows of that slice)``,
    labels in sorted order (``frame.over_groups``), each slice the same kind of data as
    ``data`` (a polars or pyarrow table becomes pandas), never a copy the caller sees."""
    if data is None:
        return _COMPARISON_SLICES["arrays"]()
    columns = Columns.of(over=over, model=model, on=on)
    if arrow.is_table(data):
        data = arrow.to_pandas(data, arrow.column_names(data), matched_on=on)
    return _COMPARISON_SLICES[backend(data)](data, columns, case=case)


def _paired_arrivals_of_frame(data: Any, other: Any, columns: Columns, **_: Any) -> Any:
    _require_by(columns, "DataFrame")
    sides = [data] if _is_label(other) else [data, other]
    return frame.label_arrivals(sides, list(columns.by), columns.given("order"))


def _paired_arrivals_of_dask(data: Any, other: Any, columns: Columns, **_: Any) -> Any:
    names = columns.names()
    sides = [dask_adapter.compute_columns(data, names)]
    if not _is_label(other):
        sides.append(dask_adapter.compute_columns(other, names))
    return frame.label_arrivals(sides, list(columns.by), columns.given("order"))


def _paired_arrivals_of_dataset(
    data: Any, other: Any, columns: Columns, *, case: Hashable, **_: Any
) -> Any:
    return dataset.label_arrivals(
        [data, other], columns.given("by"), columns.given("order"), case=case
    )


_PAIRED_ARRIVALS: dict[str, Callable[..., Any]] = {
    "pandas": _paired_arrivals_of_frame,
    "arrays": _no_arrays("order= names a column: give the rows as a DataFrame, not arrays"),
    "dask": _paired_arrivals_of_dask,
    "xarray": _paired_arrivals_of_dataset,
}


def paired_arrivals(
    data: Any,
    other: Any,
    outcome: Hashable,
    by: Any,
    *,
    order: Hashable | None,
    case: Hashable = "case",
) -> dict[Any, float]:
    """When each cluster of a paired comparison was complete: the largest value of the
    ``order`` column among its rows on either side, by cluster label (without one, its last
    row's position in ``data``, the run that grows)."""
    columns = Columns.of(outcome=outcome, by=by, order=order)
    data = arrow.to_pandas(data, columns.names())
    if not _is_label(other):
        other = arrow.to_pandas(other, columns.names())
    return _PAIRED_ARRIVALS[backend(data)](data, other, columns, case=case)


def slice_arrivals(
    data: Any,
    outcome: Hashable,
    by: Any,
    *,
    over: Any,
    order: Hashable | None,
    other: Any = None,
    paired: bool = False,
    case: Hashable = "case",
) -> dict[Any, Any]:
    """Each ``over=`` slice's own arrivals, by slice label: :func:`cluster_arrivals` (or,
    ``paired``, :func:`paired_arrivals` against ``other``) of that slice's rows alone, so that
    a cluster label two slices share arrives in each when its rows there are complete (each
    array by the slice's own cluster codes, in sorted label order)."""
    columns = Columns.of(outcome=outcome, by=by, over=over, order=order)

    def sliced(table: Any) -> list[tuple[Any, Any]]:
        if table is None:
            return _COMPARISON_SLICES["arrays"]()
        table = arrow.to_pandas(table, columns.names())
        return _COMPARISON_SLICES[backend(table)](table, columns, case=case)

    slices = sliced(data)
    others: dict[Any, Any] = {}
    if paired and order is not None and not _is_label(other):
        # with an order column both sides' rows count; without one, only ``data``'s
        others = dict(sliced(other))
    if not paired:
        return {
            label: cluster_arrivals(part, outcome, by, order=order, case=case)
            for label, part in slices
        }
    return {
        label: paired_arrivals(part, others.get(label, other), outcome, by, order=order, case=case)
        for label, part in slices
    }


# --- the missing rows by reason (missing_report)


def _reasons_of_frame(data: Any, columns: Columns, **_: Any) -> tuple[tuple[Any, int, int], ...]:
    outcome, by = columns.given("outcome"), columns.given("by")
    reason, responded = columns.given("reason"), columns.given("responded")
    return frame.missing_reasons(data, outcome, by, reason=reason, responded=responded)


def _reasons_of_dask(data: Any, columns: Columns, **_: Any) -> tuple[tuple[Any, int, int], ...]:
    return _reasons_of_frame(dask_adapter.compute_columns(data, columns.names()), columns)


def _reasons_of_dataset(
    data: Any, columns: Columns, *, case: Hashable, rerun: Hashable
) -> tuple[tuple[Any, int, int], ...]:
    outcome, by = columns.given("outcome"), columns.given("by")
    reason, responded = columns.given("reason"), columns.given("responded")
    return dataset.missing_reasons(
        data, outcome, by, reason=reason, responded=responded, case=case, rerun=rerun
    )


_REASONS: dict[str, Callable[..., tuple[tuple[Any, int, int], ...]]] = {
    "pandas": _reasons_of_frame,
    "arrays": _reasons_of_frame,
    "dask": _reasons_of_dask,
    "xarray": _reasons_of_dataset,
}


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
    columns = Columns.of(outcome=outcome, by=by, reason=reason, responded=responded)
    data = arrow.to_pandas(data, columns.names())
    return _REASONS[backend(data)](data, columns, case=case, rerun=rerun)
