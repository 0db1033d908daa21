"""Turn a pandas DataFrame (or plain arrays) into per-cluster sums, validating everything.

This is the only place that knows about pandas dtypes: nullable (``pd.NA``) and Arrow-backed
columns, categoricals and strings as cluster ids. It never modifies the caller's frame.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from clusterstats.core.grouping import ClusterSums, cluster_sums
from clusterstats.errors import (
    ColumnNotFoundError,
    EmptyDataError,
    InvalidClusterError,
    InvalidOptionError,
    InvalidOutcomeError,
    MissingOutcomeError,
)

MISSING_POLICIES = ("drop", "fail", "pass", "raise")
_NUMERIC_OBJECT_KINDS = {"integer", "floating", "mixed-integer-float", "boolean", "empty"}
# Above this many (group x cluster) cells, ``over=`` groups are reduced one at a time rather
# than with a single combined bincount, to bound memory.
_MAX_COMBINED_CELLS = 10_000_000
# Rows probed for long runs of equal labels before a whole column is run-length encoded.
_RUN_PROBE_ROWS = 1 << 16


@dataclass(frozen=True)
class Prepared:
    """One group's data, reduced and described."""

    group: Any
    sums: ClusterSums
    is_binary: bool
    n_missing: int
    n_missing_clusters: int
    outcome: str | None
    by: tuple[str, ...]
    # Pearson chi-square p-value of "the missing rate is the same in every cluster" (NaN when
    # nothing is missing): a small value means complete-case estimates may be biased.
    missing_p_value: float = float("nan")
    # With strata: the stratum code (0..H-1, in label order) of each cluster of ``sums``.
    strata: np.ndarray | None = None
    strata_labels: tuple[Any, ...] = ()


def _as_labels(by: Hashable | Sequence[Hashable]) -> list[Hashable]:
    if isinstance(by, (list, tuple)):
        if not by:
            raise InvalidOptionError("`by` needs at least one column")
        return list(by)
    return [by]


def _require_columns(frame: pd.DataFrame, labels: Sequence[Hashable]) -> None:
    for label in labels:
        if label not in frame.columns:
            raise ColumnNotFoundError(label, list(frame.columns))


def as_frame(data: Any, outcome: Any, by: Any) -> tuple[pd.DataFrame, Hashable, list[Hashable]]:
    """Accept a DataFrame with column labels, or ``data=None`` with array-like outcome/by."""
    if data is None:
        frame = pd.DataFrame({"outcome": pd.Series(outcome), "cluster": pd.Series(by)})
        return frame, "outcome", ["cluster"]
    if not isinstance(data, pd.DataFrame):
        raise TypeError(
            f"data must be a pandas DataFrame (or None with array-like outcome and by), "
            f"got {type(data).__name__}"
        )
    return data, outcome, _as_labels(by)


def outcome_values(series: pd.Series, name: Hashable) -> np.ndarray:
    """The outcome as float64 with NaN for missing; rejects non-numeric columns."""
    dtype = series.dtype
    numeric = pd.api.types.is_bool_dtype(dtype) or (
        pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype)
    )
    if not numeric and pd.api.types.is_object_dtype(dtype):
        numeric = pd.api.types.infer_dtype(series, skipna=True) in _NUMERIC_OBJECT_KINDS
    if not numeric:
        raise InvalidOutcomeError(
            f"outcome column {name!r} has dtype {dtype}, which is not numeric; convert it to "
            "0/1 (e.g. df[col].eq('pass').astype(int)) or to a numeric score"
        )
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    if dtype.kind not in "iub" and np.isinf(values).any():  # integers cannot be infinite
        raise InvalidOutcomeError(f"outcome column {name!r} contains infinite values")
    return values


def small_int_codes(values: Any) -> np.ndarray | None:
    """The ids themselves as codes, when they are non-negative integers of a plain numpy
    dtype and no larger than about twice the number of rows; None otherwise.

    Such ids need no hashing: ``np.bincount`` takes them as they are, and empty codes (gaps)
    are dropped downstream. This is what keeps the reduction of large frames cheap.
    """
    dtype = getattr(values, "dtype", None)
    if not (isinstance(dtype, np.dtype) and dtype.kind in "iu"):
        return None
    array = np.asarray(values)
    if array.size == 0 or array.min() < 0 or array.max() > 2 * array.size + 1024:
        return None
    return array.astype(np.intp, copy=False)


