"""Adapters: each backend's input validated and reduced to a design, nothing else.

Every public front builds its call's :class:`~clusterstats.adapters.labels.Columns` once
(:func:`columns_of`: every label checked, the outcome distinct from the other roles, a
Dataset's (case, rerun) dims named) and hands ``(data, columns, options)`` to one function
per kind of design here. Each looks the backend of ``data`` up in that design's dispatch
table and hands both to the backend's module: :mod:`~clusterstats.adapters.frame` and
:mod:`~clusterstats.adapters.pairing` (pandas DataFrames, and plain arrays with
``data=None``), :mod:`~clusterstats.adapters.dataset` (xarray Datasets laid out as (case,
rerun)) and :mod:`~clusterstats.adapters.dask` (dask DataFrames); a polars or pyarrow table
is first converted, its named columns only, by :mod:`~clusterstats.adapters.arrow`. Every
statistic calls these, so a backend gives the same design, and hence the same numbers, notes
and warnings, as every other.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from clusterstats._design import (
    CaseDesign,
    ComparisonDesign,
    Groupings,
    JudgedComparisonDesign,
    JudgedDesign,
    MeanDesign,
    PairedDesign,
    RowsDesign,
)
from clusterstats.adapters import arrow, dataset, frame, judged, layout, pairing
from clusterstats.adapters import dask as dask_adapter
from clusterstats.adapters.labels import (
    Columns,
    check_time_column,
    is_hashable,
    require_columns,
)
from clusterstats.adapters.sides import side_names
from clusterstats.errors import (
    ClusterStatsError,
    ColumnNotFoundError,
    FileReadError,
    InvalidInputError,
    InvalidOptionError,
)

__all__ = [
    "backend",
    "case_design",
    "columns_of",
    "comparison_designs",
    "in_slice",
    "is_dataset",
    "judged_comparison_design",
    "judged_design",
    "judged_paired_design",
    "mean_design",
    "missing_reasons",
    "naming",
    "paired_design",
    "rows_design",
]


def columns_of(data: Any, outcome: Any, by: Any = None, **roles: Any) -> Columns:
    """The columns a call names, checked once at its front: labels of ``data``'s columns, or
    with ``data=None`` the outcome and cluster values themselves (array-likes)."""
    if data is None:
        return Columns.of_values(outcome, by, **roles)
    return Columns.of(outcome, by, **roles)


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


def _dispatch(
    table: dict[str, Callable[..., Any]], data: Any, columns: Columns, matched_on: Any = "unused"
) -> Any:
    """The backend's entry of ``table`` for ``data`` (a polars or pyarrow table first becomes
    pandas, its named columns only; ``matched_on`` as :func:`arrow.to_pandas`) and the data
    it takes."""
    if data is not None:
        data = arrow.to_pandas(data, columns.names(), matched_on=matched_on)
    return table[backend(data)], data


def _require_by(columns: Columns, kind: str = "DataFrame") -> None:
    if columns.given("by") is None:  # an empty list is refused where it is read
        raise InvalidOptionError(
            f"by= names the cluster column(s) of a {kind}; only a (case, rerun) Dataset "
            "defaults to its cases"
        )


def _no_arrays(message: str) -> Callable[..., Any]:
    """The dispatch entry of ``data=None`` for a design that arrays cannot give."""

    def refuse(*_: Any, **__: Any) -> Any:
        raise InvalidInputError(message)

    return refuse


def _computed(function: Callable[..., Any]) -> Callable[..., Any]:
    """A frame's entry for a dask DataFrame: its named columns computed into pandas first."""

    def on_dask(data: Any, columns: Columns, *args: Any, **options: Any) -> Any:
        return function(
            dask_adapter.compute_columns(data, columns.names()), columns, *args, **options
        )

    return on_dask


# --- the per-cluster statistics of cluster_ci, icc, design_effect and what builds on them


def _mean_of_frame(data: Any, columns: Columns, **options: Any) -> MeanDesign:
    _require_by(columns)
    design = frame.mean_design(data, columns, **options)
    frame.warn_repeated_items(data, columns)
    return design


