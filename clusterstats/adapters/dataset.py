"""The xarray adapter: a Dataset laid out as (case, rerun) validated and reduced to a design.

The only place that knows about Datasets, dims, coordinates and dask arrays. The runs of each
case are reduced chunk by chunk (:func:`clusterstats.core.reruns.case_moments` through
``xarray.apply_ufunc``), so a dask-backed Dataset is never loaded whole: what comes back is
five numbers per case. Cases are clustered by themselves or by a coordinate along ``case``;
any other dim (``model``, ``task``) is a grouping.

A NaN outcome is "no run", unless the Dataset says the run happened: a boolean variable
named by the outcome's ``ran`` attribute (``to_case_rerun`` adds one when a row's outcome is
missing), or ``responded=`` (a variable that is False where a run gave no usable response).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from clusterstats._design import (
    CaseDesign,
    ComparisonDesign,
    Groupings,
    MeanDesign,
    MeanGroup,
    PairedDesign,
    PairedItems,
    ResponseRows,
    RowsDesign,
    moment_groups,
    over_of,
)
from clusterstats.adapters.frame import (
    arrival_values,
    check_binary,
    cluster_codes,
    factorize_sorted,
    reason_counts,
    stratify,
    time_windows,
)
from clusterstats.adapters.frame import mean_design as frame_mean_design
from clusterstats.adapters.labels import Columns, as_labels
from clusterstats.adapters.layout import RAN_ATTRIBUTE
from clusterstats.adapters.pairing import comparison_design as compare_frames
from clusterstats.adapters.pairing import complete_items, sums_by_cluster, with_arrivals
from clusterstats.adapters.pairing import paired_design as pair_frames
from clusterstats.core.crossed import memberships_of
from clusterstats.core.reruns import MOMENTS, case_moments, case_table, impute_runs
from clusterstats.errors import (
    AlignmentError,
    ColumnNotFoundError,
    DimensionError,
    EmptyDataError,
    InvalidClusterError,
    InvalidInputError,
    InvalidOptionError,
    InvalidOutcomeError,
    MissingOutcomeError,
)

# -- validating the layout -------------------------------------------------------------------


def outcome_array(data: Any, outcome: Hashable, *, case: Hashable, rerun: Hashable) -> xr.DataArray:
    """The outcome variable, validated and transposed to ``(*extra dims, case, rerun)``."""
    if not isinstance(data, xr.Dataset):
        raise InvalidInputError(f"expected an xarray Dataset, got {type(data).__name__}")
    if outcome not in data.data_vars:
        if outcome in data.coords:
            raise InvalidOptionError(
                f"{outcome!r} is a coordinate of the Dataset, not a data variable; make it one "
                f"with ds.reset_coords({outcome!r})"
            )
        raise ColumnNotFoundError(outcome, list(data.data_vars))
    array = data[outcome]
    for role, dim in (("case", case), ("rerun", rerun)):
        if dim not in array.dims:
            raise DimensionError(
                f"variable {outcome!r} has dims {tuple(array.dims)} but no {role} dim "
                f"{dim!r}; name it with {role}=..., or build the Dataset with "
                "clusterstats.to_case_rerun(df, case=..., rerun=..., outcome=...)"
            )
        if array.sizes[dim] == 0:
            raise EmptyDataError(f"the {role} dim {dim!r} of {outcome!r} is empty")
    dtype = array.dtype
    if dtype.kind not in "biuf":
        raise InvalidOutcomeError(
            f"outcome {outcome!r} has dtype {dtype}, which is not numeric; store 0/1 or a score"
        )
    extra = [d for d in array.dims if d not in (case, rerun)]
    return array.transpose(*extra, case, rerun)


def _ran_mask(variable: xr.DataArray, array: xr.DataArray) -> xr.DataArray:
    """The ``ran`` variable as a boolean mask over the outcome's cells: boolean (or 0/1)
    values only, on dims the outcome has, and True wherever the outcome has a value."""
    name = variable.name
    extra = [d for d in variable.dims if d not in array.dims]
    if extra:
        raise DimensionError(
            f"variable {name!r} (which runs happened) has dims {extra} that the outcome "
            f"{array.name!r} lacks; it must lie along the outcome's dims {tuple(array.dims)}"
        )
    if variable.dtype.kind == "b":
        mask = variable
    elif variable.dtype.kind in "iuf" and bool(variable.isin([0, 1]).all()):
        mask = variable == 1
    else:
        raise InvalidOptionError(
            f"variable {name!r} (which runs happened) must be boolean, or 0/1; it has dtype "
            f"{variable.dtype}"
        )
    mask = mask.broadcast_like(array).transpose(*array.dims)
    if bool((~mask & array.notnull()).any()):
        raise InvalidOutcomeError(
            f"{int((~mask & array.notnull()).sum())} cells of {array.name!r} have a value where "
            f"{name!r} says no run happened"
        )
    return mask


def _ran_and_outcome(
    data: xr.Dataset, array: xr.DataArray, responded: Hashable | None
) -> tuple[xr.DataArray, xr.DataArray | None]:
    """The outcome with NaN wherever there is no usable response, and the mask of the cells
    where a run happened (None when every NaN means "no run")."""
    ran = None
    name = array.attrs.get(RAN_ATTRIBUTE)
    if name is not None:
        if name not in data.variables:
            raise ColumnNotFoundError(name, list(data.data_vars))
        ran = _ran_mask(data[name], array)
    if responded is None:
        return array, ran
    if responded not in data.variables:
        raise ColumnNotFoundError(responded, list(data.data_vars))
    flag = data[responded]
    if flag.dtype.kind not in "biuf":
        raise InvalidOptionError(
            f"response indicator {responded!r} must be boolean (True = a usable response; 0/1 "
            f"is accepted too); it has dtype {flag.dtype}"
        )
    flag = flag.broadcast_like(array).transpose(*array.dims)
    answered = flag == 1
    declined = flag == 0  # NaN: no run
    contradicting = answered & array.isnull()
    if bool(contradicting.any()):
        raise InvalidOutcomeError(
            f"{int(contradicting.sum())} runs have {responded!r} True but no {array.name!r} value"
        )
    ran = (~array.isnull() | declined) if ran is None else (ran | declined)
    return array.where(answered), ran


def _moments(array: xr.DataArray, ran: xr.DataArray | None, rerun: Hashable) -> np.ndarray:
    if array.chunks is not None:  # dask: every case's runs must sit in one chunk
        array = array.chunk({rerun: -1})
        if ran is not None:
            ran = ran.chunk(array.chunksizes)
    arguments = [array] if ran is None else [array, ran]
    moments = xr.apply_ufunc(
        case_moments,
        *arguments,
        input_core_dims=[[rerun]] * len(arguments),
        output_core_dims=[["moment"]],
        dask="parallelized",
        output_dtypes=[np.float64],
        dask_gufunc_kwargs={"output_sizes": {"moment": len(MOMENTS)}},
    )
    if moments.chunks is None:
        return np.asarray(moments.values)
    return _compute_into_array(moments.data)


def _compute_into_array(lazy: Any) -> np.ndarray:
    """Compute a dask array. Under the local schedulers each chunk is written straight into
    one preallocated array (no second copy from concatenating the chunks); under a
    distributed client the chunks come back and are concatenated."""
    import dask.array as da

    try:
        from distributed import default_client

        default_client()
    except (ImportError, ValueError):
        out = np.empty(lazy.shape, dtype=lazy.dtype)
        da.store(lazy, out, lock=False)
        return out
    return np.asarray(lazy.compute())


def _along_case(data: xr.Dataset, name: Hashable, case: Hashable, role: str) -> np.ndarray:
    """The values of a coordinate (or variable) along the case dim."""
    if name not in data.variables:
        raise ColumnNotFoundError(name, list(data.coords) + list(data.data_vars))
    variable = data[name]
    if variable.dims != (case,):
        raise DimensionError(
            f"{role}={name!r} must be a coordinate along the case dim {case!r}; it has dims "
            f"{tuple(variable.dims)}"
        )
    return np.asarray(variable.values)


def case_codes(data: xr.Dataset, array: xr.DataArray, case: Hashable, by: Any):
    """Cluster code of each case in sorted label order (as the pandas path numbers them),
    or None when every case is its own cluster and the cases are already in label order;
    and a function from codes to labels."""
    index = array.indexes.get(case)
    if index is not None and not index.is_unique:
        repeated = index[index.duplicated()].unique()
        raise AlignmentError(
            f"{len(repeated)} labels of the {case!r} dim name more than one case (e.g. "
            f"{list(repeated[:3])}); each case needs its own label"
        )
    if by is None:
        if index is None or index.is_monotonic_increasing:
            # the labels are read only when a message needs some: ten million of them
            # would be 80 MB held for nothing
            coordinate = array[case]
            return None, lambda ids: coordinate[np.asarray(ids, dtype=np.intp)].values.tolist()
        frame = pd.DataFrame({"case": np.asarray(array[case].values)})
        columns: list[Hashable] = ["case"]
    else:
        names = as_labels(by)
        frame = pd.DataFrame({str(n): _along_case(data, n, case, "by") for n in names}, copy=False)
        columns = [str(n) for n in names]

    try:
        codes, names_of = cluster_codes(frame, columns, with_names=True)
    except InvalidClusterError:
        missing = int(frame[columns].isna().any(axis=1).sum())
        raise InvalidClusterError(
            f"{by!r} has {missing} missing cluster ids along {case!r}"
        ) from None
    return codes, names_of


def _by_names(by: Any, case: Hashable, data: Any = None) -> tuple[str, ...]:
    """The cluster names a result reports: the ``by`` coordinates, or without them the
    case dim, by the column it came from when ``to_case_rerun`` made it (its ``column``
    attribute), so that a frame's rerun statistics name the user's case column."""
    if by is not None:
        return tuple(str(b) for b in as_labels(by))
    if data is not None and case in getattr(data, "coords", {}):
        return (str(data[case].attrs.get("column", case)),)
    return (str(case),)


def _extra(array: xr.DataArray) -> tuple[tuple[str, ...], tuple[tuple[Any, ...], ...]]:
    dims = array.dims[:-2]
    return (
        tuple(str(d) for d in dims),
        tuple(tuple(np.asarray(array[d].values).tolist()) for d in dims),
    )


def _no_over(over: Any) -> None:
    if over is not None:
        raise InvalidOptionError(
            "over= is for DataFrames; a Dataset's extra dims are used as they are"
        )


# -- designs ---------------------------------------------------------------------------------


def case_design(
    data: Any,
    outcome: Hashable,
    *,
    by: Any,
    case: Hashable,
    rerun: Hashable,
    responded: Hashable | None = None,
) -> CaseDesign:
    """Validate and reduce: one pass over the runs, five numbers per case."""
    array = outcome_array(data, outcome, case=case, rerun=rerun)
    values, ran = _ran_and_outcome(data, array, responded)
    codes, _ = case_codes(data, array, case, by)
    extra_dims, extra_labels = _extra(array)
    return CaseDesign(
        moments=_moments(values, ran, rerun),
        extra_dims=extra_dims,
        extra_labels=extra_labels,
        case_labels_of=lambda: np.asarray(array[case].values),
        codes=codes,
        outcome=str(outcome),
        by=_by_names(by, case, data),
    )


def _case_strata(
    data: xr.Dataset, case: Hashable, strata: Hashable, codes: np.ndarray | None, nest: bool
) -> tuple[np.ndarray, np.ndarray, tuple[Any, ...]]:
    """Cluster codes (renumbered with ``nest``) and each cluster's stratum, from a stratum
    coordinate along the case dim."""
    labels = _along_case(data, strata, case, "strata")
    cases = pd.DataFrame({str(strata): labels})
    per_case = np.arange(labels.shape[0], dtype=np.intp) if codes is None else codes
    return stratify(cases, per_case, str(strata), nest=nest)


def mean_or_weighted_design(
    data: Any, columns: Columns, *, nest: bool = False, arrivals: bool = False
) -> MeanDesign:
    """:func:`mean_design`, or with ``weights=`` (a weight per case) the design of the runs
    as a long frame, its cases the clusters' members."""
    if columns.weights is None:
        return mean_design(data, columns, nest=nest, arrivals=arrivals)
    if columns.responded is not None:
        raise InvalidOptionError("weights= with responded= is not available for Datasets yet")
    runs, long = _weighted_runs(data, columns, columns.layout[1])
    return frame_mean_design(runs, long, nest=nest)