def _runs(series: pd.Series) -> tuple[np.ndarray, Any] | None:
    """Run lengths and run labels of a column stored in long runs of equal labels, or None.

    Long results are usually concatenated per model (or per task), so a label column is a few
    long runs; finding the runs is several times cheaper than hashing every row. Only layouts
    where the check is cheap are tried (categoricals, numeric numpy columns, Arrow-backed
    strings), and a prefix is probed first so that a shuffled column costs almost nothing
    extra. Returns None when the column has more than one run per four rows.
    """
    n = len(series)
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype) or (
        isinstance(dtype, np.dtype) and dtype.kind in "iub"
    ):
        array = (
            series.cat.codes.to_numpy()
            if isinstance(dtype, pd.CategoricalDtype)
            else series.to_numpy()
        )
        for stop in (_RUN_PROBE_ROWS, n):  # the probe, then the whole column
            part = array[:stop]
            if 4 * (np.count_nonzero(part[1:] != part[:-1]) + 1) > part.size:
                return None
            if stop >= n:
                break
        starts = np.concatenate([[0], np.flatnonzero(array[1:] != array[:-1]) + 1])
        lengths = np.diff(np.append(starts, n))
        return lengths, series.iloc[starts]
    arrow_backed = isinstance(dtype, pd.ArrowDtype) or (
        isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"
    )
    if not arrow_backed:
        return None
    import pyarrow as pa  # present whenever a column is Arrow-backed
    import pyarrow.compute as pc

    arrow = series.array.__arrow_array__()
    if not isinstance(arrow, pa.ChunkedArray):
        arrow = pa.chunked_array([arrow])
    if n > _RUN_PROBE_ROWS:
        probe = pc.run_end_encode(arrow.slice(0, _RUN_PROBE_ROWS)).chunks
        if 4 * sum(len(chunk.values) for chunk in probe) > _RUN_PROBE_ROWS:
            return None
    chunks = pc.run_end_encode(arrow).chunks
    if 4 * sum(len(chunk.values) for chunk in chunks) > n:
        return None
    lengths = np.concatenate([np.diff(chunk.run_ends.to_numpy(), prepend=0) for chunk in chunks])
    labels = [value for chunk in chunks for value in chunk.values.to_pylist()]
    return lengths, pd.Series(labels, dtype=dtype)


def label_codes(series: pd.Series) -> tuple[np.ndarray, Any]:
    """Integer codes of a label column in first-appearance order (-1 for missing), and the
    labels: what ``pd.factorize(series, sort=False)`` returns, computed on runs when the
    column is stored in long runs of equal labels."""
    runs = _runs(series)
    if runs is None:
        codes, uniques = pd.factorize(series, sort=False, use_na_sentinel=True)
        return codes.astype(np.intp, copy=False), uniques
    lengths, labels = runs
    run_codes, uniques = pd.factorize(labels, sort=False, use_na_sentinel=True)
    return np.repeat(run_codes.astype(np.intp), lengths), uniques


def _factorize_sorted(values: Any) -> tuple[np.ndarray, Any]:
    # Codes in sorted label order make bootstrap draws for a given seed independent of the
    # row order; labels of mixed, unorderable types fall back to first-appearance order.
    direct = small_int_codes(values)
    if direct is not None:  # already in label order
        return direct, None
    try:
        return pd.factorize(values, sort=True, use_na_sentinel=True)
    except TypeError:
        return pd.factorize(values, sort=False, use_na_sentinel=True)


def over_groups(series: pd.Series, over: Hashable) -> tuple[np.ndarray, list[Any]]:
    """Codes and labels of the ``over=`` groups, in sorted label order (first-appearance
    order for labels of mixed, unorderable types), so results never depend on row order."""
    try:
        codes, uniques = pd.factorize(series, sort=True, use_na_sentinel=True)
    except TypeError:
        codes, uniques = pd.factorize(series, sort=False, use_na_sentinel=True)
    if (codes < 0).any():
        raise InvalidClusterError(
            f"column {over!r} (over=) has {int((codes < 0).sum())} missing labels"
        )
    return codes.astype(np.intp, copy=False), list(uniques)


