"""The pandas adapter: a DataFrame (or plain arrays) validated and reduced to a design.

This is the only place that knows about pandas dtypes: nullable (``pd.NA``) and Arrow-backed
columns, categoricals and strings as cluster ids. It never modifies the caller's frame. The
pairing of two sets of rows lives in :mod:`clusterstats.adapters.pairing`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from clusterstats._design import Groupings, MeanDesign, MeanGroup, ResponseRows, RowsDesign
from clusterstats.adapters.labels import (
    Columns,
    as_labels,
    check_label,
    is_hashable,
    require_columns,
)
from clusterstats.core.grouping import (
    ClusterTable,
    cluster_table_and_ids,
    dense_codes,
    grouped_cluster_tables,
)
from clusterstats.core.weighted import scale_free, weighted_sums
from clusterstats.errors import (
    EmptyDataError,
    InvalidClusterError,
    InvalidDataError,
    InvalidInputError,
    InvalidOptionError,
    InvalidOutcomeError,
    MissingOutcomeError,
    RepeatedItemsWarning,
    warn,
)

_NUMERIC_OBJECT_KINDS = {"integer", "floating", "mixed-integer-float", "boolean", "empty"}
# Above this many (group x cluster) cells, ``over=`` groups are reduced one at a time rather
# than with a single combined bincount, to bound memory.
_MAX_COMBINED_CELLS = 10_000_000
# Rows probed for long runs of equal labels before a whole column is run-length encoded.
_RUN_PROBE_ROWS = 1 << 16
# From this many rows, an Arrow-backed label column is hashed on several threads.
_THREADED_ROWS = 1 << 20


def _one_value_per_row(values: Any, role: str) -> pd.Series:
    """Array-like values as a Series numbered by position: arrays are paired by position, so
    a Series' own index (e.g. a shuffled frame's) must not decide which values meet."""
    if isinstance(values, pd.DataFrame):
        raise InvalidDataError(
            f"{role} must be one-dimensional (one value per row), got a DataFrame with "
            f"{values.shape[1]} columns; pass one column"
        )
    if isinstance(values, (pd.Series, pd.Index)):
        return pd.Series(values.array, copy=False)
    if values is None or isinstance(values, (str, bytes, int, float, bool, np.generic)):
        raise InvalidDataError(
            f"{role} must be an array of one value per row (data=None), got {values!r}"
        )
    if not isinstance(values, np.ndarray):
        try:
            values = np.asarray(values)
        except ValueError:  # ragged nested lists
            raise InvalidDataError(
                f"{role} must be one-dimensional (one value per row); got a ragged sequence"
            ) from None
    if values.ndim != 1:
        raise InvalidDataError(
            f"{role} must be one-dimensional (one value per row), got an array of shape "
            f"{values.shape}"
        )
    return pd.Series(values, copy=False)


def as_frame(data: Any, outcome: Any, by: Any) -> tuple[pd.DataFrame, Hashable, list[Hashable]]:
    """Accept a DataFrame with column labels, or ``data=None`` with array-like outcome/by
    (paired by position; they must have the same length)."""
    if data is None:
        values = _one_value_per_row(outcome, "outcome")
        clusters = _one_value_per_row(by, "by")
        if len(values) != len(clusters):
            raise InvalidDataError(
                f"outcome has {len(values)} values but by has {len(clusters)}: with data=None "
                "the arrays are paired by position and must have the same length"
            )
        frame = pd.DataFrame({"outcome": values, "cluster": clusters}, copy=False)
        return frame, "outcome", ["cluster"]
    if not isinstance(data, pd.DataFrame):
        raise InvalidInputError(
            f"data must be a pandas DataFrame (or None with array-like outcome and by), "
            f"got {type(data).__name__}"
        )
    check_label(outcome, "outcome")
    return data, outcome, as_labels(by)


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


def outcome_and_binary(series: pd.Series, name: Hashable) -> tuple[np.ndarray, bool]:
    """The outcome as :func:`outcome_values` gives it, except that a plain numpy integer or
    bool column comes back in its own dtype (it has no missing values, and converting a long
    column costs more than the pass that uses it); and whether every value is 0 or 1."""
    dtype = series.dtype
    if isinstance(dtype, np.dtype) and dtype.kind in "iub":
        values = series.to_numpy()
        binary = dtype.kind == "b" or values.size == 0 or (values.min() >= 0 and values.max() <= 1)
        return values, bool(binary)
    values = outcome_values(series, name)
    return values, check_binary(values)


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


_pool: ThreadPoolExecutor | None = None


def _forget_pool() -> None:
    global _pool
    _pool = None  # a forked child has the pool object but none of its threads


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def in_row_slices(n_rows: int, work: Callable[[int, int], Any]) -> list[Any]:
    """``work(start, stop)`` on consecutive slices of ``n_rows`` rows, one slice per core on a
    shared pool of threads when the rows are many, else one call in this thread.

    Meant for passes whose work releases the GIL (numpy's indexing, comparisons and
    ``bincount``; pyarrow's kernels): a long frame's per-row passes then use every core.
    The results are returned in slice order."""
    global _pool
    workers = min(4, os.cpu_count() or 1)
    if n_rows < _THREADED_ROWS or workers < 2:
        return [work(0, n_rows)]
    if _pool is None:
        _pool = ThreadPoolExecutor(workers, thread_name_prefix="clusterstats")
    step = -(-n_rows // workers)
    return list(
        _pool.map(lambda start: work(start, min(start + step, n_rows)), range(0, n_rows, step))
    )


def _arrow_codes_in_threads(series: pd.Series) -> tuple[np.ndarray, Any] | None:
    """``pd.factorize(series)`` of a long Arrow-backed column, hashed in slices on several
    threads (pyarrow releases the GIL); None for any other column.

    Hashing every string is most of the cost of a shuffled label column. The slices'
    dictionaries are unified in order, so the codes keep first-appearance order."""
    dtype = series.dtype
    arrow_backed = isinstance(dtype, pd.ArrowDtype) or (
        isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow"
    )
    if not arrow_backed or len(series) < _THREADED_ROWS or (os.cpu_count() or 1) < 2:
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    arrow = series.array.__arrow_array__()
    if not (pa.types.is_string(arrow.type) or pa.types.is_large_string(arrow.type)):
        return None
    encoded = in_row_slices(
        len(arrow), lambda start, stop: pc.dictionary_encode(arrow.slice(start, stop - start))
    )
    chunks = [c for part in encoded for c in getattr(part, "chunks", [part])]
    unified = pa.chunked_array(chunks).unify_dictionaries()
    codes = np.concatenate(  # Arrow's int32 indices, kept narrow: half the memory traffic
        [
            (chunk.indices if chunk.null_count == 0 else pc.fill_null(chunk.indices, -1))
            .to_numpy(zero_copy_only=False)
            .astype(np.int32, copy=False)
            for chunk in unified.chunks
        ]
    )
    uniques = pd.Index(pd.array(unified.chunks[0].dictionary.to_pylist(), dtype=dtype))
    return codes, uniques


def factorize_labels(values: Any, *, sort: bool) -> tuple[np.ndarray, Any]:
    """``pd.factorize`` of a label column, in sorted label order when asked and possible
    (labels of mixed, unorderable types keep first-appearance order); a column of lists,
    dicts or arrays, which cannot be labels, is an :class:`InvalidClusterError` naming it."""
    try:
        return pd.factorize(values, sort=sort, use_na_sentinel=True)
    except TypeError:
        pass
    try:
        return pd.factorize(values, sort=False, use_na_sentinel=True)
    except TypeError:
        series = pd.Series(values, copy=False) if not isinstance(values, pd.Series) else values
        bad = next(v for v in series if not is_hashable(v))
        name = f"column {series.name!r}" if series.name is not None else "a label column"
        raise InvalidClusterError(
            f"{name} holds {type(bad).__name__} values (e.g. {bad!r}), which cannot be labels; "
            "ids of clusters, groups, items and models must be scalars such as strings or "
            "integers"
        ) from None


def label_codes(series: pd.Series) -> tuple[np.ndarray, Any]:
    """Integer codes of a label column in first-appearance order (-1 for missing), and the
    labels: what ``pd.factorize(series, sort=False)`` returns (the codes possibly as int32),
    computed on runs when the column is stored in long runs of equal labels."""
    runs = _runs(series)
    if runs is None:
        threaded = _arrow_codes_in_threads(series)
        if threaded is not None:
            return threaded
        codes, uniques = factorize_labels(series, sort=False)
        return codes.astype(np.intp, copy=False), uniques
    lengths, labels = runs
    run_codes, uniques = factorize_labels(labels, sort=False)
    return np.repeat(run_codes.astype(np.intp), lengths), uniques


def factorize_sorted(values: Any) -> tuple[np.ndarray, Any]:
    # Codes in sorted label order make bootstrap draws for a given seed independent of the
    # row order; labels of mixed, unorderable types fall back to first-appearance order.
    direct = small_int_codes(values)
    if direct is not None:  # already in label order
        return direct, None
    return factorize_labels(values, sort=True)


def over_groups(frame: pd.DataFrame, over: Any) -> tuple[np.ndarray, list[Any]]:
    """Codes and labels of the ``over=`` groups, in sorted label order (first-appearance
    order for labels of mixed, unorderable types), so results never depend on row order.

    ``over`` is one column or a list of columns; with several, a group is a combination that
    occurs, its label the tuple of the columns' labels, in the columns' sorted orders."""
    labels = as_labels(over, role="over") if isinstance(over, (list, tuple)) else [over]
    combined: np.ndarray | None = None
    per_column = []
    for label in labels:
        codes, uniques = factorize_labels(frame[label], sort=True)
        if (codes < 0).any():
            raise InvalidClusterError(
                f"column {label!r} (over=) has {int((codes < 0).sum())} missing labels"
            )
        per_column.append(list(uniques))
        codes = codes.astype(np.int64, copy=False)
        combined = codes if combined is None else combined * len(uniques) + codes
    if len(labels) == 1:
        return combined.astype(np.intp, copy=False), per_column[0]
    present, codes = np.unique(combined, return_inverse=True)
    names = []
    for value in present:
        parts = []
        for uniques in reversed(per_column):
            value, position = divmod(int(value), len(uniques))
            parts.append(uniques[position])
        names.append(tuple(reversed(parts)))
    return codes.astype(np.intp, copy=False), names


def over_name(over: Any) -> str | tuple[str, ...] | None:
    """``design.over``: the column's name, or a tuple of names for several columns."""
    if over is None:
        return None
    if isinstance(over, (list, tuple)):
        labels = as_labels(over, role="over")
        return tuple(str(label) for label in labels) if len(labels) > 1 else str(labels[0])
    return str(over)


def cluster_codes(
    frame: pd.DataFrame,
    by: Sequence[Hashable],
    *,
    with_names: bool = False,
    with_groupings: bool = False,
):
    """Integer codes of the cluster (the combination of the ``by`` columns), in label order;
    with ``with_names``, also a function from codes to cluster labels (for messages); with
    ``with_groupings`` (and names), also each cluster's code in every ``by`` column, or None
    for one column (what crossed clustering needs, without reading labels back)."""
    codes: np.ndarray | None = None
    uniques: Any = None
    # each cluster's code in every column so far (with_groupings), updated as columns join
    groupings: list[np.ndarray] = []
    for label in by:
        column_codes, uniques = factorize_sorted(frame[label])
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
            continue
        combined = codes * np.int64(n_labels) + column_codes
        if int(codes.max() + 1) * n_labels <= 2 * combined.size + 1024:
            # as factorize(sort=True), counted rather than hashed
            codes, keys = dense_codes(combined, with_values=True)
        else:
            codes, keys = pd.factorize(combined, sort=True)
        if with_groupings:  # a cluster's key is (its code before this column, this column's)
            before, this = np.divmod(np.asarray(keys, dtype=np.int64), np.int64(n_labels))
            before = before.astype(np.intp)
            groupings = [g[before] for g in groupings] if groupings else [before]
            groupings.append(this.astype(np.intp))
    assert codes is not None
    codes = codes.astype(np.intp, copy=False)
    if not with_names:
        return codes
    if len(by) == 1:
        labels = uniques
        names = (
            (lambda ids: np.asarray(ids).tolist())
            if labels is None
            else (lambda ids: [labels[i] for i in np.asarray(ids)])
        )
        return (codes, names, None) if with_groupings else (codes, names)
    names = first_row_names(frame, by, codes)
    return (codes, names, tuple(groupings)) if with_groupings else (codes, names)


def first_rows(codes: np.ndarray) -> np.ndarray:
    """The first row of each cluster code ``0 .. codes.max()``."""
    first = np.full(int(codes.max()) + 1, -1)
    first[codes[::-1]] = np.arange(codes.shape[0])[::-1]
    return first


def first_row_names(frame: pd.DataFrame, columns: Sequence[Hashable], codes: np.ndarray):
    """A function from cluster codes to labels: the ``columns`` at the cluster's first row (a
    tuple for several columns). The first rows are found only when a label is asked for."""

    def names(ids: Any) -> list[Any]:
        rows = first_rows(codes)[np.asarray(ids, dtype=np.intp)]
        picked = [frame[c].to_numpy()[rows].tolist() for c in columns]
        return picked[0] if len(columns) == 1 else list(zip(*picked, strict=True))

    return names


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
    require_columns(frame, [responded])
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


def arrays_mean_design(columns: Columns, **options: Any) -> MeanDesign:
    """:func:`mean_design` of ``data=None``: array-like outcome and cluster values, paired by
    position (the other roles would name columns, which arrays do not have)."""
    if columns.weights is not None:
        raise InvalidOptionError("weights= names a column: pass a DataFrame, not arrays")
    if columns.order is not None:
        raise InvalidInputError("order= names a column: give the rows as a DataFrame, not arrays")
    frame, outcome_label, by_labels = as_frame(None, columns.outcome, columns.given("by"))
    named = replace(columns, outcome=outcome_label, by=tuple(by_labels), arrays=False)
    return replace(mean_design(frame, named, **options), outcome=None, by=())


def mean_design(
    data: pd.DataFrame, columns: Columns, *, nest: bool = False, arrivals: bool = False
) -> MeanDesign:
    """Validate a DataFrame and reduce each ``over`` group to per-cluster statistics, before
    any missing-data policy (see :class:`~clusterstats._design.MeanDesign`); with
    ``arrivals``, when each group's clusters were complete, in the same pass."""
    over, strata = columns.given("over"), columns.strata
    responded, weights = columns.responded, columns.weights
    covariates = columns.covariates
    frame, outcome_label, by_labels = as_frame(data, columns.outcome, columns.given("by"))
    named = [outcome_label, *by_labels, *covariates]
    for extra in (strata, responded, weights):
        if extra is not None:
            named.append(extra)
    if over is not None:
        named.extend(over if isinstance(over, (list, tuple)) else [over])
    require_columns(frame, named)
    if len(frame) == 0:
        raise EmptyDataError("the frame has no rows")
    values = outcome_with_responses(frame, outcome_label, responded)
    codes, names, groupings = cluster_codes(frame, by_labels, with_names=True, with_groupings=True)
    stratum_of_cluster, stratum_labels = None, ()
    if strata is not None:
        codes, stratum_of_cluster, stratum_labels = stratify(frame, codes, strata, nest=nest)
        if nest:
            names, groupings = first_row_names(frame, by_labels, codes), None
    n_clusters = int(codes.max()) + 1
    if over is None:
        group_codes, group_labels = None, [None]
    else:
        group_codes, group_labels = over_groups(frame, over)
    tables = grouped_tables(
        values, codes, n_clusters, group_codes, len(group_labels), name=outcome_label
    )
    binary = _binary_by_group(values, group_codes, len(group_labels))
    row_weights = None if weights is None else weight_values(frame[weights], weights)
    arrived = None
    if arrivals:
        key = codes if group_codes is None else group_codes * n_clusters + codes
        arrived = latest(key, row_arrivals(frame, columns.order), n_clusters)
    groups = []
    for index, (label, (table, ids), is_binary) in enumerate(
        zip(group_labels, tables, binary, strict=True)
    ):
        if table.n_clusters == 0:
            where = "" if over is None else f" in group {label!r} of {over!r}"
            raise EmptyDataError(f"no rows{where}")
        weighted = weighted_ids = None
        if row_weights is not None:
            in_group = (
                np.ones(len(values), dtype=bool) if group_codes is None else (group_codes == index)
            )
            weighted, weighted_ids = group_weighted_sums(
                values, row_weights, codes, in_group, weights, label, over
            )
        groups.append(
            MeanGroup(
                label=label,
                table=table,
                cluster_ids=ids,
                is_binary=is_binary,
                strata=None if stratum_of_cluster is None else stratum_of_cluster[ids],
                weighted=weighted,
                weighted_ids=weighted_ids,
                arrivals=None if arrived is None else arrived[index * n_clusters + ids],
            )
        )
    responses = None
    if covariates:
        responses = _response_rows(frame, values, codes, covariates, group_codes, tables)
    return MeanDesign(
        outcome=str(outcome_label),
        by=tuple(str(b) for b in by_labels),
        over=over_name(over),
        groups=tuple(groups),
        strata_labels=tuple(stratum_labels),
        cluster_names=names,
        cluster_groupings=groupings,
        responses=responses,
        weights=None if weights is None else str(weights),
        order=columns.order if arrivals else None,
    )


#: Words of a column name that say it labels what produced the results (a model, a system,
#: a condition of an experiment): ``model``, ``model_name``, ``system_id``, ``run``...
PRODUCER_WORDS = frozenset(
    {"model", "models", "system", "systems", "condition", "conditions", "arm", "variant",
     "agent", "checkpoint", "config", "run", "method", "treatment", "policy", "solver"}
)  # fmt: skip


def looks_like_producer(column: Hashable) -> bool:
    """Whether a column's name has a word of :data:`PRODUCER_WORDS`."""
    return isinstance(column, str) and bool(
        PRODUCER_WORDS.intersection(re.split(r"[^a-z0-9]+", column.lower()))
    )


def repeated_label(
    data: pd.DataFrame, by: Sequence[Hashable], named: Sequence[Hashable]
) -> tuple[Hashable, list[Any]] | None:
    """A text column named like a model or condition label (:func:`looks_like_producer`),
    not named in the call, whose 2 to 50 values each hold the same number of rows in every
    cluster: the clusters' items repeated once per value, as in a frame of several models'
    results stacked (``(column, its values)``; None when there is none)."""
    if not by or len(data) < 4:
        return None
    codes = None
    for column in data.columns:
        if column in named or column in by or not looks_like_producer(column):
            continue
        values = data[column]
        if not (
            isinstance(values.dtype, pd.CategoricalDtype)
            or pd.api.types.is_object_dtype(values.dtype)
            or pd.api.types.is_string_dtype(values.dtype)
        ):
            continue
        try:
            # more than 50 values in the first rows: more than 50 in all (cheap for item ids)
            if values.iloc[:1000].nunique(dropna=False) > 50:
                continue
            value_codes, labels = pd.factorize(values)
        except TypeError:  # unhashable cells (lists, dicts): not a label
            continue
        if not 2 <= len(labels) <= 50 or (value_codes < 0).any():
            continue
        if codes is None:
            codes = cluster_codes(data, list(by))
            n_clusters = int(codes.max()) + 1
            if n_clusters < 2:
                return None
        k = len(labels)
        counts = np.bincount(codes * k + value_codes, minlength=n_clusters * k)
        counts = counts.reshape(n_clusters, k)
        if (counts[:, 0] > 0).all() and (counts == counts[:, :1]).all():
            return column, list(labels)
    return None


def weight_values(column: pd.Series, name: Hashable) -> np.ndarray:
    """A weight column as float64: numeric, finite, never negative or missing, divided by
    its largest value (weights are scale-free; see
    :func:`~clusterstats.core.weighted.scale_free`)."""
    if not pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
        raise InvalidOptionError(
            f"weights column {name!r} has dtype {column.dtype}, which is not numeric; weights "
            "are non-negative numbers (e.g. sampling weights, or weights_for_mix)"
        )
    values = column.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.isnan(values)
    if bad.any():
        raise InvalidOptionError(
            f"weights column {name!r} has {int(bad.sum())} missing values (rows "
            f"{column.index[np.flatnonzero(bad)[:3]].tolist()}); give every row a weight"
        )
    if not np.isfinite(values).all():
        raise InvalidOptionError(f"weights column {name!r} has infinite values")
    negative = values < 0
    if negative.any():
        raise InvalidOptionError(
            f"weights column {name!r} has {int(negative.sum())} negative values (e.g. "
            f"{values[negative][0]:g} in row {column.index[np.flatnonzero(negative)[0]]!r}); "
            "weights are non-negative"
        )
    return scale_free(values)


def group_weighted_sums(
    values: np.ndarray,
    weights: np.ndarray,
    codes: np.ndarray,
    in_group: np.ndarray,
    name: Hashable,
    label: Any,
    over: Any,
) -> tuple[Any, np.ndarray]:
    """The weighted sums of one group's rows with a usable outcome and a positive weight, by
    cluster, and the ids of those clusters (sorted): a row of weight zero is not in the
    weighted sample, and a cluster whose rows all weigh zero is not one of its clusters."""
    answered = in_group & ~np.isnan(values)
    usable = answered & (weights > 0)
    where = "" if over is None else f" in group {label!r} of {over!r}"
    if not usable.any():
        raise InvalidOptionError(
            f"weights column {name!r} is zero on every row with an outcome{where}: a weighted "
            "mean needs some positive weight"
        )
    ids, local = np.unique(codes[usable], return_inverse=True)
    return weighted_sums(values[usable], weights[usable], local.ravel()), ids.astype(np.intp)


def grouped_tables(
    values: np.ndarray,
    codes: np.ndarray,
    n_clusters: int,
    group_codes: np.ndarray | None,
    n_groups: int,
    *,
    name: Hashable | None = None,
) -> list[tuple[ClusterTable, np.ndarray]]:
    """Per group, the :class:`ClusterTable` of its clusters and their codes (``name`` is the
    outcome's, for messages).

    One pass over the rows for every group at once (a bincount over (group, cluster) cells)
    unless that table would be too large; then one group at a time.
    """
    if group_codes is None or n_groups == 1:
        return [_table_with_ids(values, codes, n_clusters, name)]
    if n_groups * n_clusters > _MAX_COMBINED_CELLS:
        out = []
        for index in range(n_groups):
            rows = group_codes == index
            out.append(_table_with_ids(values[rows], codes[rows], n_clusters, name))
        return out
    return grouped_cluster_tables(values, codes, n_clusters, group_codes, n_groups, name=name)


def _table_with_ids(
    values: np.ndarray, codes: np.ndarray, n_clusters: int, name: Hashable | None = None
) -> tuple[ClusterTable, np.ndarray]:
    """The table of the clusters that have rows, and those clusters' codes."""
    if values.size == 0:
        empty = np.zeros(0)
        return ClusterTable(empty, empty, empty, empty, 0.0), np.zeros(0, dtype=np.intp)
    return cluster_table_and_ids(values, codes, n_clusters, name=name)


def _binary_by_group(values: np.ndarray, group_codes: np.ndarray | None, n_groups: int) -> list:
    """Whether each group's usable outcomes are all 0 or 1."""
    if group_codes is None or n_groups == 1:
        return [check_binary(values)]
    other = ~((values == 0.0) | (values == 1.0) | np.isnan(values))
    counts = np.bincount(group_codes, weights=other, minlength=n_groups)
    return [not c > 0 for c in counts]


def _response_rows(
    frame: pd.DataFrame,
    values: np.ndarray,
    codes: np.ndarray,
    covariates: Sequence[Hashable],
    group_codes: np.ndarray | None,
    tables: list[tuple[ClusterTable, np.ndarray]],
) -> tuple[ResponseRows, ...]:
    """Row-level inputs of a logistic response model, one per group."""
    columns = []
    for label in covariates:
        column = frame[label]
        if not (
            pd.api.types.is_numeric_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype)
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
    out = []
    for index, (_, ids) in enumerate(tables):
        rows = slice(None) if group_codes is None else group_codes == index
        local = np.searchsorted(ids, codes[rows]).astype(np.intp)
        out.append(ResponseRows(values=values[rows], codes=local, covariates=x[rows]))
    return tuple(out)


def rows_design(
    data: Any, columns: Columns, groupings: Groupings, *, missing: str, window: str | None = None
) -> RowsDesign:
    """The usable outcomes row by row (missing ones dropped, or counted as 0 or 1), with
    every candidate grouping's cluster codes, and last the windows of ``window`` of the
    timestamps in the ``time`` column, for ``check_clustering``."""
    outcome, time = columns.outcome, columns.time
    if not isinstance(data, pd.DataFrame):
        raise InvalidInputError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    named = [outcome, *(label for _, labels in groupings for label in labels)]
    require_columns(data, named + ([time] if time is not None else []))
    raw = outcome_values(data[outcome], outcome)
    is_missing = np.isnan(raw)
    if missing == "raise" and is_missing.any():
        raise MissingOutcomeError(f"outcome {outcome!r} has {int(is_missing.sum())} missing values")
    keep = ~is_missing if missing == "drop" else np.ones(raw.size, dtype=bool)
    values = raw[keep] if missing == "drop" else impute_missing(raw, missing, check_binary(raw))
    coded = []
    for name, labels in groupings:
        codes = cluster_codes(data, labels)[keep]
        coded.append((name, pd.factorize(codes, sort=True)[0].astype(np.intp)))
    if time is not None:
        bins = time_windows(data[time], window)
        coded.append((f"{time} per {window}", pd.factorize(bins[keep], sort=True)[0]))
    return RowsDesign(outcome=str(outcome), values=values, groupings=tuple(coded))


def time_windows(stamps: Any, window: str | None) -> np.ndarray:
    """The start of each timestamp's window of length ``window`` (a pandas frequency)."""
    times = pd.to_datetime(pd.Series(np.asarray(stamps)), errors="raise")
    try:
        return times.dt.floor(window).to_numpy()
    except (ValueError, TypeError) as error:
        raise InvalidOptionError(f"window={window!r} is not a pandas frequency: {error}") from None


def missing_reasons(data: pd.DataFrame, columns: Columns) -> tuple[tuple[Any, int, int], ...]:
    """The missing rows by the ``reason`` column: ``(reason, rows, clusters)``, most frequent
    first."""
    outcome, reason = columns.outcome, columns.reason
    require_columns(data, [outcome, reason, *columns.by])
    values = outcome_with_responses(data, outcome, columns.responded)
    codes = cluster_codes(data, list(columns.by))
    is_missing = np.isnan(values)
    labels = pd.Series(data[reason].to_numpy()[is_missing])
    return reason_counts(labels, codes[is_missing])


def reason_counts(labels: pd.Series, clusters: np.ndarray) -> tuple[tuple[Any, int, int], ...]:
    """``(reason, rows, clusters)`` per reason label of the missing rows."""
    out = []
    for label, rows in labels.value_counts(dropna=False).items():
        in_reason = labels.isna().to_numpy() if pd.isna(label) else labels.eq(label).to_numpy()
        out.append((label, int(rows), int(np.unique(clusters[in_reason]).size)))
    return tuple(out)


def stratify(
    frame: pd.DataFrame, codes: np.ndarray, strata: Hashable, *, nest: bool
) -> tuple[np.ndarray, np.ndarray, tuple[Any, ...]]:
    """Cluster codes (renumbered when ``nest``) and the stratum of each cluster.

    A cluster id found in two strata is an error unless ``nest=True``, which takes ids as
    local to their stratum (R survey's ``nest=TRUE``)."""
    require_columns(frame, [strata])
    stratum_codes, uniques = factorize_sorted(frame[strata])
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


def arrival_values(values: Any, order: Hashable) -> np.ndarray:
    """An order-of-arrival column as float64 (times as nanoseconds), every value present."""
    series = pd.Series(values)
    if pd.api.types.is_datetime64_any_dtype(series):
        present = series.notna().to_numpy()
        numbers = series.to_numpy(dtype="datetime64[ns]").astype(np.int64).astype(float)
        numbers[~present] = np.nan
    elif pd.api.types.is_bool_dtype(series) or not pd.api.types.is_numeric_dtype(series):
        raise InvalidOptionError(
            f"order={order!r} must hold numbers or times (when each row arrived, or a "
            f"completion index), not {series.dtype}"
        )
    else:
        numbers = series.to_numpy(dtype=float, na_value=np.nan)
    missing = np.isnan(numbers)
    if missing.any():
        raise InvalidDataError(
            f"order={order!r} has {int(missing.sum())} missing values: every row needs the "
            "time (or index) at which it arrived"
        )
    return numbers


def row_arrivals(data: pd.DataFrame, order: Hashable | None) -> np.ndarray:
    """When each row arrived: its ``order`` value, or without one its position (a file that
    grows by appending)."""
    if order is None:
        return np.arange(len(data), dtype=float)
    require_columns(data, [order])
    return arrival_values(data[order], order)


def with_arrivals(design: MeanDesign, rows: pd.DataFrame, columns: Columns) -> MeanDesign:
    """``design`` with each group's arrivals, from ``rows``: the cluster, ``over`` and
    ``order`` columns of the rows it was reduced from, in their order."""
    codes = cluster_codes(rows, list(columns.by))
    n_clusters = int(codes.max()) + 1
    key = codes
    if columns.over:
        key = over_groups(rows, columns.given("over"))[0] * n_clusters + codes
    arrived = latest(key, row_arrivals(rows, columns.order), n_clusters)
    groups = tuple(
        replace(group, arrivals=arrived[index * n_clusters + group.cluster_ids])
        for index, group in enumerate(design.groups)
    )
    return replace(design, groups=groups, order=columns.order)


def latest(codes: np.ndarray, arrived: np.ndarray, minlength: int = 0) -> np.ndarray:
    """The latest arrival of each code (-inf for a code without rows)."""
    arrivals = np.full(max(int(codes.max()) + 1 if codes.size else 0, minlength), -np.inf)
    np.maximum.at(arrivals, codes, arrived)
    return arrivals


def label_arrivals(
    frames: Sequence[pd.DataFrame], by: Sequence[Hashable], order: Hashable | None
) -> dict[Any, float]:
    """When each cluster was complete across several frames (the two sides of a paired
    comparison): the largest ``order`` among its rows in any of them, by cluster label (a
    tuple for several ``by`` columns). Without ``order``, the position of its last row in
    the first frame (the run that grows; the other is a finished baseline)."""
    parts = []
    for part in frames if order is not None else frames[:1]:
        require_columns(part, list(by))
        parts.append(part[list(by)].assign(_arrival=row_arrivals(part, order)))
    rows = pd.concat(parts, ignore_index=True)
    latest = rows.groupby(list(by), sort=False, dropna=False)["_arrival"].max()
    return dict(zip(latest.index.tolist(), latest.to_numpy(), strict=True))


def warn_repeated_items(data: pd.DataFrame, columns: Columns) -> None:
    """A ``RepeatedItemsWarning`` when the clusters' rows repeat once per value of a text
    column the call does not name (several models' results stacked in one frame): the
    statistic would pool them without a word."""
    found = repeated_label(data, list(columns.by), columns.names())
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