def _weighted_runs(
    data: Any, columns: Columns, rerun: Hashable, weights: Hashable | str | None = "given"
) -> tuple[pd.DataFrame, Columns]:
    """The runs of a Dataset with a weight per case as a long frame (:func:`weighted_runs_frame`,
    ``weights`` the weights' label or "given" for the call's), and the columns naming its
    outcome, clusters, extra dims (as ``over``), strata and weights."""
    case = columns.layout[0]
    strata = columns.strata
    runs, cluster_columns, extra = weighted_runs_frame(
        data, columns.outcome, columns.given("by"), case=case, rerun=rerun,
        weights=columns.weights if weights == "given" else weights, strata=strata,
    )  # fmt: skip
    long = Columns.of(
        columns.outcome, _one_or_several(cluster_columns),
        over=_one_or_several(extra) if extra else None, strata=strata,
        weights=columns.weights,
    )  # fmt: skip
    return runs, long


def _one_or_several(labels: Sequence[Hashable]) -> Any:
    return labels[0] if len(labels) == 1 else list(labels)


def paired_or_weighted_design(
    data: Any, other: Any, columns: Columns, *, labels: Any, arrivals: bool = False, **options: Any
) -> PairedDesign:
    """:func:`paired_design` of two Datasets, or with ``weights=`` (a weight per case, read
    from the first) the long frames of their runs, the cases the items."""
    if columns.over:
        raise InvalidOptionError(
            "over= slices a frame; a Dataset's extra dims (e.g. task) are its slices already"
        )
    rerun = "rerun" if columns.rerun is None else columns.rerun
    if columns.weights is None:
        design = paired_design(data, other, columns, rerun=rerun, labels=labels, **options)
        if not arrivals:
            return design
        by, order, case = columns.given("by"), columns.order, columns.layout[0]
        found = label_arrivals([data, other], by, order, case=case)
        groups = tuple((label, with_arrivals(items, found)) for label, items in design.groups)
        return replace(design, groups=groups, order=order)
    if columns.responded is not None or columns.on:
        raise InvalidOptionError(
            "weights= on Datasets takes neither responded= nor on= yet (their cases are the items)"
        )
    sides = [_weighted_runs(data, columns, rerun), _weighted_runs(other, columns, rerun, None)]
    long = sides[0][1]
    if long.over:
        raise InvalidOptionError(
            f"weights= on Datasets with extra dims {list(long.over)} is not available for "
            "paired_delta yet: select one label of each first"
        )
    case = str(columns.layout[0])
    long = replace(long, on=(case,), rerun=str(rerun))
    design = pair_frames(sides[0][0], sides[1][0], long, **options)
    return replace(design, default_labels=("A", "B"))


