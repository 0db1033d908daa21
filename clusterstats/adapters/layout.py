"""Layouts: a long frame of runs (one row per run) laid out as a (case, rerun) Dataset.

:func:`from_frame` is what :func:`clusterstats.to_case_rerun` does, and what the rerun
statistics do first with a long frame: a cell with no run holds NaN, the case and rerun
labels become the Dataset's coordinates, and a coordinate that varies within a case (a
cluster column) is an error naming it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import xarray as xr

from clusterstats import _display as fmt
from clusterstats.adapters.frame import outcome_values
from clusterstats.adapters.labels import check_label, is_hashable, require_columns
from clusterstats.errors import (
    AlignmentError,
    EmptyDataError,
    InvalidDataError,
    InvalidInputError,
    InvalidOptionError,
)

__all__ = ["RAN_ATTRIBUTE", "from_frame"]

# A Dataset bigger than this many times the rows of the frame is almost surely a rerun column
# whose labels are not shared across cases (e.g. timestamps).
_MAX_FILL_RATIO = 4
#: The attribute of an outcome naming the boolean variable that says which runs happened.
RAN_ATTRIBUTE = "ran"


def from_frame(
    data: pd.DataFrame,
    *,
    case: Hashable,
    rerun: Hashable | None,
    outcome: Hashable | Sequence[Hashable],
    dims: Sequence[Hashable] | Hashable | None = (),
    coords: Any = "auto",
) -> xr.Dataset:
    """Long results (one row per run) as a Dataset with dims ``(*dims, case, rerun)``; see
    :func:`clusterstats.to_case_rerun`.

    The outcome variables and the coordinates keep their column labels as names (so a
    statistic named by the same label finds them); the dims are ``*dims`` (as strings),
    ``case`` and ``rerun``.
    """
    if not isinstance(data, pd.DataFrame):
        raise InvalidInputError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    outcomes = _frame_labels(outcome, "outcome")
    (case,) = _frame_labels(case, "case", many=False)
    if rerun is not None:
        (rerun,) = _frame_labels(rerun, "rerun", many=False)
    dim_columns = (
        []
        if dims is None
        else _frame_labels(list(dims) if _is_sequence(dims) else dims, "dims", allow_empty=True)
    )
    _check_frame_roles(case, rerun, outcomes, dim_columns)
    require_columns(data, [case, *outcomes, *dim_columns] + ([] if rerun is None else [rerun]))
    if len(data) == 0:
        raise EmptyDataError("the frame has no rows")
    keys = [*dim_columns, case]
    id_roles = [*(("dims", d) for d in dim_columns), ("case", case)]
    if rerun is not None:
        id_roles.append(("rerun", rerun))
    for role, label in id_roles:
        _check_ids(data[label], label, role)
    if rerun is None:
        run_ids = data.groupby(keys, sort=False).cumcount().to_numpy()
    else:
        run_ids = data[rerun].to_numpy()
    index = pd.MultiIndex.from_arrays(
        [*(data[k].to_numpy() for k in keys), run_ids],
        names=[*map(str, dim_columns), "case", "rerun"],
    )
    if index.has_duplicates:
        repeated = index[index.duplicated()].unique()
        columns = ", ".join(map(repr, [*dim_columns, case, rerun]))
        raise AlignmentError(
            f"{len(repeated)} ({', '.join(index.names)}) combinations have more than one row "
            f"(e.g. {list(repeated[:3])}, in columns {columns}); each run of a case needs its "
            "own rerun id"
        )
    size = int(np.prod([len(level) for level in index.levels], dtype=float))
    if size > _MAX_FILL_RATIO * len(data) + 1024:
        culprit = (
            f"the rerun labels of {rerun!r} are not shared across cases; pass rerun=None to "
            "number the runs of each case 0, 1, ... instead"
            if rerun is not None
            else f"the cases are not shared across the labels of {dim_columns!r}"
        )
        raise AlignmentError(
            f"the ({', '.join(index.names)}) grid would hold {size:,} cells for "
            f"{len(data):,} rows: {culprit}"
        )
    columns = {o: _numeric_column(data[o], o) for o in outcomes}
    missing_outcome = any(
        bool(np.isnan(np.asarray(v, dtype=float)).any()) for v in columns.values()
    )
    ran_name = None
    if missing_outcome:
        taken = {str(c) for c in data.columns}
        ran_name = next(
            name for name in ("ran", *(f"ran_{i}" for i in range(1, 100))) if name not in taken
        )
        columns[ran_name] = np.ones(len(data), dtype=bool)
    frame = pd.DataFrame(columns, index=index)
    dataset = xr.Dataset.from_dataframe(frame)
    if ran_name is not None:
        dataset[ran_name] = dataset[ran_name].fillna(False).astype(bool)
        for name in outcomes:
            dataset[name].attrs[RAN_ATTRIBUTE] = ran_name
    dataset["case"].attrs["column"] = str(case)
    dataset["rerun"].attrs["column"] = "row order" if rerun is None else str(rerun)
    return _attach_case_coords(data, dataset, case, rerun, outcomes, dim_columns, ran_name, coords)


def _frame_labels(
    value: Any, role: str, *, many: bool = True, allow_empty: bool = False
) -> list[Hashable]:
    """Column labels given to ``from_frame`` as a list: one label, or (with ``many``) a list
    or tuple of them; a Series or an array where a label is expected is refused by role."""
    if many and isinstance(value, (list, tuple)):
        labels = list(value)
        if not labels and not allow_empty:
            raise InvalidOptionError(f"{role}= needs at least one column label, got {value!r}")
    else:
        labels = [value]
    for label in labels:
        check_label(label, role, arrays_hint=False)
    seen: list[Hashable] = []
    for label in labels:
        if label in seen and role == "dims":
            raise InvalidOptionError(f"dims= names column {label!r} twice")
        seen.append(label)
    return labels


def _check_frame_roles(
    case: Hashable, rerun: Hashable | None, outcomes: list[Hashable], dims: list[Hashable]
) -> None:
    """Each column plays one part: an id column (case, rerun, a dim) is not also the outcome
    or another id, and no name collides with the dims of the Dataset to build."""
    if rerun is not None and rerun == case:
        raise InvalidOptionError(
            f"case= and rerun= both name column {case!r}; rerun= names the column that numbers "
            "the runs within each case (or pass rerun=None to number them in row order)"
        )
    roles = [("case", case)] + ([] if rerun is None else [("rerun", rerun)])
    for label in dims:
        for role, other in roles:
            if label == other:
                raise InvalidOptionError(
                    f"column {label!r} is both a dim (dims= or over=) and {role}=; name "
                    "different columns"
                )
        if str(label) in ("case", "rerun"):
            raise InvalidOptionError(
                f"column {label!r} (dims= or over=) would become a dim named {str(label)!r}, "
                f"the name of the Dataset's {label!s} dim; rename the column first, e.g. "
                f"df.rename(columns={{{label!r}: 'model'}})"
            )
    for label in outcomes:
        for role, other in [*roles, *(("dims= (or over=)", d) for d in dims)]:
            if label == other:
                role = role if role.startswith("dims") else f"{role}="
                raise InvalidOptionError(
                    f"column {label!r} is both the outcome and {role}; name different columns"
                )
        if str(label) in ("case", "rerun", *map(str, dims)):
            raise InvalidOptionError(
                f"outcome column {label!r} has the name of a dim of the Dataset to build "
                f"({str(label)!r}); rename the column first, e.g. "
                f"df.rename(columns={{{label!r}: 'passed'}})"
            )


def _check_ids(series: pd.Series, label: Hashable, role: str) -> None:
    """An id column (case, rerun or a dim) has no missing and no unhashable values."""
    what = "a dims" if role == "dims" else f"the {role}"
    missing = series.isna()
    if missing.any():
        first = series.index[missing.to_numpy()][0]
        if isinstance(first, np.generic):  # numpy 2 would print np.int64(4)
            first = first.item()
        raise AlignmentError(
            f"{what} column {label!r} has {fmt.count(int(missing.sum()), 'missing id')} (e.g. "
            f"at index {first!r}); drop or fill those rows first"
        )
    if series.dtype == object:
        try:
            pd.factorize(series)
        except TypeError:
            kinds = sorted({type(v).__name__ for v in series if not is_hashable(v)})
            raise InvalidDataError(
                f"{what} column {label!r} holds values that cannot be labels ({', '.join(kinds)}); "
                "ids must be strings, numbers or other hashable values"
            ) from None


def _attach_case_coords(
    data: pd.DataFrame,
    dataset: xr.Dataset,
    case: Hashable,
    rerun: Hashable | None,
    outcomes: list[Hashable],
    dims: list[Hashable],
    ran_name: str | None,
    coords: Any,
) -> xr.Dataset:
    """The columns that become coordinates along ``case``: those listed in ``coords``
    (each must be constant within each case), or with ``"auto"`` every other column that is
    constant within each case and whose values are labels."""
    used = {case, *outcomes, *dims} | ({rerun} if rerun is not None else set())
    taken_names = {"case", "rerun", *map(str, dims), *map(str, outcomes)}
    if ran_name is not None:
        taken_names.add(ran_name)
    auto = isinstance(coords, str) and coords == "auto"
    if auto:  # a column whose name is taken cannot become a coordinate
        candidates = [c for c in data.columns if c not in used and str(c) not in taken_names]
    elif coords is None or isinstance(coords, (str, bytes)) or not _is_sequence(coords):
        if coords is None or not is_hashable(coords):
            raise InvalidOptionError(
                f"coords= takes 'auto' or a list of column labels, got {coords!r}"
            )
        candidates = [coords]
    else:
        candidates = _frame_labels(list(coords), "coords", allow_empty=True)
    if not auto:
        for label in candidates:
            if label in used or str(label) in taken_names:
                raise InvalidOptionError(
                    f"coordinate {label!r} (coords=) has the name of a dim or variable of the "
                    "Dataset to build; rename the column first"
                )
        require_columns(data, candidates)
    if not candidates:
        return dataset
    per_case = data.groupby(case, sort=False)
    try:
        counts = per_case[candidates].nunique(dropna=False).max()
        varying = {c: bool(counts[c] > 1) for c in candidates}
    except TypeError:  # a column of lists or dicts: only the label-valued ones can qualify
        varying = {}
        for column in candidates:
            try:
                varying[column] = bool(per_case[column].nunique(dropna=False).max() > 1)
            except TypeError:
                if not auto:
                    raise InvalidDataError(
                        f"coordinate column {column!r} (coords=) holds values that cannot be "
                        "labels (e.g. lists); a coordinate needs hashable values"
                    ) from None
                varying[column] = True
    if not auto and any(varying.values()):
        bad = [c for c in candidates if varying[c]]
        raise AlignmentError(
            f"coordinates must be constant within each case; {bad} vary within some "
            f"{str(case)!r} (drop them from coords=, or use a column with one value per case)"
        )
    constant = [c for c in candidates if not varying[c]]
    if constant:
        firsts = per_case[constant].first().reindex(dataset["case"].values)
        for column in constant:
            dataset = dataset.assign_coords({column: ("case", firsts[column].to_numpy())})
    return dataset


def _is_sequence(value: Any) -> bool:
    return isinstance(value, (list, tuple, pd.Index, np.ndarray))


def _numeric_column(series: pd.Series, name: Hashable) -> np.ndarray:
    """A variable's values: booleans as 0.0/1.0 (a cell with no run must be able to hold
    NaN), other numbers as they are; text, dates and infinities are refused by name."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return series.to_numpy(dtype=np.float64, na_value=np.nan)
    if isinstance(dtype, np.dtype) and dtype.kind in "iu":
        return series.to_numpy()
    return outcome_values(series, name)
