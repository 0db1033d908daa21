"""Turn an xarray Dataset laid out as (case, rerun) into per-case moments and cluster sums.

This is the xarray counterpart of ``_frame``: the only place that knows about Datasets, dims,
coordinates and dask. The runs of each case are reduced chunk by chunk
(:func:`clusterstats.core.reruns.case_moments` through ``xarray.apply_ufunc``), so a dask-backed
Dataset is never loaded whole: what comes back is four numbers per case.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from clusterstats._frame import Prepared, _factorize_sorted
from clusterstats.core.reruns import MOMENTS, case_moments, case_sums
from clusterstats.errors import (
    ColumnNotFoundError,
    DimensionError,
    EmptyDataError,
    InvalidClusterError,
    InvalidOutcomeError,
)


@dataclass(frozen=True)
class CaseMoments:
    """Per-case moments of one outcome for every combination of the extra dims."""

    moments: np.ndarray  # (*extra, case, 4): runs, total, within_ss, non_binary
    extra_dims: tuple[str, ...]
    extra_labels: tuple[tuple[Any, ...], ...]  # the coordinate labels along each extra dim
    case_labels: np.ndarray
    codes: np.ndarray | None  # cluster of each case, in sorted label order (None: itself)
    outcome: str
    by: tuple[str, ...]

    def groups(self) -> Iterator[tuple[Any, np.ndarray]]:
        """``(group label, (case, 4) moments)`` for each combination of the extra dims."""
        if not self.extra_dims:
            yield None, self.moments
            return
        shape = self.moments.shape[: len(self.extra_dims)]
        for index in itertools.product(*(range(n) for n in shape)):
            labels = tuple(self.extra_labels[d][i] for d, i in enumerate(index))
            yield (labels if len(labels) > 1 else labels[0]), self.moments[index]

    @property
    def over(self) -> str | tuple[str, ...] | None:
        if not self.extra_dims:
            return None
        return self.extra_dims if len(self.extra_dims) > 1 else self.extra_dims[0]

    @property
    def is_binary(self) -> bool:
        return not bool(self.moments[..., 3].any())


def case_rerun_array(
    data: Any, outcome: Hashable, *, case: Hashable, rerun: Hashable
) -> xr.DataArray:
    """The outcome variable, validated and transposed to ``(*extra dims, case, rerun)``."""
    if not isinstance(data, xr.Dataset):
        raise TypeError(f"expected an xarray Dataset, got {type(data).__name__}")
    if outcome not in data.data_vars:
        raise ColumnNotFoundError(outcome, list(data.data_vars))
    array = data[outcome]
    for role, dim in (("case", case), ("rerun", rerun)):
        if dim not in array.dims:
            raise DimensionError(
                f"variable {outcome!r} has dims {tuple(array.dims)} but no {role} dim "
                f"{dim!r}; name it with {role}=..., or build the Dataset with "
                "clusterstats.to_case_rerun(df, case=..., rerun=..., outcome=...)"
            )
    dtype = array.dtype
    if dtype.kind not in "biuf":
        raise InvalidOutcomeError(
            f"outcome {outcome!r} has dtype {dtype}, which is not numeric; store 0/1 or a score"
        )
    extra = [d for d in array.dims if d not in (case, rerun)]
    return array.transpose(*extra, case, rerun)


def _moments_array(array: xr.DataArray, rerun: Hashable) -> np.ndarray:
    if array.chunks is not None:  # dask: every case's runs must sit in one chunk
        array = array.chunk({rerun: -1})
    moments = xr.apply_ufunc(
        case_moments,
        array,
        input_core_dims=[[rerun]],
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


def _case_codes(
    data: xr.Dataset, array: xr.DataArray, case: Hashable, by: Any
) -> np.ndarray | None:
    """Cluster code of each case, in sorted label order (as the pandas path numbers them);
    None when every case is its own cluster and the cases are already in label order."""
    if by is None:
        index = array.indexes.get(case)
        if index is None or (index.is_monotonic_increasing and index.is_unique):
            return None  # no factorizing ten million labels to learn they are 0, 1, 2, ...
        labels = pd.Series(np.asarray(array[case].values))
    else:
        if by not in data.variables:
            raise ColumnNotFoundError(by, list(data.coords) + list(data.data_vars))
        variable = data[by]
        if variable.dims != (case,):
            raise DimensionError(
                f"by={by!r} must be a coordinate along the case dim {case!r}; it has dims "
                f"{tuple(variable.dims)}"
            )
        labels = pd.Series(np.asarray(variable.values))
    codes, _ = _factorize_sorted(labels)
    if (codes < 0).any():
        raise InvalidClusterError(
            f"{by!r} has {int((codes < 0).sum())} missing cluster ids along {case!r}"
        )
    return np.asarray(codes, dtype=np.intp)


def reduce_cases(
    data: Any,
    outcome: Hashable,
    *,
    by: Hashable | None,
    case: Hashable,
    rerun: Hashable,
) -> CaseMoments:
    """Validate and reduce: one pass over the runs, four numbers per case."""
    array = case_rerun_array(data, outcome, case=case, rerun=rerun)
    codes = _case_codes(data, array, case, by)
    extra = tuple(str(d) for d in array.dims[:-2])
    labels = tuple(tuple(np.asarray(array[d].values).tolist()) for d in array.dims[:-2])
    return CaseMoments(
        moments=_moments_array(array, rerun),
        extra_dims=extra,
        extra_labels=labels,
        case_labels=np.asarray(array[case].values),
        codes=codes,
        outcome=str(outcome),
        by=(str(case),) if by is None else (str(by),),
    )


def prepared_groups(reduced: CaseMoments) -> list[Prepared]:
    """One ``Prepared`` (per-cluster sums of the runs) per combination of the extra dims."""
    prepared = []
    for label, moments in reduced.groups():
        sums = case_sums(moments[:, 0], moments[:, 1], moments[:, 2], codes=reduced.codes)
        if sums.n_clusters == 0:
            where = "" if label is None else f" for {label!r}"
            raise EmptyDataError(f"no case has a run{where}")
        prepared.append(
            Prepared(
                group=label,
                sums=sums,
                is_binary=reduced.is_binary,
                n_missing=0,
                n_missing_clusters=0,
                outcome=reduced.outcome,
                by=reduced.by,
            )
        )
    return prepared