def _mean_of_dask(data: Any, columns: Columns, **options: Any) -> MeanDesign:
    _require_by(columns)
    return dask_adapter.mean_design(data, columns, **options)


_MEAN_DESIGNS: dict[str, Callable[..., MeanDesign]] = {
    "pandas": _mean_of_frame,
    "arrays": lambda _, columns, **options: frame.arrays_mean_design(columns, **options),
    "dask": _mean_of_dask,
    "xarray": dataset.mean_or_weighted_design,
}


def mean_design(
    data: Any, columns: Columns, *, nest: bool = False, arrivals: bool = False
) -> MeanDesign:
    """The per-cluster statistics of ``cluster_ci``, ``icc``, ``design_effect`` and what is
    built on them; with ``arrivals``, when each group's clusters were complete (a confidence
    sequence's order of arrival), read in the same pass."""
    build, data = _dispatch(_MEAN_DESIGNS, data, columns)
    return build(data, columns, nest=nest, arrivals=arrivals)


# --- two sets of results matched item by item


def _is_label(other: Any) -> bool:
    """Whether ``other`` names a second outcome column (rather than being a second table)."""
    return is_hashable(other) and not (
        arrow.is_table(other) or hasattr(other, "columns") or isinstance(other, xr.Dataset)
    )


def _paired_of_frame(data: Any, other: Any, columns: Columns, **options: Any) -> PairedDesign:
    _require_by(columns)
    options.pop("labels")
    return pairing.paired_design(data, other, columns, **options)


def _paired_of_dask(data: Any, other: Any, columns: Columns, **options: Any) -> PairedDesign:
    _require_by(columns)
    frames = dask_adapter.is_dask_frame(other)
    if frames and not columns.on:
        raise InvalidOptionError("dask DataFrames are matched on columns: pass on=")
    data = dask_adapter.compute_columns(data, columns.names())
    if frames:
        other = dask_adapter.compute_columns(other, _second(columns).names())
    return _paired_of_frame(data, other, columns, **options)


_PAIRED_DESIGNS: dict[str, Callable[..., PairedDesign]] = {
    "pandas": _paired_of_frame,
    "arrays": _no_arrays("paired_delta needs a DataFrame (or two), not arrays"),
    "dask": _paired_of_dask,
    "xarray": dataset.paired_or_weighted_design,
}


def _second(columns: Columns) -> Columns:
    """The columns read from the second side: the weights are read from the first only."""
    return replace(columns, other=None, weights=None)


def paired_design(
    data: Any,
    other: Any,
    columns: Columns,
    *,
    how: str = "strict",
    missing: str = "drop",
    nest: bool = False,
    labels: tuple[str, str] | None = None,
    arrivals: bool = False,
) -> PairedDesign:
    """Matched items of two sets of results (two frames, two columns, two Datasets); with
    ``over``, one set per group of the frames' ``over`` column(s); with ``arrivals``, when
    each group's clusters were complete on either side, read in the same pass."""
    if data is None:
        return _PAIRED_DESIGNS["arrays"]()
    two_columns = _is_label(other)
    if two_columns:
        columns = columns.with_roles(other=other)
    names = None if labels is not None or two_columns else side_names(data, other, columns)
    if arrow.is_table(data) or arrow.is_table(other):
        on = columns.given("on") or ("rows" if two_columns else None)
        data = arrow.to_pandas(data, columns.names(), matched_on=on)
        if not two_columns:
            other = arrow.to_pandas(other, _second(columns).names(), matched_on=on)
    options = {"how": how, "missing": missing, "nest": nest, "labels": labels, "arrivals": arrivals}
    design = _PAIRED_DESIGNS[backend(data)](data, other, columns, **options)
    named = {"weights": _weights_label(columns)} | (
        {} if names is None else {"default_labels": names}
    )
    return replace(design, **named)


def _weights_label(columns: Columns) -> str | None:
    """The weight column as a design names it."""
    return None if columns.weights is None else str(columns.weights)