def cluster_codes(frame: pd.DataFrame, by: Sequence[Hashable]) -> np.ndarray:
    """Integer codes of the cluster (the combination of the ``by`` columns), in label order."""
    codes: np.ndarray | None = None
    for label in by:
        column_codes, uniques = _factorize_sorted(frame[label])
        n_labels = int(column_codes.max()) + 1 if uniques is None else len(uniques)
        bad = column_codes < 0
        if bad.any():
            where = frame.index[np.flatnonzero(bad)[:3]].tolist()
            raise InvalidClusterError(
                f"cluster column {label!r} has {int(bad.sum())} missing ids (rows {where}...); "
                "give those rows a cluster id or drop them"
            )
        if codes is None:
            codes = column_codes
        else:
            codes, _ = pd.factorize(codes * np.int64(n_labels) + column_codes, sort=True)
    assert codes is not None
    return codes.astype(np.intp, copy=False)


def check_binary(values: np.ndarray) -> bool:
    """Whether every non-missing value is 0 or 1 (checked in cache-sized chunks, no copy)."""
    step = 1 << 16
    for start in range(0, values.shape[0], step):
        chunk = values[start : start + step]
        if not np.all((chunk == 0.0) | (chunk == 1.0) | np.isnan(chunk)):
            return False
    return True


def response_mask(frame: pd.DataFrame, responded: Hashable) -> np.ndarray:
    """The explicit response indicator as a bool array (True = a usable response)."""
    _require_columns(frame, [responded])
    column = frame[responded]
    dtype = column.dtype
    if pd.api.types.is_bool_dtype(dtype):
        if column.isna().any():
            raise InvalidOptionError(
                f"response indicator {responded!r} has {int(column.isna().sum())} missing values"
            )
        return column.to_numpy(dtype=bool)
    if pd.api.types.is_integer_dtype(dtype) and not column.isna().any():
        values = column.to_numpy()
        if np.isin(values, (0, 1)).all():
            return values.astype(bool)
    raise InvalidOptionError(
        f"response indicator {responded!r} must be boolean (True = a usable response; 0/1 "
        f"integers are accepted too); it has dtype {dtype}"
    )


def outcome_with_responses(
    frame: pd.DataFrame, outcome: Hashable, responded: Hashable | None
) -> np.ndarray:
    """The outcome as float64 with NaN for "no usable response": a missing value, or a row
    whose ``responded`` indicator is False (its outcome is then a placeholder, ignored)."""
    values = outcome_values(frame[outcome], outcome)
    if responded is None:
        return values
    answered = response_mask(frame, responded)
    contradicting = answered & np.isnan(values)
    if contradicting.any():
        raise InvalidOutcomeError(
            f"{int(contradicting.sum())} rows have {responded!r} True but no {outcome!r} value"
        )
    return np.where(answered, values, np.nan)


def impute_missing(values: np.ndarray, missing: str, is_binary: bool) -> np.ndarray:
    """Apply ``missing="fail"`` (0) or ``"pass"`` (1) to a binary outcome; else unchanged."""
    if missing not in ("fail", "pass"):
        return values
    is_missing = np.isnan(values)
    if not is_missing.any():
        return values
    if not is_binary:
        fill = "0" if missing == "fail" else "1"
        raise InvalidOutcomeError(
            f"missing={missing!r} counts a missing outcome as {fill}, which needs a binary (0/1) "
            "outcome"
        )
    return np.where(is_missing, 0.0 if missing == "fail" else 1.0, values)