def comparison_or_weighted_design(
    data: Any, columns: Columns, *, how: str, missing: str, nest: bool
) -> ComparisonDesign:
    """:func:`comparison_design`, or with ``weights=`` (a weight per case) the long frame of
    the runs with the models along one extra dim."""
    case = columns.layout[0]
    rerun = "rerun" if columns.rerun is None else columns.rerun
    if columns.weights is None:
        return comparison_design(data, columns, rerun=rerun, how=how, missing=missing, nest=nest)
    if columns.responded is not None or columns.on:
        raise InvalidOptionError(
            "weights= on a Dataset takes neither responded= nor on= yet (its cases are the items)"
        )
    model = columns.model
    runs, long = _weighted_runs(data, columns, rerun)
    if list(long.over) != [str(model)]:
        raise InvalidOptionError(
            f"compare needs the models along one extra dim {model!r}; the outcome has "
            f"extra dims {list(long.over)}"
        )
    long = replace(long, over=(), model=model, on=(str(case),), rerun=str(rerun))
    return compare_frames(runs, long, how=how, missing=missing, nest=nest)


def mean_design(
    data: Any, columns: Columns, *, nest: bool = False, arrivals: bool = False
) -> MeanDesign:
    """Per-cluster statistics of the runs for each combination of the extra dims; with
    ``arrivals``, when each cluster was complete (:func:`cluster_arrivals`)."""
    case, rerun = columns.layout
    arrived = None
    if arrivals:
        arrived = cluster_arrivals(data, columns.given("by"), columns.order, case=case)
    outcome, by, over = columns.outcome, columns.given("by"), columns.given("over")
    responded, strata = columns.responded, columns.strata
    covariates = columns.covariates
    _no_over(over)
    array = outcome_array(data, outcome, case=case, rerun=rerun)
    values, ran = _ran_and_outcome(data, array, responded)
    codes, names = case_codes(data, array, case, by)
    stratum_of_cluster, stratum_labels = None, ()
    if strata is not None:
        codes, stratum_of_cluster, stratum_labels = _case_strata(data, case, strata, codes, nest)
    moments = _moments(values, ran, rerun)
    extra_dims, extra_labels = _extra(array)
    groups = []
    for label, m in moment_groups(moments, extra_dims, extra_labels):
        table, ids = case_table(
            m[:, 0], m[:, 1], m[:, 2], m[:, 4], codes=codes, residual=m[:, 5], name=outcome
        )
        if table.n_clusters == 0:
            where = "" if label is None else f" for {label!r}"
            raise EmptyDataError(f"no case has a run{where}")
        groups.append(
            MeanGroup(
                label=label,
                table=table,
                cluster_ids=ids,
                is_binary=not bool(m[:, 3].any()),
                strata=None if stratum_of_cluster is None else stratum_of_cluster[ids],
                arrivals=None if arrived is None else arrived[ids],
            )
        )
    responses = None
    if covariates:
        responses = _response_rows(data, values, ran, codes, covariates, case, groups)
    return MeanDesign(
        outcome=str(outcome),
        by=_by_names(by, case, data),
        over=over_of(extra_dims),
        groups=tuple(groups),
        strata_labels=tuple(stratum_labels),
        cluster_names=names,
        responses=responses,
        order=columns.order if arrivals else None,
    )