# --- many models' results on shared items


def _comparison_of_frame(data: Any, columns: Columns, **options: Any) -> ComparisonDesign:
    _require_by(columns)
    return pairing.comparison_design(data, columns, **options)


def _slices_of_frame(data: Any, columns: Columns) -> list[tuple[Any, Any]]:
    require_columns(data, list(columns.over))
    codes, labels = frame.over_groups(data, columns.given("over"))
    return [(label, data[codes == i]) for i, label in enumerate(labels)]


def _slices_of_dataset(data: Any, columns: Columns) -> list[tuple[Any, Any]]:
    case = columns.layout[0]
    coords = dataset.case_coordinates(data, list(columns.over), case=case)
    codes, labels = frame.over_groups(coords, columns.given("over"))
    return [
        (label, data.isel({case: np.flatnonzero(codes == i)})) for i, label in enumerate(labels)
    ]


_COMPARISON_DESIGNS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "pandas": (_comparison_of_frame, _slices_of_frame),
    "xarray": (dataset.comparison_or_weighted_design, _slices_of_dataset),
}


def comparison_designs(
    data: Any, columns: Columns, *, how: str = "strict", missing: str = "drop", nest: bool = False
) -> tuple[tuple[Any, ComparisonDesign], ...]:
    """Per-item values of many models on shared items: ``(label, design)`` for each ``over=``
    slice (labels in sorted order, ``frame.over_groups``), or ``((None, design),)`` without
    ``over``. The data are read once: a polars or pyarrow table converted, a dask DataFrame
    computed, their named columns only, then sliced; an error in a slice names it."""
    if data is None:
        what = "over= names a column: give the rows" if columns.over else "compare needs"
        raise InvalidInputError(f"{what} a DataFrame, not arrays")
    if dask_adapter.is_dask_frame(data):
        _require_by(columns)
        if not columns.on:
            raise InvalidOptionError("dask DataFrames are matched on columns: pass on=")
        data = dask_adapter.compute_columns(data, columns.names())
    build, data = _dispatch(_COMPARISON_DESIGNS, data, columns, columns.given("on"))
    reduce, slices_of = build
    weights = {"weights": _weights_label(columns)}
    if not columns.over:
        design = reduce(data, columns, how=how, missing=missing, nest=nest)
        return ((None, replace(design, **weights)),)
    designs = []
    over = columns.given("over")
    for label, rows in slices_of(data, columns):
        with in_slice(over, label):
            design = reduce(rows, columns, how=how, missing=missing, nest=nest)
        designs.append((label, replace(design, **weights)))
    return tuple(designs)


def in_slice(over: Any, label: Any) -> Any:
    """Errors raised while a slice is read or compared say which slice."""
    return naming(f"slice {over}={label!r}")


@contextmanager
def naming(part: str) -> Iterator[None]:
    """Errors raised inside say which ``part`` of a call they come from, ``part`` first (a
    missing column or file is the same in every part and keeps its own message)."""
    try:
        yield
    except (ColumnNotFoundError, FileReadError):
        raise
    except ClusterStatsError as error:
        raise type(error)(f"{part}: {error}") from None


# --- per-case moments of runs (the rerun statistics)


def _cases_of_frame(data: Any, columns: Columns) -> CaseDesign:
    # the clusters must be a coordinate along the cases: named, so that a by= column that
    # varies within a case is an error that says so
    outcome, by = columns.outcome, columns.given("by")
    laid_out = layout.from_frame(
        data,
        case=columns.case,
        rerun=columns.rerun,
        outcome=outcome,
        dims=list(columns.over),
        coords="auto" if by is None else list(columns.by),
    )
    return dataset.case_design(laid_out, outcome, by=by, case="case", rerun="rerun")