def prepare(
    data: Any,
    outcome: Any,
    by: Any,
    *,
    over: Hashable | None = None,
    missing: str = "drop",
    responded: Hashable | None = None,
    strata: Hashable | None = None,
    nest: bool = False,
) -> list[Prepared]:
    """Validate the input and reduce each ``over`` group to per-cluster sums (with each
    cluster's stratum when ``strata`` names the stratum column)."""
    from clusterstats.core.missing import missingness_chi_square

    if missing not in MISSING_POLICIES:
        raise InvalidOptionError(f"missing must be one of {MISSING_POLICIES}, got {missing!r}")
    frame, outcome_label, by_labels = as_frame(data, outcome, by)
    _require_columns(frame, [outcome_label, *by_labels] + ([over] if over is not None else []))
    if len(frame) == 0:
        raise EmptyDataError("the frame has no rows")

    values = outcome_with_responses(frame, outcome_label, responded)
    codes = cluster_codes(frame, by_labels)
    stratum_of_cluster, stratum_labels = None, ()
    if strata is not None:
        codes, stratum_of_cluster, stratum_labels = stratify(frame, codes, strata, nest=nest)
    is_missing = np.isnan(values)
    n_missing_total = int(is_missing.sum())
    is_binary = check_binary(values)
    if n_missing_total and missing == "raise":
        raise MissingOutcomeError(
            f"outcome column {outcome_label!r} has {n_missing_total} missing values; "
            "use missing='drop' or missing='fail' to handle them"
        )
    values = impute_missing(values, missing, is_binary)

    if over is None:
        group_codes, group_labels = np.zeros(len(frame), dtype=np.intp), [None]
    else:
        group_codes, group_labels = over_groups(frame[over], over)

    keep = ~is_missing if missing == "drop" else np.ones(len(values), dtype=bool)
    n_groups = len(group_labels)
    n_clusters = int(codes.max()) + 1
    outcome_name = None if data is None else str(outcome_label)
    by_names = tuple(str(b) for b in by_labels) if data is not None else ()

    def missing_counts(mask: np.ndarray) -> tuple[int, int, float]:
        hit = mask & is_missing
        if not hit.any():
            return 0, 0, float("nan")
        per_cluster = np.bincount(codes[hit], minlength=n_clusters)
        rows = np.bincount(codes[mask], minlength=n_clusters)
        present = rows > 0
        p_value = missingness_chi_square(rows[present], per_cluster[present])[2]
        return int(hit.sum()), int((per_cluster > 0).sum()), p_value

    prepared = []
    group_strata: dict[Any, np.ndarray] = {}
    if n_groups == 1 or n_groups * n_clusters > _MAX_COMBINED_CELLS or strata is not None:
        for index, label in enumerate(group_labels):
            if n_groups == 1:
                in_group = np.ones(len(values), dtype=bool)
                rows = keep
            else:
                in_group = group_codes == index
                rows = in_group & keep
            if rows.all():  # the common case: no copy of the rows
                sums = cluster_sums(values, codes, n_clusters)
            else:
                sums = cluster_sums(values[rows], codes[rows], n_clusters)
            if stratum_of_cluster is not None:
                occupied = np.bincount(codes[rows], minlength=n_clusters) > 0
                group_strata[index] = pd.factorize(stratum_of_cluster[occupied], sort=True)[0]
            prepared.append((label, sums, *missing_counts(in_group)))
    else:
        # One pass over the rows for every group at once: bincount on (group, cluster) cells.
        cell = group_codes[keep] * n_clusters + codes[keep]
        all_sums = cluster_sums(values[keep], cell, n_groups * n_clusters)
        occupied = np.bincount(cell, minlength=n_groups * n_clusters) > 0
        group_of_cell = np.flatnonzero(occupied) // n_clusters
        for index, label in enumerate(group_labels):
            sel = group_of_cell == index
            sums = all_sums.subset(sel)
            prepared.append((label, sums, *missing_counts(group_codes == index)))

    result = []
    for index, (label, sums, n_miss, n_miss_clusters, p_value) in enumerate(prepared):
        if sums.n_clusters == 0:
            where = "" if over is None else f" in group {label!r} of {over!r}"
            raise EmptyDataError(f"no non-missing outcomes{where}")
        group_stratum = group_strata.get(index)
        labels_here: tuple[Any, ...] = ()
        if group_stratum is not None:
            n_clusters_all = int(codes.max()) + 1
            rows = keep if n_groups == 1 else (group_codes == index) & keep
            occupied = np.bincount(codes[rows], minlength=n_clusters_all) > 0
            used = np.unique(stratum_of_cluster[occupied])
            labels_here = tuple(stratum_labels[i] for i in used)
        result.append(
            Prepared(
                label,
                sums,
                is_binary,
                n_miss,
                n_miss_clusters,
                outcome_name,
                by_names,
                p_value,
                group_stratum,
                labels_here,
            )
        )
    return result