def _response_rows(
    data: xr.Dataset,
    values: xr.DataArray,
    ran: xr.DataArray | None,
    codes: np.ndarray | None,
    covariates: Sequence[Hashable],
    case: Hashable,
    groups: list[MeanGroup],
) -> tuple[ResponseRows, ...]:
    """Row-level inputs of a logistic response model: one row per run, covariates taken from
    coordinates along the case dim."""
    y = np.asarray(values.values, dtype=np.float64)
    happened = ~np.isnan(y) if ran is None else np.asarray(ran.values, dtype=bool)
    per_case = [
        np.asarray(_along_case(data, c, case, "covariates"), dtype=np.float64) for c in covariates
    ]
    n_cases = y.shape[-2]
    cluster_of_case = np.arange(n_cases) if codes is None else codes
    out = []
    flat_y = y.reshape(-1, n_cases, y.shape[-1])
    flat_ran = happened.reshape(-1, n_cases, y.shape[-1])
    for index, group in enumerate(groups):
        cell = flat_ran[index]
        case_of_row = np.nonzero(cell)[0]
        local = np.searchsorted(group.cluster_ids, cluster_of_case[case_of_row]).astype(np.intp)
        x = np.column_stack([c[case_of_row] for c in per_case])
        out.append(ResponseRows(values=flat_y[index][cell], codes=local, covariates=x))
    return tuple(out)


def _side_moments(
    data: Any, outcome: Hashable, case: Hashable, rerun: Hashable, responded: Hashable | None
) -> tuple[xr.DataArray, np.ndarray]:
    array = outcome_array(data, outcome, case=case, rerun=rerun)
    values, ran = _ran_and_outcome(data, array, responded)
    return array, _moments(values, ran, rerun)


def _policy_moments(moments: np.ndarray, missing: str, outcome: Hashable) -> np.ndarray:
    """Case moments after a missing-outcome policy (``drop`` leaves them as they are)."""
    if missing in ("drop", "ipw") or not moments[..., 4].any():
        return moments
    if missing == "raise":
        raise MissingOutcomeError(
            f"outcome {outcome!r} has {int(moments[..., 4].sum())} missing values; use "
            "missing='drop' or missing='fail' to handle them"
        )
    if moments[..., 3].any():
        fill = "0" if missing == "fail" else "1"
        raise InvalidOutcomeError(
            f"missing={missing!r} counts a missing outcome as {fill}, which needs a binary (0/1) "
            "outcome"
        )
    runs, total, within = impute_runs(
        moments[..., 0],
        moments[..., 1],
        moments[..., 2],
        moments[..., 4],
        0.0 if missing == "fail" else 1.0,
    )
    out = moments.copy()
    out[..., 0], out[..., 1], out[..., 2], out[..., 4] = runs, total, within, 0.0
    out[..., 5] = 0.0  # imputed runs sit at each case's new mean: nothing left to correct
    return out