def _cases_of_dataset(data: Any, columns: Columns) -> CaseDesign:
    if columns.over:
        raise InvalidOptionError(
            "over= is for DataFrames; a Dataset's extra dims are used as they are"
        )
    if columns.rerun is None:
        raise InvalidOptionError(
            "rerun=None (number the runs) is for DataFrames; name the rerun dim"
        )
    case, rerun = columns.case, columns.rerun
    return dataset.case_design(
        data, columns.outcome, by=columns.given("by"), case=case, rerun=rerun
    )


_CASE_DESIGNS: dict[str, Callable[..., CaseDesign]] = {
    "pandas": _cases_of_frame,
    "arrays": _no_arrays("the rerun statistics need a DataFrame or a (case, rerun) Dataset"),
    "dask": _computed(_cases_of_frame),
    "xarray": _cases_of_dataset,
}


def case_design(data: Any, columns: Columns) -> CaseDesign:
    """Per-case moments of runs (a long frame is laid out as (case, rerun) first)."""
    build, data = _dispatch(_CASE_DESIGNS, data, columns)
    return build(data, columns)


# --- the outcome row by row, with candidate groupings (check_clustering)


def _rows_of_frame(data: Any, columns: Columns, groupings: Any, **options: Any) -> RowsDesign:
    return frame.rows_design(data, columns, groupings, **options)


_ROWS_DESIGNS: dict[str, Callable[..., RowsDesign]] = {
    "pandas": _rows_of_frame,
    "arrays": _no_arrays("check_clustering needs a DataFrame or a Dataset, not arrays"),
    "dask": _computed(_rows_of_frame),
    "xarray": dataset.rows_design,
}


def rows_design(
    data: Any, columns: Columns, groupings: Groupings, *, missing: str, window: str | None = None
) -> RowsDesign:
    """The usable outcomes row by row, with each candidate grouping's codes (and, with a
    ``time`` column and ``window``, the codes of the time windows, last); ``columns`` names
    the candidate groupings' columns as ``groupings``."""
    if columns.time is not None and window is not None:
        check_time_column(data, columns.time, window)
    build, data = _dispatch(_ROWS_DESIGNS, data, columns)
    return build(data, columns, groupings, missing=missing, window=window)


# --- the missing rows by reason (missing_report)


_REASONS: dict[str, Callable[..., tuple[tuple[Any, int, int], ...]]] = {
    "pandas": frame.missing_reasons,
    "arrays": _no_arrays("reason= names a column: give the rows as a DataFrame, not arrays"),
    "dask": _computed(frame.missing_reasons),
    "xarray": dataset.missing_reasons,
}


def missing_reasons(data: Any, columns: Columns) -> tuple[tuple[Any, int, int], ...]:
    """The missing rows by ``reason``: ``(reason, rows, clusters)``, most frequent first."""
    build, data = _dispatch(_REASONS, data, columns)
    return build(data, columns)


# --- a judge on every row, human labels on some


def _judged_of_frame(data: Any, columns: Columns, **options: Any) -> JudgedDesign:
    _require_by(columns)
    return judged.judged_design(data, columns, **options)


def _judged_of_dataset(data: Any, columns: Columns, **options: Any) -> JudgedDesign:
    long, named = judged.frame_of_dataset(data, columns)
    return judged.judged_design(long, named, **options)


_JUDGED_DESIGNS: dict[str, Callable[..., JudgedDesign]] = {
    "pandas": _judged_of_frame,
    "arrays": _no_arrays("judged_ci names a judge column: pass a DataFrame, not arrays"),
    "dask": _computed(_judged_of_frame),
    "xarray": _judged_of_dataset,
}


def judged_design(
    data: Any, columns: Columns, *, nest: bool = False, labels: Any = None
) -> JudgedDesign:
    """The per-cluster sums of ``judged_ci``: the judge's score on every row, the human
    labels where given (in ``data``, or in ``labels`` matched on ``columns.on``)."""
    if labels is not None:
        data = judged.with_labels(data, labels, columns)
    build, data = _dispatch(_JUDGED_DESIGNS, data, columns)
    return build(data, columns, nest=nest)