def stratify(
    frame: pd.DataFrame, codes: np.ndarray, strata: Hashable, *, nest: bool
) -> tuple[np.ndarray, np.ndarray, tuple[Any, ...]]:
    """Cluster codes (renumbered when ``nest``) and the stratum of each cluster.

    A cluster id found in two strata is an error unless ``nest=True``, which takes ids as
    local to their stratum (R survey's ``nest=TRUE``)."""
    _require_columns(frame, [strata])
    stratum_codes, uniques = _factorize_sorted(frame[strata])
    if (stratum_codes < 0).any():
        raise InvalidClusterError(
            f"strata column {strata!r} has {int((stratum_codes < 0).sum())} missing labels"
        )
    labels = tuple(range(int(stratum_codes.max()) + 1)) if uniques is None else tuple(uniques)
    stratum_codes = np.asarray(stratum_codes, dtype=np.int64)
    if nest:
        codes = pd.factorize(stratum_codes * (int(codes.max()) + 1) + codes, sort=True)[0]
    n_clusters = int(codes.max()) + 1
    pairs = pd.DataFrame({"cluster": codes, "stratum": stratum_codes}).drop_duplicates()
    if not pairs["cluster"].is_unique:
        spread = pairs["cluster"][pairs["cluster"].duplicated()].unique()
        raise InvalidClusterError(
            f"{spread.size} cluster ids appear in more than one stratum of {strata!r}; give "
            "clusters ids unique across strata, or pass nest=True to treat ids as local to "
            "their stratum (as R survey's nest=TRUE)"
        )
    stratum_of_cluster = np.zeros(n_clusters, dtype=np.int64)
    stratum_of_cluster[pairs["cluster"].to_numpy()] = pairs["stratum"].to_numpy()
    return np.asarray(codes, dtype=np.intp), stratum_of_cluster, labels


@dataclass(frozen=True)
class ResponseRows:
    """One group's rows for a response model: outcome (NaN = no response), clusters in
    label order (0..G-1, every cluster with at least one row), and covariates."""

    group: Any
    values: np.ndarray
    codes: np.ndarray
    covariates: np.ndarray  # (rows, p), p may be 0
    is_binary: bool
    outcome: str
    by: tuple[str, ...]
    cluster_labels: tuple[Any, ...] = ()  # the label of each cluster code, for messages


def response_rows(
    data: Any,
    outcome: Hashable,
    by: Any,
    *,
    over: Hashable | None,
    responded: Hashable | None,
    covariates: Sequence[Hashable] = (),
) -> list[ResponseRows]:
    """Row-level inputs of inverse-probability weighting, one per ``over`` group."""
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    by_labels = _as_labels(by)
    covariate_labels = list(covariates)
    _require_columns(data, [outcome, *by_labels, *covariate_labels] + ([over] if over else []))
    if len(data) == 0:
        raise EmptyDataError("the frame has no rows")
    values = outcome_with_responses(data, outcome, responded)
    codes = cluster_codes(data, by_labels)
    x = np.zeros((len(data), 0))
    if covariate_labels:
        columns = []
        for label in covariate_labels:
            column = data[label]
            if not (
                pd.api.types.is_numeric_dtype(column.dtype)
                or pd.api.types.is_bool_dtype(column.dtype)
            ):
                raise InvalidOptionError(
                    f"covariate {label!r} has dtype {column.dtype}; use numeric columns (encode "
                    "categories as 0/1 columns)"
                )
            array = column.to_numpy(dtype=np.float64, na_value=np.nan)
            if np.isnan(array).any():
                raise InvalidOptionError(
                    f"covariate {label!r} has {int(np.isnan(array).sum())} missing values; the "
                    "response model needs every row's covariates (impute or drop those rows)"
                )
            columns.append(array)
        x = np.column_stack(columns)
    is_binary = check_binary(values)
    groups: list[tuple[Any, np.ndarray]]
    if over is None:
        groups = [(None, np.arange(len(data)))]
    else:
        group_codes, uniques = over_groups(data[over], over)
        groups = [(label, np.flatnonzero(group_codes == i)) for i, label in enumerate(uniques)]
    result = []
    key = (
        data[by_labels[0]]
        if len(by_labels) == 1
        else pd.Series(list(zip(*(data[b] for b in by_labels), strict=True)))
    )
    first_row_of_code = pd.Series(np.arange(len(data))).groupby(codes).first()
    label_of_code = pd.Series(
        key.to_numpy()[first_row_of_code.to_numpy()], index=first_row_of_code.index
    )
    for label, rows in groups:
        group_clusters, group_uniques = pd.factorize(codes[rows], sort=True)
        result.append(
            ResponseRows(
                group=label,
                values=values[rows],
                codes=group_clusters.astype(np.intp),
                covariates=x[rows],
                is_binary=is_binary,
                outcome=str(outcome),
                by=tuple(str(b) for b in by_labels),
                cluster_labels=tuple(label_of_code.loc[group_uniques].tolist()),
            )
        )
    return result