def _show(labels: Any, k: int = 3) -> list[Any]:
    return np.asarray(labels)[:k].tolist()


def _cluster_labels(data: Any, case: Hashable, by: Any, cases: pd.Index) -> np.ndarray:
    """The cluster label of each case (the case itself without ``by``)."""
    if by is None:
        return np.asarray(cases, dtype=object)
    names = as_labels(by)
    columns = [_along_case(data, n, case, "by") for n in names]
    if any(pd.isna(pd.Series(c)).any() for c in columns):
        raise InvalidClusterError(f"{by!r} has missing cluster ids along {case!r}")
    if len(columns) == 1:
        return np.asarray(columns[0], dtype=object)
    # one tuple per case (np.asarray of tuples would make a 2-D array)
    labels = np.empty(len(cases), dtype=object)
    labels[:] = list(zip(*columns, strict=True))
    return labels


def _no_on(on: Any) -> None:
    if on is not None:
        raise InvalidOptionError(
            "a Dataset's items are its cases, matched by their label along the case dim; on= "
            "is for DataFrames"
        )


def paired_design(
    data: Any, other: Any, columns: Columns, *, rerun: Hashable, labels: Any, **options: Any
) -> PairedDesign:
    """Two Datasets with the same extra dims, cases matched by label (the case dim of
    ``columns.layout``); the runs of a case are averaged first. ``options``: ``how``,
    ``missing`` and ``nest``; ``labels`` the two sides' names (None: "A" and "B")."""
    case, how, missing = columns.layout[0], options["how"], options["missing"]
    nest = options.get("nest", False)
    outcome, by, on = columns.outcome, columns.given("by"), columns.given("on")
    responded, strata = columns.responded, columns.strata
    _no_on(on)
    if not isinstance(other, xr.Dataset):
        raise InvalidInputError(f"other must be an xarray Dataset, got {type(other).__name__}")
    label_a, label_b = labels or ("A", "B")
    (array_a, moments_a), (array_b, moments_b) = (
        _side_moments(d, outcome, case, rerun, responded) for d in (data, other)
    )
    extra_a, extra_b = _extra(array_a), _extra(array_b)
    if extra_a != extra_b:
        raise DimensionError(
            f"the two Datasets must have the same extra dims and labels; got "
            f"{dict(zip(*extra_a, strict=True))} and {dict(zip(*extra_b, strict=True))}"
        )
    moments_a = _policy_moments(moments_a, missing, outcome)
    moments_b = _policy_moments(moments_b, missing, outcome)
    case_a, case_b = pd.Index(array_a[case].values), pd.Index(array_b[case].values)
    only_a, only_b = case_a.difference(case_b), case_b.difference(case_a)
    if how == "strict" and (len(only_a) or len(only_b)):
        raise AlignmentError(
            f"{len(only_a)} cases only in {label_a} (e.g. {_show(only_a)}) and {len(only_b)} "
            f"only in {label_b} (e.g. {_show(only_b)}); pass how='inner' to compare the "
            "common cases"
        )
    common = case_a.intersection(case_b, sort=False)
    if len(common) == 0:
        raise AlignmentError(f"the two Datasets share no {case!r} label")
    pos_a, pos_b = case_a.get_indexer(common), case_b.get_indexer(common)
    clusters = _cluster_labels(data, case, by, case_a)[pos_a]
    differs = pd.Series(clusters).ne(pd.Series(_cluster_labels(other, case, by, case_b)[pos_b]))
    if differs.any():
        raise AlignmentError(
            f"{int(differs.sum())} cases are in a different {by!r} cluster in the two "
            f"Datasets (e.g. {_show(np.asarray(common)[differs.to_numpy()])})"
        )
    stratum_of_case = None
    if strata is not None:
        stratum_of_case = _along_case(data, strata, case, "strata")[pos_a]
    labels = np.asarray(common)
    reduced = CaseDesign(moments_a, extra_a[0], extra_a[1], lambda: labels, None, "", ())
    reduced_b = CaseDesign(moments_b, extra_b[0], extra_b[1], lambda: labels, None, "", ())

    def items_of(ma: np.ndarray, mb: np.ndarray) -> PairedItems:
        ma, mb = ma[pos_a], mb[pos_b]
        runs_a, runs_b = ma[:, 0], mb[:, 0]
        usable = (runs_a > 0) & (runs_b > 0)
        if not usable.any():
            raise EmptyDataError("no case has runs on both sides")
        cluster_items, lost_items = _ipw_counts(clusters, usable)
        ma, mb, runs_a, runs_b = ma[usable], mb[usable], runs_a[usable], runs_b[usable]
        with np.errstate(invalid="ignore", divide="ignore"):
            within_a = np.where(runs_a > 1, ma[:, 2] / (runs_a - 1), np.nan)
            within_b = np.where(runs_b > 1, mb[:, 2] / (runs_b - 1), np.nan)
        mean_a, mean_b = ma[:, 1] / runs_a, mb[:, 1] / runs_b
        codes, used = factorize_sorted(pd.Series(clusters[usable]))
        codes = np.asarray(codes, dtype=np.intp)
        members = None
        if by is not None and len(as_labels(by)) > 1 and stratum_of_case is None:
            members = tuple(memberships_of(list(used), len(as_labels(by))))
        strata_codes, strata_labels = None, ()
        if stratum_of_case is not None:
            codes, strata_codes, strata_labels = _item_strata(codes, stratum_of_case[usable], nest)
        single = bool(
            (runs_a == 1).all()
            and (runs_b == 1).all()
            and check_binary(mean_a)
            and check_binary(mean_b)
        )
        return PairedItems(
            a=mean_a,
            b=mean_b,
            codes=codes,
            runs_a=runs_a,
            runs_b=runs_b,
            within_a=within_a,
            within_b=within_b,
            single_run_binary=single,
            n_dropped_a=len(only_a),
            n_dropped_b=len(only_b),
            n_missing_items=int((~usable).sum()),
            max_runs=int(max(runs_a.max(), runs_b.max())),
            cluster_items=cluster_items,
            lost_cluster_items=lost_items,
            strata=strata_codes,
            strata_labels=strata_labels,
            members=members,
            cluster_labels=None if stratum_of_case is not None else tuple(used),
        )

    groups = tuple(
        (label, items_of(ma, mb))
        for (label, ma), (_, mb) in zip(reduced.groups(), reduced_b.groups(), strict=True)
    )
    return PairedDesign(
        outcome=str(outcome),
        by=_by_names(by, case, data),
        over=reduced.over,
        groups=groups,
        default_labels=("A", "B"),
    )