def _judged_pairs(data: Any, other: Any, columns: Columns, **options: Any) -> Any:
    _require_by(columns)
    how = options.pop("how")
    difference, one_side, (judge_range, human_range) = judged.paired_frame(
        data, other, columns, how=how
    )
    design = judged.judged_design(difference, columns, **options)
    return replace(design, judge_range=judge_range, human_range=human_range), one_side


_JUDGED_PAIRED_DESIGNS: dict[str, Callable[..., Any]] = {
    "pandas": _judged_pairs,
    "arrays": _no_arrays("judged_delta names a judge column: pass two DataFrames, not arrays"),
    "dask": _judged_pairs,
    "xarray": _no_arrays(
        "judged_delta matches two tables on a key; for a Dataset, lay each run out as a "
        "frame (Dataset.to_dataframe()) with its item key"
    ),
}


def judged_paired_design(
    data: Any, other: Any, columns: Columns, *, how: str, nest: bool = False
) -> tuple[JudgedDesign, int]:
    """The per-cluster sums of ``judged_delta``: two judged runs matched item by item, the
    judge's difference on every shared item, the labels' where both sides are labelled; and
    how many items were labelled on one side only."""
    build, data = _dispatch(_JUDGED_PAIRED_DESIGNS, data, columns, columns.given("on"))
    return build(data, other, columns, how=how, nest=nest)


def _judged_models(data: Any, columns: Columns, **options: Any) -> JudgedComparisonDesign:
    _require_by(columns)
    how = options.pop("how")
    models, frames, dropped = judged.model_frames(data, columns, how=how)
    outcome, judge = columns.outcome, columns.judge
    row = "__judged_row__"
    each_row = columns.with_roles(by=row, strata=None)
    scores = [judged.judged_design(f, columns, **options) for f in frames]
    rows = [judged.judged_design(f.assign(**{row: np.arange(len(f))}), each_row) for f in frames]
    pairs = {}
    for i, j in itertools.combinations(range(len(models)), 2):
        first, second = frames[i], frames[j]
        one_side = int((first[outcome].isna() != second[outcome].isna()).sum())
        difference = first.assign(
            **{outcome: first[outcome] - second[outcome], judge: first[judge] - second[judge]}
        )
        pairs[(i, j)] = (judged.judged_design(difference, columns, **options), one_side)
    # the scale check reads every model's scores and labels at once, so it speaks once
    judge_range = (min(d.judge_range[0] for d in scores), max(d.judge_range[1] for d in scores))
    humans = np.array([d.human_range for d in scores if not np.isnan(d.human_range[0])])
    human_range = (humans[:, 0].min(), humans[:, 1].max()) if humans.size else (np.nan, np.nan)

    def ranged(design: JudgedDesign) -> JudgedDesign:
        return replace(design, judge_range=judge_range, human_range=human_range)

    return JudgedComparisonDesign(
        models=models,
        scores=tuple(map(ranged, scores)),
        rows=tuple(map(ranged, rows)),
        pairs={key: (ranged(design), lonely) for key, (design, lonely) in pairs.items()},
        n_items=len(frames[0]),
        n_dropped_items=dropped,
    )


def _judged_models_of_dataset(data: Any, columns: Columns, **options: Any) -> Any:
    return _judged_models(*judged.frame_of_models(data, columns), **options)


_JUDGED_COMPARISON_DESIGNS: dict[str, Callable[..., JudgedComparisonDesign]] = {
    "pandas": _judged_models,
    "arrays": _no_arrays("judged_compare names a judge column: pass a DataFrame, not arrays"),
    "dask": _judged_models,
    "xarray": _judged_models_of_dataset,
}


def judged_comparison_design(
    data: Any, columns: Columns, *, how: str, nest: bool = False
) -> JudgedComparisonDesign:
    """The per-cluster sums of ``judged_compare``: each model's judged run, and each pair's
    item-by-item difference, the models matched on ``columns.on``."""
    build, data = _dispatch(_JUDGED_COMPARISON_DESIGNS, data, columns, columns.given("on"))
    return build(data, columns, how=how, nest=nest)