def _ipw_counts(clusters: np.ndarray, usable: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Items per cluster (usable or not) for the clusters of the usable items, in sorted label
    order, and the item counts of the clusters with no usable item."""
    codes = np.asarray(factorize_sorted(pd.Series(clusters))[0], dtype=np.intp)
    n = int(codes.max()) + 1
    total = np.bincount(codes, minlength=n).astype(np.float64)
    has_usable = np.bincount(codes[usable], minlength=n) > 0
    return total[has_usable], total[(total > 0) & ~has_usable]


def _item_strata(
    codes: np.ndarray, stratum_of_item: np.ndarray, nest: bool
) -> tuple[np.ndarray, np.ndarray, tuple[Any, ...]]:
    """The items' cluster codes (renumbered with ``nest``), each cluster's stratum code (in
    the order of the codes) and the strata labels."""
    frame = pd.DataFrame({"stratum": stratum_of_item})
    codes, stratum_of_cluster, labels = stratify(frame, codes, "stratum", nest=nest)
    used = np.unique(stratum_of_cluster)
    return codes, pd.factorize(stratum_of_cluster, sort=True)[0], tuple(labels[i] for i in used)


def comparison_design(
    data: Any, columns: Columns, *, rerun: Hashable, how: str, missing: str, nest: bool = False
) -> ComparisonDesign:
    """Many models along a ``model`` dim, the cases (the case dim of ``columns.layout``) as
    items: each model's mean run per case."""
    case = columns.layout[0]
    outcome, by, on = columns.outcome, columns.given("by"), columns.given("on")
    model, responded, strata = columns.model, columns.responded, columns.strata
    _no_on(on)
    array, moments = _side_moments(data, outcome, case, rerun, responded)
    extra_dims, extra_labels = _extra(array)
    if extra_dims != (str(model),):
        raise DimensionError(
            f"compare needs the models along one extra dim {model!r}; variable {outcome!r} has "
            f"extra dims {extra_dims} (select or stack the others first)"
        )
    models = extra_labels[0]
    if len(models) < 2:
        raise InvalidOptionError(f"compare needs at least two models, found {len(models)}")
    moments = _policy_moments(moments, missing, outcome)
    runs = moments[..., 0]  # (models, cases)
    present = (runs + moments[..., 4]) > 0
    complete, incomplete = complete_items(present, tuple(models), how)
    cases = np.asarray(array[case].values)
    usable = complete & (runs > 0).all(axis=0)
    if not usable.any():
        raise EmptyDataError("no item has a non-missing outcome for every model")
    clusters = _cluster_labels(data, case, by, pd.Index(cases))
    cluster_items, lost_items = _ipw_counts(clusters[complete], usable[complete])
    codes, used = factorize_sorted(pd.Series(clusters[usable]))
    codes = np.asarray(codes, dtype=np.intp)
    members = None
    if by is not None and len(as_labels(by)) > 1 and strata is None:
        members = tuple(memberships_of(list(used), len(as_labels(by))))
    values = moments[:, usable, 1] / runs[:, usable]
    strata_codes, strata_labels = None, ()
    if strata is not None:
        stratum_of_case = _along_case(data, strata, case, "strata")[usable]
        codes, strata_codes, strata_labels = _item_strata(codes, stratum_of_case, nest)
    order = sorted(range(len(models)), key=lambda j: models[j])
    ordered = np.ascontiguousarray(values[order])
    totals, squares, counts, is_binary = sums_by_cluster(ordered, codes, int(codes.max()) + 1)
    return ComparisonDesign(
        totals=totals,
        squares=squares,
        counts=counts,
        products=ordered @ ordered.T,
        models=tuple(models[j] for j in order),
        is_binary=is_binary,
        n_items=int(usable.sum()),
        n_dropped_items=int(incomplete.sum()),
        n_missing_items=int((complete & ~usable).sum()),
        outcome=str(outcome),
        by=_by_names(by, case, data),
        cluster_items=cluster_items,
        lost_cluster_items=lost_items,
        strata=strata_codes,
        strata_labels=strata_labels,
        members=members,
    )


def _dim_alias(array: xr.DataArray, name: Hashable, case: Hashable, rerun: Hashable) -> Hashable:
    """A case or rerun dim may be named by the frame column it came from (``to_case_rerun``
    keeps that name in the dim's ``column`` attribute)."""
    if name in array.dims or name in array.coords:
        return name
    for dim in (case, rerun):
        if dim in array.coords and array[dim].attrs.get("column") == str(name):
            return dim
    return name


def rows_design(
    data: Any, columns: Columns, groupings: Groupings, *, missing: str, window: str | None = None
) -> RowsDesign:
    """The runs one by one, each with the cluster code of every candidate grouping: a dim
    (``case``, ``rerun``) or any coordinate whose dims the outcome has."""
    outcome, time = columns.outcome, columns.time
    case, rerun = columns.layout
    array = outcome_array(data, outcome, case=case, rerun=rerun)
    if array.ndim != 2:
        raise DimensionError(
            f"check_clustering takes one (case, rerun) grid; variable {outcome!r} has extra "
            f"dims {tuple(array.dims[:-2])} (select one group first)"
        )
    values, ran = _ran_and_outcome(data, array, None)
    y = np.asarray(values.values, dtype=np.float64)
    happened = ~np.isnan(y) if ran is None else np.asarray(ran.values, dtype=bool)
    is_missing = happened & np.isnan(y)
    if missing == "raise" and is_missing.any():
        raise MissingOutcomeError(f"outcome {outcome!r} has {int(is_missing.sum())} missing values")
    if missing in ("fail", "pass") and is_missing.any():
        if not check_binary(y[happened]):
            raise InvalidOutcomeError(
                f"missing={missing!r} counts a missing outcome as 0 or 1, which needs a binary "
                "(0/1) outcome"
            )
        y = np.where(is_missing, 0.0 if missing == "fail" else 1.0, y)
        keep = happened
    else:
        keep = happened & ~np.isnan(y)
    coded = []
    for name, labels in groupings:
        per_cell = []
        for column in labels:
            column = _dim_alias(array, column, case, rerun)
            if column in (case, rerun):
                variable = array[column]
            elif column in data.variables:
                variable = data[column]
            else:
                raise ColumnNotFoundError(column, list(data.coords) + list(data.data_vars))
            if not set(variable.dims) <= set(array.dims):
                raise DimensionError(
                    f"candidate {column!r} has dims {tuple(variable.dims)}, not a subset of the "
                    f"outcome's {tuple(array.dims)}"
                )
            grid = np.asarray(variable.broadcast_like(array).transpose(*array.dims).values)
            per_cell.append(pd.Series(grid[keep]))
        frame = pd.DataFrame({i: s for i, s in enumerate(per_cell)})
        codes = pd.factorize(
            pd.MultiIndex.from_frame(frame) if len(per_cell) > 1 else frame[0], sort=True
        )[0]
        coded.append((name, codes.astype(np.intp)))
    if time is not None:
        if time not in data.variables:
            raise ColumnNotFoundError(time, list(data.coords) + list(data.data_vars))
        stamps = np.asarray(data[time].broadcast_like(array).transpose(*array.dims).values)
        bins = time_windows(stamps[keep], window)
        coded.append((f"{time} per {window}", pd.factorize(bins, sort=True)[0].astype(np.intp)))
    return RowsDesign(outcome=str(outcome), values=y[keep], groupings=tuple(coded))


def missing_reasons(data: Any, columns: Columns) -> tuple[tuple[Any, int, int], ...]:
    """The missing runs by the ``reason`` variable (of the outcome's dims, or along case)."""
    outcome, by, reason = columns.outcome, columns.given("by"), columns.reason
    responded, (case, rerun) = columns.responded, columns.layout
    array = outcome_array(data, outcome, case=case, rerun=rerun)
    values, ran = _ran_and_outcome(data, array, responded)
    if ran is None:
        return ()
    if reason not in data.variables:
        raise ColumnNotFoundError(reason, list(data.coords) + list(data.data_vars))
    is_missing = np.asarray(ran.values, dtype=bool) & np.isnan(np.asarray(values.values, float))
    grid = np.asarray(data[reason].broadcast_like(array).transpose(*array.dims).values)
    codes, _ = case_codes(data, array, case, by)
    per_case = np.arange(array.sizes[case]) if codes is None else codes
    cluster_grid = np.broadcast_to(per_case[:, None], array.shape[-2:])
    cluster_grid = np.broadcast_to(cluster_grid, array.shape)
    return reason_counts(pd.Series(grid[is_missing]), cluster_grid[is_missing])


def weighted_runs_frame(
    data: Any,
    outcome: Hashable,
    by: Any,
    *,
    weights: Hashable | None,
    case: Hashable,
    rerun: Hashable,
    strata: Hashable | None,
) -> tuple[pd.DataFrame, list[Hashable], list[str]]:
    """The runs of a Dataset as a long frame, for ``weights=`` (a coordinate along the case
    dim): one row per run that happened, with the extra dims, the case and rerun labels,
    the cluster and stratum coordinates and each case's weight (``weights=None``: no
    weight column). Returns the frame, its cluster columns and its extra-dim columns."""
    array = outcome_array(data, outcome, case=case, rerun=rerun)
    values, ran = _ran_and_outcome(data, array, None)
    extra_dims = [str(d) for d in array.dims if d not in (case, rerun)]
    columns: dict[Hashable, Any] = {}
    shape = values.shape
    grids = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    for dim, grid in zip(array.dims, grids, strict=True):
        labels = (
            np.asarray(array[dim].values)
            if dim in array.coords
            else np.arange(shape[array.dims.index(dim)])
        )
        columns[str(dim)] = labels[grid.ravel()]
    case_index = grids[array.dims.index(case)].ravel()
    columns[outcome] = np.asarray(values.values, dtype=np.float64).ravel()
    happened = ~np.isnan(columns[outcome]) if ran is None else np.asarray(ran.values).ravel()
    cluster_columns: list[Hashable] = [str(case)] if by is None else list(as_labels(by))
    if by is not None:
        for name in cluster_columns:
            columns[name] = np.asarray(_along_case(data, name, case, "by"))[case_index]
    if strata is not None:
        columns[strata] = np.asarray(_along_case(data, strata, case, "strata"))[case_index]
    if weights is not None:
        columns[weights] = np.asarray(_along_case(data, weights, case, "weights"))[case_index]
    frame = pd.DataFrame(columns)[happened]
    return frame.reset_index(drop=True), cluster_columns, extra_dims


def cluster_arrivals(
    data: xr.Dataset, by: Any, order: Hashable | None, *, case: Hashable
) -> np.ndarray:
    """When each cluster was complete: the largest ``order`` (a variable along the case dim,
    or along the outcome's dims, such as a time per run) among its cells, by cluster code;
    without one, the position of its last case."""
    if order is None:
        if case not in data.dims:
            raise DimensionError(f"the Dataset has no case dim {case!r}")
        cases = (
            data[case]
            if case in data.coords
            else xr.DataArray(np.arange(data.sizes[case]), dims=(case,))
        )
        codes, _ = case_codes(data, cases, case, by)
        positions = np.arange(data.sizes[case], dtype=float)
        per_case = np.arange(positions.shape[0]) if codes is None else codes
        arrivals = np.full(int(per_case.max()) + 1 if per_case.size else 0, -np.inf)
        np.maximum.at(arrivals, per_case, positions)
        return arrivals
    # the latest cell of each case, then the latest case of each cluster
    values = _case_arrivals(data, order, case)
    codes, _ = case_codes(data, data[order], case, by)
    per_case = np.arange(values.shape[0]) if codes is None else codes
    arrivals = np.full(int(per_case.max()) + 1 if per_case.size else 0, -np.inf)
    np.maximum.at(arrivals, per_case, values)
    return arrivals


def label_arrivals(
    datasets: Sequence[xr.Dataset], by: Any, order: Hashable | None, *, case: Hashable
) -> dict[Any, float]:
    """When each cluster was complete across several Datasets (the two sides of a paired
    comparison): the largest ``order`` among its cells in any of them, by cluster label;
    without ``order``, the position of its last case in the first Dataset."""
    latest: dict[Any, float] = {}
    if order is None:
        first = datasets[0]
        labels = _cluster_labels(first, case, by, _case_index(first, case))
        for position, label in enumerate(labels):
            latest[label] = float(position)
        return latest
    for data in datasets:
        values = _case_arrivals(data, order, case)
        labels = _cluster_labels(data, case, by, _case_index(data, case))
        for label, value in zip(labels, values, strict=True):
            latest[label] = max(latest.get(label, -np.inf), float(value))
    return latest


def _case_arrivals(data: xr.Dataset, order: Hashable, case: Hashable) -> np.ndarray:
    """When each case arrived: the largest ``order`` among its cells (``order`` a variable
    along the case dim, or along the outcome's dims, such as a time per run)."""
    if order not in data.variables:
        raise ColumnNotFoundError(order, list(data.coords) + list(data.data_vars))
    variable = data[order]
    if case not in variable.dims:
        raise DimensionError(
            f"order={order!r} must run along the case dim {case!r}; it has dims "
            f"{tuple(variable.dims)}"
        )
    others = [d for d in variable.dims if d != case]
    latest = variable.max(dim=others) if others else variable
    return arrival_values(np.asarray(latest.transpose(case).values), order)


def case_coordinates(
    data: xr.Dataset, names: Sequence[Hashable], *, case: Hashable
) -> pd.DataFrame:
    """The ``names`` coordinates (or variables) along the ``case`` dim, one column each, one
    row per case; a name that is not along ``case`` alone is an error naming it."""
    columns = {}
    for name in names:
        if name not in data.variables:
            raise ColumnNotFoundError(name, list(data.variables))
        if data[name].dims != (case,):
            raise InvalidOptionError(
                f"over={name!r} must be a coordinate along {case!r} alone (a label per case); "
                f"its dims are {data[name].dims}"
            )
        columns[name] = np.asarray(data[name].values)
    return pd.DataFrame(columns)


def _case_index(data: xr.Dataset, case: Hashable) -> pd.Index:
    """The labels of the case dim (its positions when it has no coordinate)."""
    if case in data.coords:
        return pd.Index(np.asarray(data[case].values))
    return pd.RangeIndex(data.sizes[case])
