"""The pandas adapter of paired comparisons: rows aligned on a shared item key.

Rows are reduced to one value per item (reruns averaged) on each side; items are matched on
the key; every item must sit in the same cluster on both sides. Strict by default: an item on
one side only, an item whose cluster differs between the sides, or an item spread over
several clusters is an error that gives counts and examples. Nothing here computes a
statistic: the numbers go to ``clusterstats.core.paired``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from clusterstats._design import ComparisonDesign, PairedDesign, PairedItems
from clusterstats.adapters.frame import (
    check_binary,
    cluster_codes,
    factorize_labels,
    impute_missing,
    in_row_slices,
    label_arrivals,
    label_codes,
    outcome_and_binary,
    outcome_values,
    outcome_with_responses,
    over_groups,
    over_name,
    small_int_codes,
    stratify,
    weight_values,
)
from clusterstats.adapters.labels import (
    Columns,
    as_labels,
    check_distinct_roles,
    require_columns,
)
from clusterstats.core.grouping import item_summaries
from clusterstats.core.weighted import weighted_matrix_sums
from clusterstats.errors import (
    AlignmentError,
    ColumnNotFoundError,
    EmptyDataError,
    InvalidClusterError,
    InvalidInputError,
    InvalidOptionError,
    MissingOutcomeError,
)

# Rows handled at a time by the per-row passes of ``model_matrix``: 0.5 MB per int64
# temporary, so that a block's temporaries stay in cache and are reused, not paged in.
_ROW_BLOCK = 1 << 16


def _item_counts(usable: np.ndarray, unusable: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Items per cluster (cluster ids of the usable and unusable items): for the clusters of
    the usable items, in sorted order, and for the clusters with no usable item."""
    clusters = np.unique(usable)
    total = np.bincount(np.searchsorted(clusters, usable), minlength=clusters.size)
    pos = np.minimum(np.searchsorted(clusters, unusable), clusters.size - 1)
    inside = clusters[pos] == unusable
    total = total + np.bincount(pos[inside], minlength=clusters.size)
    _, lost = np.unique(unusable[~inside], return_counts=True)
    return total.astype(np.float64), lost.astype(np.float64)


def _keys(frame: pd.DataFrame, on: Any) -> pd.DataFrame:
    if on is None:
        index = frame.index
        if isinstance(index, pd.MultiIndex):
            return index.to_frame(index=False)
        return pd.DataFrame({"__index__": index})
    labels = as_labels(on, "on")
    require_columns(frame, labels)
    return frame[labels].reset_index(drop=True)


def _positions(index: pd.Index) -> bool:
    """Whether ``index`` is the row numbers pandas gives a frame read or built without one:
    an unnamed RangeIndex from 0 in steps of 1."""
    return (
        isinstance(index, pd.RangeIndex)
        and index.name is None
        and index.start == 0
        and index.step == 1
    )


def _refuse_positions(a: pd.DataFrame, b: pd.DataFrame, on: Any) -> None:
    """Two frames are never matched on indexes that are both row positions."""
    if on is None and a is not b and _positions(a.index) and _positions(b.index):
        raise AlignmentError(
            "the two frames would be matched on their index, and both indexes are row "
            "positions (an unnamed 0, 1, 2, ... RangeIndex): reordered rows would pair "
            "different items without a word; pass on='<item id column>' (or a list of "
            "columns), or give both frames an index that names the items "
            "(df.set_index('question_id'))"
        )


def _refuse_unshared_index(
    data: pd.DataFrame,
    item_codes: np.ndarray,
    model_codes: np.ndarray,
    *,
    roles: Sequence[Hashable],
) -> None:
    """Without ``on=``, the models' rows are matched on the frame's index; when no index
    value is shared by two models (a frame read from a file has the row numbers) nothing
    can be paired, and the fix is to name the item key, not ``how="inner"``."""
    pairs = np.unique(np.column_stack([item_codes, model_codes]), axis=0)
    if np.bincount(pairs[:, 0]).max(initial=0) > 1:
        return
    index = "the row numbers" if _positions(data.index) else "its index"
    keys = _item_key_candidates(data, model_codes, roles)
    example = f", e.g. on={keys[0]!r}" if keys else ""
    found = f" (columns that name one row per model and item: {keys})" if keys else ""
    raise AlignmentError(
        f"no item is shared by two models: without on=, rows are matched on the frame's "
        f"index, which here is {index}; name the item key column with on={example}{found}"
    )


def _item_key_candidates(
    data: pd.DataFrame, model_codes: np.ndarray, roles: Sequence[Hashable]
) -> list[Hashable]:
    """Columns that could key the items: each value once per model, shared by models."""
    found: list[Hashable] = []
    for column in data.columns[:50]:
        if column in roles or data[column].dtype.kind == "f":
            continue
        codes, _ = pd.factorize(data[column])
        if (codes < 0).any():
            continue
        pairs = pd.Series(codes).groupby(model_codes).agg(["nunique", "size"])
        if (pairs["nunique"] == pairs["size"]).all() and codes.max() + 1 < len(codes):
            found.append(column)
    return found[:3]


def _first_rows(item_codes: np.ndarray, n_items: int) -> np.ndarray:
    """The position of each item's first row (for showing examples in error messages)."""
    first = np.full(n_items, -1)
    first[item_codes[::-1]] = np.arange(item_codes.shape[0])[::-1]
    return first


def _examples(keys: pd.DataFrame, positions: np.ndarray, k: int = 3) -> list[Any]:
    rows = keys.iloc[positions[:k]]
    if rows.shape[1] == 1:
        return rows.iloc[:, 0].tolist()
    return [tuple(r) for r in rows.itertuples(index=False)]


def _check_duplicates(
    frame: pd.DataFrame,
    keys: pd.DataFrame,
    item_codes: np.ndarray,
    n_items: int,
    rerun: Hashable | None,
    where: str,
    rows: np.ndarray | None = None,
) -> None:
    """Several rows per item are reruns only when ``rerun`` names them; otherwise an error.

    ``rows`` (rows per item) may be passed when the caller has already counted them.
    """
    if rows is None:
        rows = np.bincount(item_codes, minlength=n_items)
    if rerun is None:
        repeated = rows > 1
        if repeated.any():
            first = _first_rows(item_codes, n_items)
            raise AlignmentError(
                f"{int(repeated.sum())} items have more than one row {where} "
                f"(e.g. {_examples(keys, first[repeated])}); if they are reruns of the item, "
                "pass rerun='<column of the run id>' to average them"
            )
        return
    require_columns(frame, [rerun])
    run_codes, _ = factorize_labels(frame[rerun], sort=False)
    if (run_codes < 0).any():
        raise InvalidClusterError(f"rerun column {rerun!r} has missing values")
    pairs = item_codes.astype(np.int64) * (int(run_codes.max()) + 1) + run_codes
    if pd.Series(pairs).duplicated().any():
        raise AlignmentError(f"rows {where} share both the item key and the run id {rerun!r}")


def align(
    a: pd.DataFrame,
    b: pd.DataFrame,
    outcome_a: Hashable,
    outcome_b: Hashable,
    columns: Columns,
    *,
    how: str,
    missing: str,
    nest: bool = False,
) -> PairedItems:
    """Per-item values of ``a[outcome_a]`` and ``b[outcome_b]`` on the items both have,
    matched on the ``on`` columns (or the index) and clustered by the ``by`` columns of
    ``columns`` (and, with ``weights``, each item's weight, read from ``a``)."""
    by, on, rerun = columns.given("by"), columns.given("on"), columns.rerun
    strata, weights = columns.strata, columns.weights
    by_labels = as_labels(by)
    for side_outcome in (outcome_a, outcome_b):
        check_distinct_roles(side_outcome, by=by_labels, on=on, strata=strata)
    require_columns(a, [outcome_a, *by_labels, *([weights] if weights is not None else [])])
    require_columns(b, [outcome_b, *by_labels])
    if len(a) == 0 or len(b) == 0:
        raise EmptyDataError("one of the two frames has no rows")
    _refuse_positions(a, b, on)
    keys_a, keys_b = _keys(a, on), _keys(b, on)
    if list(keys_a.columns) != list(keys_b.columns):
        raise AlignmentError("the item keys of the two frames have different columns")
    n_a = len(a)
    both_keys = pd.concat([keys_a, keys_b], ignore_index=True)
    item_codes, n_items = _joint_codes(both_keys, "item key")
    # Clusters numbered in sorted label order, as cluster_ci numbers them: the bootstrap
    # draws for a seed then do not depend on the order of the rows.
    # (a stratum column that is also a cluster column is taken once)
    key_columns = list(dict.fromkeys(by_labels + ([strata] if strata is not None else [])))
    both_frames = pd.concat(
        [a[key_columns].reset_index(drop=True), b[key_columns].reset_index(drop=True)],
        ignore_index=True,
    )
    clusters, cluster_names = cluster_codes(both_frames, by_labels, with_names=True)
    stratum_of_cluster, stratum_labels = None, ()
    if strata is not None:
        clusters, stratum_of_cluster, stratum_labels = stratify(
            both_frames, clusters, strata, nest=nest
        )

    values = []
    for frame, label in ((a, outcome_a), (b, outcome_b)):
        v = outcome_values(frame[label], label)
        if missing == "raise" and np.isnan(v).any():
            raise MissingOutcomeError(
                f"outcome {label!r} has {int(np.isnan(v).sum())} missing values; use "
                "missing='drop' or missing='fail'"
            )
        values.append(impute_missing(v, missing, check_binary(v)))
    value_a, value_b = values
    codes_a, codes_b = item_codes[:n_a], item_codes[n_a:]
    _check_duplicates(a, keys_a, codes_a, n_items, rerun, "in the first frame")
    if a is not b:  # two columns of one frame share their rows
        _check_duplicates(b, keys_b, codes_b, n_items, rerun, "in the second frame")
    cl_a, cl_b = clusters[:n_a].astype(np.float64), clusters[n_a:].astype(np.float64)

    present_a = np.bincount(codes_a, minlength=n_items) > 0
    present_b = np.bincount(codes_b, minlength=n_items) > 0
    only_a, only_b = present_a & ~present_b, present_b & ~present_a
    if how == "strict" and (only_a.any() or only_b.any()):
        first_row = _first_rows(item_codes, n_items)
        hint = "pass how='inner' to compare the common items"
        if on is None and not (present_a & present_b).any():
            hint = (
                "the frames are matched on their index and share no index value: pass "
                "on='<item id column>'"
            )
        raise AlignmentError(
            f"{int(only_a.sum())} items are only in the first frame (e.g. "
            f"{_examples(both_keys, first_row[only_a])}) and {int(only_b.sum())} only in the "
            f"second (e.g. {_examples(both_keys, first_row[only_b])}); {hint}"
        )

    # The cluster of an item must be one value per side, and the same on both sides.
    cluster_mean = {}
    for side, codes, cl in (("first", codes_a, cl_a), ("second", codes_b, cl_b)):
        runs = np.bincount(codes, minlength=n_items)
        s1 = np.bincount(codes, weights=cl, minlength=n_items)
        s2 = np.bincount(codes, weights=cl * cl, minlength=n_items)
        spread = (s2 * runs != s1 * s1) & (runs > 0)
        if spread.any():
            raise AlignmentError(
                f"{int(spread.sum())} items have rows in several clusters in the {side} frame "
                "(an item must belong to one cluster)"
            )
        with np.errstate(invalid="ignore", divide="ignore"):
            cluster_mean[side] = s1 / runs
    common = present_a & present_b
    differs = common & (cluster_mean["first"] != cluster_mean["second"])
    if differs.any():
        first_row = _first_rows(item_codes, n_items)
        raise AlignmentError(
            f"{int(differs.sum())} items are in a different cluster in the two frames (e.g. "
            f"{_examples(both_keys, first_row[differs])})"
        )

    keep_a, keep_b = ~np.isnan(value_a), ~np.isnan(value_b)
    mean_a, runs_a, within_a = item_summaries(value_a[keep_a], codes_a[keep_a], n_items)
    mean_b, runs_b, within_b = item_summaries(value_b[keep_b], codes_b[keep_b], n_items)
    usable = common & (runs_a > 0) & (runs_b > 0)
    n_missing_items = int((common & ~usable).sum())
    if not usable.any():
        raise EmptyDataError("no item has a non-missing outcome on both sides")
    all_weights, n_zero_weight = None, 0
    if weights is not None:
        # an item of weight zero is not in the weighted sample (nor its cluster, if all its
        # items weigh zero): it is left out and counted, as the rows of a weighted mean are
        all_weights = _item_weights(a, weights, codes_a, n_items)
        weighed = usable & (all_weights > 0)
        if not weighed.any():
            raise InvalidOptionError(
                f"weights column {weights!r} is zero on every item with an outcome on both "
                "sides: a weighted difference needs some positive weight"
            )
        n_zero_weight, usable = int((usable & ~weighed).sum()), weighed
    item_cluster = cluster_mean["first"][usable].astype(np.int64)
    codes, used_clusters = pd.factorize(item_cluster, sort=True)
    cluster_items, lost_items = _item_counts(
        item_cluster, cluster_mean["first"][common & ~usable].astype(np.int64)
    )
    single = bool(
        np.all(runs_a[usable] == 1)
        and np.all(runs_b[usable] == 1)
        and check_binary(mean_a[usable])
        and check_binary(mean_b[usable])
    )
    item_weights = None if all_weights is None else all_weights[usable]
    return PairedItems(
        a=mean_a[usable],
        b=mean_b[usable],
        weights=item_weights,
        codes=codes.astype(np.intp),
        runs_a=runs_a[usable],
        runs_b=runs_b[usable],
        within_a=within_a[usable],
        within_b=within_b[usable],
        single_run_binary=single,
        n_dropped_a=int(only_a.sum()),
        n_dropped_b=int(only_b.sum()),
        n_missing_items=n_missing_items,
        n_zero_weight_items=n_zero_weight,
        cluster_labels=None if strata is not None else tuple(cluster_names(used_clusters)),
        max_runs=int(max(runs_a[usable].max(), runs_b[usable].max())),
        cluster_items=cluster_items,
        lost_cluster_items=lost_items,
        members=cluster_members(both_frames, by_labels, clusters, np.asarray(used_clusters))
        if len(by_labels) > 1 and strata is None
        else None,
        strata=None
        if stratum_of_cluster is None
        else pd.factorize(stratum_of_cluster[np.unique(item_cluster)], sort=True)[0],
        strata_labels=()
        if stratum_of_cluster is None
        else tuple(
            stratum_labels[i] for i in np.unique(stratum_of_cluster[np.unique(item_cluster)])
        ),
    )


def _item_weights(
    frame: pd.DataFrame, weights: Hashable, codes: np.ndarray, n_items: int
) -> np.ndarray:
    """Each item's weight: the weight of its rows in ``frame``, which must be one value."""

    w = weight_values(frame[weights], weights)
    runs = np.bincount(codes, minlength=n_items)
    s1 = np.bincount(codes, weights=w, minlength=n_items)
    s2 = np.bincount(codes, weights=w * w, minlength=n_items)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = s1 / runs
        spread = s2 / runs - mean * mean
    varies = (runs > 1) & (spread > 1e-12 * np.maximum(mean * mean, 1e-300))
    if varies.any():
        raise InvalidOptionError(
            f"weights column {weights!r} differs between the rows of {int(varies.sum())} items "
            "(the reruns of an item): a paired difference weighs items, so give each item "
            "one weight"
        )
    return mean


def cluster_members(
    frame: pd.DataFrame, by_labels: Sequence[Hashable], clusters: np.ndarray, used: np.ndarray
) -> tuple[np.ndarray, ...]:
    """Each ``used`` cluster's code in every ``by`` column (read at its first row), for
    crossed clustering: the clusters are the combinations of the columns."""
    first = np.full(int(clusters.max()) + 1, -1, dtype=np.int64)
    first[clusters[::-1]] = np.arange(clusters.shape[0])[::-1]
    rows = first[used]
    return tuple(
        np.asarray(pd.factorize(frame[column].to_numpy()[rows], sort=False)[0], dtype=np.intp)
        for column in by_labels
    )


def _joint_codes(frame: pd.DataFrame, what: str) -> tuple[np.ndarray, int]:
    codes = None
    for column in frame.columns:
        col_codes = small_int_codes(frame[column])
        if col_codes is not None:  # non-negative by construction
            n_labels = int(col_codes.max()) + 1
        else:
            col_codes, uniques = factorize_labels(frame[column], sort=False)
            n_labels = len(uniques)
            if (col_codes < 0).any():
                raise InvalidClusterError(
                    f"{what} column {column!r} has {int((col_codes < 0).sum())} missing values"
                )
        if codes is None:
            codes, n_codes = col_codes.astype(np.int64, copy=False), n_labels
        else:
            codes, uniques = pd.factorize(codes * np.int64(n_labels) + col_codes, sort=False)
            n_codes = len(uniques)
    assert codes is not None
    return codes, n_codes


def model_matrix(
    data: pd.DataFrame, columns: Columns, *, how: str, missing: str, nest: bool = False
) -> ComparisonDesign:
    """Reduce long results (one row per model x item x run) to a models x items matrix
    (with ``weights``, also each item's weight, which every row of the item must share)."""
    outcome, by, model = columns.outcome, columns.given("by"), columns.model
    on, rerun, strata = columns.given("on"), columns.rerun, columns.strata
    weights = columns.weights
    by_labels = as_labels(by)
    check_distinct_roles(outcome, by=by_labels, model=model, on=on, strata=strata)
    require_columns(data, [outcome, model, *by_labels, *([weights] if weights is not None else [])])
    if len(data) == 0:
        raise EmptyDataError("the frame has no rows")
    keys = _keys(data, on)
    item_codes, n_items = _joint_codes(keys, "item key")
    model_codes, models = label_codes(data[model])
    if (model_codes < 0).any():
        raise InvalidClusterError(f"model column {model!r} has missing labels")
    n_models = len(models)
    if n_models < 2:
        raise InvalidOptionError(f"compare needs at least two models, found {n_models}")
    if on is None:
        _refuse_unshared_index(data, item_codes, model_codes, roles=(outcome, model, *by_labels))
    clusters = cluster_codes(data, by_labels)

    def finish(matrix: ComparisonDesign) -> ComparisonDesign:
        named = _named(matrix, outcome, by_labels)
        if len(by_labels) < 2 or strata is not None or matrix.cluster_ids is None:
            return named
        members = cluster_members(data, by_labels, clusters, matrix.cluster_ids)
        return replace(named, members=members)

    stratum_of_cluster, stratum_labels = None, ()
    if strata is not None:
        clusters, stratum_of_cluster, stratum_labels = stratify(data, clusters, strata, nest=nest)
    values, is_binary = outcome_and_binary(data[outcome], outcome)
    has_missing = values.dtype.kind == "f" and bool(np.isnan(values).any())
    if missing == "raise" and has_missing:
        raise MissingOutcomeError(
            f"outcome {outcome!r} has {int(np.isnan(values).sum())} "
            "missing values; use missing='drop' or missing='fail'"
        )
    if has_missing:
        values = impute_missing(values, missing, is_binary)
        has_missing = bool(np.isnan(values).any())

    item_weights = None
    if weights is not None:
        item_weights = _item_weights(data, weights, item_codes, n_items)
    if rerun is None and weights is None:
        blocked = _blocked_matrix(
            values,
            item_codes,
            model_codes,
            clusters,
            n_models,
            models,
            stratum_of_cluster,
            stratum_labels,
        )
        if blocked is not None:
            return finish(blocked)
    # Models numbered in sorted label order from here on, so that the pairs, their signs and
    # the bootstrap draws do not depend on the order of the rows.
    rank, models = sorted_ranks(models)
    # Every row of an item must carry the item's cluster: scatter one, gather and compare.
    # Threads may race on an item: each write is one of the item's clusters, and the check
    # of every row against its item's cluster catches any item that has two.
    item_cluster = np.zeros(n_items, dtype=clusters.dtype)

    def scatter(start: int, stop: int) -> None:
        item_cluster[item_codes[start:stop]] = clusters[start:stop]

    in_row_slices(len(item_codes), scatter)
    n_cells = n_models * n_items
    offsets = rank.astype(np.int64) * n_items  # the first cell of each model's block
    if rerun is None and weights is None:
        return finish(
            _single_runs(
                values,
                item_codes,
                model_codes,
                clusters,
                item_cluster,
                rank,
                models,
                how,
                stratum_of_cluster,
                stratum_labels,
                is_binary=is_binary,
                has_missing=has_missing,
                duplicates=lambda cell, rows: _check_duplicates(
                    data, keys, cell, n_cells, rerun, "for one model", rows=rows
                ),
            )
        )
    if (item_cluster[item_codes] != clusters).any():
        _raise_spread(item_codes, item_cluster, clusters)
    values = values.astype(np.float64, copy=False)
    cell = offsets[model_codes]
    cell += item_codes
    rows_per_cell = np.bincount(cell, minlength=n_cells)  # counted once, used 3x
    _check_duplicates(data, keys, cell, n_cells, rerun, "for one model", rows=rows_per_cell)
    present = (rows_per_cell > 0).reshape(n_models, n_items)
    ok = ~np.isnan(values)
    if ok.all():  # no copies, and the row counts are the run counts
        runs = rows_per_cell.reshape(n_models, n_items)
        totals = np.bincount(cell, weights=values, minlength=n_cells)
    else:
        runs = np.bincount(cell[ok], minlength=n_cells).reshape(n_models, n_items)
        totals = np.bincount(cell[ok], weights=values[ok], minlength=n_cells)
    totals = totals.reshape(n_models, n_items)
    complete, incomplete = complete_items(present, models, how)
    answered = complete & (runs > 0).all(axis=0)
    if not answered.any():
        raise EmptyDataError("no item has a non-missing outcome for every model")
    usable, n_zero_weight = answered, 0
    if item_weights is not None:
        # an item of weight zero is not in the weighted sample: left out and counted
        usable = answered & (item_weights > 0)
        if not usable.any():
            raise InvalidOptionError(
                f"weights column {weights!r} is zero on every item with an outcome for every "
                "model: weighted scores need some positive weight"
            )
        n_zero_weight = int((answered & ~usable).sum())
    if not usable.all():
        totals, runs = totals[:, usable], runs[:, usable]
    totals /= runs  # each model's value on an item: the mean of its runs
    matrix = by_cluster(
        totals,
        item_cluster[usable],
        models,
        n_dropped_items=int(incomplete.sum()),
        unusable=item_cluster[complete & ~answered],
        stratum_of_cluster=stratum_of_cluster,
        stratum_labels=stratum_labels,
        item_weights=None if item_weights is None else item_weights[usable],
    )
    return finish(replace(matrix, n_zero_weight_items=n_zero_weight))


def complete_items(
    present: np.ndarray, models: tuple[Any, ...], how: str
) -> tuple[np.ndarray, np.ndarray]:
    """The items every model has, and those some model lacks (an error with how="strict")."""
    exists = present.any(axis=0)  # integer ids used as codes can leave gaps
    complete = present.all(axis=0)
    incomplete = exists & ~complete
    if how == "strict" and incomplete.any():
        lacking = {
            models[m]: int((exists & ~present[m]).sum())
            for m in range(len(models))
            if (exists & ~present[m]).any()
        }
        shown = ", ".join(f"{k!r}: {v}" for k, v in list(lacking.items())[:5])
        raise AlignmentError(
            f"{int(incomplete.sum())} items are missing for some models (items lacking per "
            f"model: {shown}); pass how='inner' to compare the items every model has"
        )
    return complete, incomplete


def _single_runs(
    values: np.ndarray,
    item_codes: np.ndarray,
    model_codes: np.ndarray,
    clusters: np.ndarray,
    item_cluster: np.ndarray,
    rank: np.ndarray,
    models: tuple[Any, ...],
    how: str,
    stratum_of_cluster: np.ndarray | None,
    stratum_labels: tuple[Any, ...],
    *,
    is_binary: bool,
    has_missing: bool,
    duplicates: Any,
) -> ComparisonDesign:
    """The design of rows with one run per (model, item), in any order.

    One pass over the rows in cache-sized blocks checks the clusters, marks the (model, item)
    cells that have a row (one byte per cell) and sums each model's values per cluster: no
    models x items matrix of values is built, and no temporary is longer than a block. When
    missing outcomes or incomplete items leave some rows out, a second pass sums the rest.
    """
    n_models, n_items, n_rows = len(models), item_cluster.shape[0], values.shape[0]
    n_clusters = int(clusters.max()) + 1
    filled = np.zeros(n_models * n_items, dtype=bool)
    answered = np.zeros(n_models * n_items, dtype=bool) if has_missing else filled
    n_sums = n_models * n_clusters

    def sums_of(
        block: slice, models_here: np.ndarray, keep: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray | None]:
        key = models_here * n_clusters
        key += clusters[block]
        row = values[block].astype(np.float64, copy=False)  # integers may come narrow
        if keep is not None:
            key, row = key[keep], row[keep]
        total = np.bincount(key, weights=row, minlength=n_sums)
        square = None if is_binary else np.bincount(key, weights=row * row, minlength=n_sums)
        return total, square

    def mark(start: int, stop: int) -> tuple[bool, np.ndarray, np.ndarray | None]:
        spread, totals, squares = False, np.zeros(n_sums), None if is_binary else np.zeros(n_sums)
        for first in range(start, stop, _ROW_BLOCK):
            block = slice(first, min(first + _ROW_BLOCK, stop))
            items_here = item_codes[block]
            spread = spread or bool((item_cluster[items_here] != clusters[block]).any())
            models_here = rank[model_codes[block]]  # in sorted label order
            cell = models_here * n_items
            cell += items_here
            filled[cell] = True  # threads may write one byte twice: the same True
            if has_missing:
                answered[cell[~np.isnan(values[block])]] = True
            else:  # summed in the same pass; used unless some items prove incomplete
                total, square = sums_of(block, models_here, None)
                totals += total
                if squares is not None:
                    squares += square
        return spread, totals, squares

    def resum(usable: np.ndarray) -> Any:
        def work(start: int, stop: int) -> tuple[np.ndarray, np.ndarray | None]:
            totals, squares = np.zeros(n_sums), None if is_binary else np.zeros(n_sums)
            for first in range(start, stop, _ROW_BLOCK):
                block = slice(first, min(first + _ROW_BLOCK, stop))
                keep = usable[item_codes[block]]
                total, square = sums_of(block, rank[model_codes[block]], keep)
                totals += total
                if squares is not None:
                    squares += square
            return totals, squares

        return work

    parts = in_row_slices(n_rows, mark)
    if any(part[0] for part in parts):
        _raise_spread(item_codes, item_cluster, clusters)
    if np.count_nonzero(filled) != n_rows:  # a cell written twice: counted, and reported
        cell = rank[model_codes] * n_items + item_codes
        duplicates(cell, np.bincount(cell, minlength=filled.shape[0]))
        raise AssertionError("a duplicated cell went unreported")  # pragma: no cover
    present = filled.reshape(n_models, n_items)
    complete, incomplete = complete_items(present, models, how)
    usable = complete & answered.reshape(n_models, n_items).all(axis=0)
    if not usable.any():
        raise EmptyDataError("no item has a non-missing outcome for every model")
    if has_missing or not usable.all():  # the sums must leave some items out: sum again
        parts = [(False, *sums) for sums in in_row_slices(n_rows, resum(usable))]
    sums = sum(part[1] for part in parts)
    squared = sums if is_binary else sum(part[2] for part in parts)
    counts = np.bincount(item_cluster[usable], minlength=n_clusters).astype(np.float64)
    used = counts > 0
    totals = np.ascontiguousarray(sums.reshape(n_models, n_clusters)[:, used].T)
    squares = np.ascontiguousarray(squared.reshape(n_models, n_clusters)[:, used].T)
    cluster_items, lost_items = _item_counts(item_cluster[usable], item_cluster[complete & ~usable])
    return ComparisonDesign(
        totals=totals,
        squares=squares,
        counts=counts[used],
        products=_products(values, item_codes, rank[model_codes], n_models, n_items, usable),
        models=models,
        is_binary=is_binary,
        n_items=int(usable.sum()),
        n_dropped_items=int(incomplete.sum()),
        n_missing_items=int((complete & ~usable).sum()),
        cluster_items=cluster_items,
        lost_cluster_items=lost_items,
        cluster_ids=np.flatnonzero(used).astype(np.intp),
        **_strata_of(np.flatnonzero(used), stratum_of_cluster, stratum_labels),
    )


def _products(
    values: np.ndarray,
    item_codes: np.ndarray,
    model_ranks: np.ndarray,
    n_models: int,
    n_items: int,
    usable: np.ndarray,
) -> np.ndarray:
    """The models x models sums over the usable items of two models' products of values,
    from rows with one run per (model, item), laid out item by item in blocks so that no
    models x items matrix is held at once."""
    products = np.zeros((n_models, n_models))
    rows_of_item = np.argsort(item_codes, kind="stable")
    sorted_items = item_codes[rows_of_item]
    block = max(1, _ROW_BLOCK // max(n_models, 1))
    for first in range(0, n_items, block):
        last = min(first + block, n_items)
        lo, hi = np.searchsorted(sorted_items, [first, last])
        rows = rows_of_item[lo:hi]
        items = item_codes[rows]
        keep = usable[items]
        rows, items = rows[keep], items[keep] - first
        dense = np.zeros((n_models, last - first))
        row_values = values[rows].astype(np.float64, copy=False)
        dense[model_ranks[rows], items] = np.where(np.isnan(row_values), 0.0, row_values)
        products += dense @ dense.T
    return products


def _strata_of(
    used_clusters: np.ndarray, stratum_of_cluster: np.ndarray | None, labels: tuple[Any, ...]
) -> dict[str, Any]:
    """The stratum codes (0..H-1) of the used clusters and the labels of those strata."""
    if stratum_of_cluster is None:
        return {"strata": None, "strata_labels": ()}
    strata = stratum_of_cluster[used_clusters]
    return {
        "strata": pd.factorize(strata, sort=True)[0],
        "strata_labels": tuple(labels[i] for i in np.unique(strata)),
    }


def sums_by_cluster(
    values: np.ndarray, codes: np.ndarray, n_clusters: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """Per cluster (rows) and model (columns): the sums of a models x items matrix of per-item
    values and of their squares, the items per cluster, and whether every value is 0 or 1."""
    counts = np.bincount(codes, minlength=n_clusters).astype(np.float64)
    totals = np.column_stack(
        [np.bincount(codes, weights=row, minlength=n_clusters) for row in values]
    )
    is_binary = check_binary(np.ravel(values))
    squares = (
        totals  # 0/1 values are their own squares
        if is_binary
        else np.column_stack(
            [np.bincount(codes, weights=row * row, minlength=n_clusters) for row in values]
        )
    )
    return totals, squares, counts, is_binary


def by_cluster(
    values: np.ndarray,
    item_cluster: np.ndarray,
    models: tuple[Any, ...],
    *,
    n_dropped_items: int = 0,
    unusable: np.ndarray | None = None,
    stratum_of_cluster: np.ndarray | None = None,
    stratum_labels: tuple[Any, ...] = (),
    item_weights: np.ndarray | None = None,
) -> ComparisonDesign:
    """The design from a models x items matrix of per-item values (all usable) and each
    item's cluster code; ``unusable`` holds the clusters of the items left out for a
    missing outcome; ``item_weights``, each item's weight, adds the weighted sums."""
    lost = np.zeros(0, dtype=item_cluster.dtype) if unusable is None else unusable
    cluster_items, lost_items = _item_counts(item_cluster, lost)
    codes, uniques = pd.factorize(item_cluster, sort=True)
    totals, squares, counts, is_binary = sums_by_cluster(values, codes, len(uniques))
    weighted = None
    if item_weights is not None:
        weighted = weighted_matrix_sums(values, item_weights, codes)
    return ComparisonDesign(
        totals=totals,
        squares=squares,
        counts=counts,
        products=values @ values.T,
        models=tuple(models),
        is_binary=is_binary,
        n_items=int(values.shape[1]),
        n_dropped_items=n_dropped_items,
        n_missing_items=int(lost.shape[0]),
        cluster_items=cluster_items,
        lost_cluster_items=lost_items,
        cluster_ids=np.asarray(uniques, dtype=np.intp),
        weighted=weighted,
        **_strata_of(np.asarray(uniques), stratum_of_cluster, stratum_labels),
    )


def sorted_ranks(labels: Any) -> tuple[np.ndarray, tuple[Any, ...]]:
    """The position of each label in sorted order, and the sorted labels (first-appearance
    order kept when the labels cannot be sorted)."""
    labels = tuple(labels)
    try:
        order = sorted(range(len(labels)), key=lambda j: labels[j])
    except TypeError:
        order = list(range(len(labels)))
    rank = np.empty(len(order), dtype=np.intp)
    rank[order] = np.arange(len(order))
    return rank, tuple(labels[j] for j in order)


def _raise_spread(item_codes: np.ndarray, item_cluster: np.ndarray, clusters: np.ndarray):
    n_spread = int(np.unique(item_codes[item_cluster[item_codes] != clusters]).size)
    raise AlignmentError(
        f"{n_spread} items have rows in several clusters (an item must belong to one "
        "cluster for every model)"
    )


def _named(matrix: ComparisonDesign, outcome: Hashable, by: list[Hashable]) -> ComparisonDesign:
    return replace(matrix, outcome=str(outcome), by=tuple(str(b) for b in by))


def _blocked_matrix(
    values: np.ndarray,
    item_codes: np.ndarray,
    model_codes: np.ndarray,
    clusters: np.ndarray,
    n_models: int,
    models: Any,
    stratum_of_cluster: np.ndarray | None = None,
    stratum_labels: tuple[Any, ...] = (),
) -> ComparisonDesign | None:
    """The models x items matrix without scattering rows, when the frame is one block of rows
    per model, every block listing the same items in the same order, once each (results
    concatenated per model); None for any other layout, which takes the general path.

    Checking the layout costs a few comparisons of whole arrays; the general path hashes and
    scatters every row.
    """
    n_rows = values.shape[0]
    if n_rows % n_models:
        return None
    n_items = n_rows // n_models
    blocks = model_codes.reshape(n_models, n_items)
    if not (blocks == np.arange(n_models)[:, None]).all():
        return None
    first_items = item_codes[:n_items]
    if not (item_codes.reshape(n_models, n_items) == first_items).all():
        return None
    if np.bincount(first_items).max() > 1:  # an item listed twice within a block
        return None
    item_cluster = clusters[:n_items]
    if not (clusters.reshape(n_models, n_items) == item_cluster).all():
        return None  # the general path reports the items that change cluster
    matrix = values.reshape(n_models, n_items).astype(np.float64, copy=False)
    missing = np.isnan(matrix).any(axis=0)
    if missing.all():
        raise EmptyDataError("no item has a non-missing outcome for every model")
    rank, models = sorted_ranks(models)
    order = np.argsort(rank)  # the block of each model, in sorted label order
    if (order != np.arange(n_models)).any():
        matrix = matrix[order]
    if missing.any():
        matrix = matrix[:, ~missing]
    return by_cluster(
        matrix,
        item_cluster[~missing],
        models,
        unusable=item_cluster[missing],
        stratum_of_cluster=stratum_of_cluster,
        stratum_labels=stratum_labels,
    )


def _mask_unanswered(
    frame: pd.DataFrame, outcomes: Sequence[Hashable], responded: Hashable
) -> pd.DataFrame:
    """A shallow copy whose outcome columns are NaN where ``responded`` is False (the
    caller's frame is not touched, and no column is added)."""

    masked = frame.copy(deep=False)
    for label in outcomes:
        masked[label] = outcome_with_responses(frame, label, responded)
    return masked


def paired_design(
    data: Any,
    other: Any,
    columns: Columns,
    *,
    how: str,
    missing: str,
    nest: bool,
    arrivals: bool = False,
) -> PairedDesign:
    """Two frames matched on ``on`` (or the index), or two columns of one frame, as matched
    items; with ``over``, the items of each group of the ``over`` column(s), which both
    frames need. ``missing="ipw"`` keeps the items answered on both sides (and counts the
    rest). With ``arrivals``, when each group's clusters were complete, from its own rows."""
    outcome, by, on = columns.outcome, columns.given("by"), columns.given("on")
    over, responded = columns.given("over"), columns.responded
    if not isinstance(data, pd.DataFrame):
        raise InvalidInputError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if isinstance(other, pd.DataFrame):
        frame_b, outcome_a, outcome_b = other, outcome, outcome
        default_labels = ("A", "B")
    else:
        frame_b, outcome_a, outcome_b = data, other, outcome
        default_labels = (str(other), str(outcome))
    if responded is not None:
        if frame_b is data:
            data = frame_b = _mask_unanswered(data, [outcome_a, outcome_b], responded)
        else:
            data = _mask_unanswered(data, [outcome_a], responded)
            frame_b = _mask_unanswered(frame_b, [outcome_b], responded)

    def matched(a: pd.DataFrame, b: pd.DataFrame) -> PairedItems:
        items = aligned(a, b)
        if not arrivals:
            return items
        sides = [a] if b is a else [a, b]
        return with_arrivals(items, label_arrivals(sides, as_labels(by), columns.order))

    def aligned(a: pd.DataFrame, b: pd.DataFrame) -> PairedItems:
        missed = "drop" if missing == "ipw" else missing
        return align(a, b, outcome_a, outcome_b, columns, how=how, missing=missed, nest=nest)

    if over is None:
        groups: tuple[tuple[Any, PairedItems], ...] = ((None, matched(data, frame_b)),)
    else:
        _refuse_positions(data, frame_b, on)  # before slicing, which keeps the positions
        groups = _matched_groups(data, frame_b, over, how, matched)
    return PairedDesign(
        outcome=str(outcome_b) if isinstance(other, pd.DataFrame) else None,
        by=tuple(str(b) for b in as_labels(by)),
        over=over_name(over),
        groups=groups,
        default_labels=default_labels,
        order=columns.order if arrivals else None,
    )


def with_arrivals(items: PairedItems, found: dict[Any, float]) -> PairedItems:
    """The items with the arrival of each of their clusters, from arrivals by cluster label."""
    names = items.cluster_labels
    if names is None:
        names = tuple(range(int(items.codes.max()) + 1))
    return replace(items, arrivals=np.array([found[label] for label in names], dtype=float))


@contextmanager
def _in_group(label: Any, over: Any) -> Iterator[None]:
    """An error in matching one ``over=`` group's items names the group."""
    try:
        yield
    except (AlignmentError, EmptyDataError, InvalidClusterError, MissingOutcomeError) as error:
        raise type(error)(f"group {label!r} of {over_name(over)!r}: {error}") from None


def _matched_groups(
    data: pd.DataFrame,
    other: pd.DataFrame,
    over: Any,
    how: str,
    matched: Callable[[pd.DataFrame, pd.DataFrame], PairedItems],
) -> tuple[tuple[Any, PairedItems], ...]:
    """``(label, items)`` per ``over=`` group of ``data`` (sorted labels, as ``cluster_ci``'s
    groups): each group's rows of both frames, matched. A group that only ``other`` has is
    an error with ``how="strict"`` and left out with ``how="inner"``."""
    columns = as_labels(over, role="over") if isinstance(over, (list, tuple)) else [over]
    for frame, side in ((data, "first"), (other, "second")):
        for column in columns:
            if column not in frame.columns:
                raise ColumnNotFoundError(
                    column,
                    list(frame.columns),
                    where=f" in the {side} frame (over=: both frames need it)",
                )
    if other is data:
        codes, labels = over_groups(data, over)
        with_items = []
        for i, label in enumerate(labels):
            rows = data[codes == i]
            with _in_group(label, over):
                with_items.append((label, matched(rows, rows)))
        return tuple(with_items)
    both = pd.concat([data[columns], other[columns]], ignore_index=True)
    codes, labels = over_groups(both, over)
    codes_a, codes_b = codes[: len(data)], codes[len(data) :]
    present = np.bincount(codes_a, minlength=len(labels)) > 0
    only_other = [labels[i] for i in np.flatnonzero(~present)]
    if only_other and how == "strict":
        raise AlignmentError(
            f"over={over_name(over)!r}: groups only in the second frame: {only_other[:5]}"
            f"{' and more' if len(only_other) > 5 else ''}; pass how='inner' to compare the "
            "groups both have"
        )
    with_items = []
    for i in np.flatnonzero(present):
        with _in_group(labels[i], over):
            items = matched(data[codes_a == i], other[codes_b == i])
        with_items.append((labels[i], items))
    return tuple(with_items)


def comparison_design(
    data: Any, columns: Columns, *, how: str, missing: str, nest: bool
) -> ComparisonDesign:
    """Long results (one row per model, item and run) as a models x items matrix."""
    if not isinstance(data, pd.DataFrame):
        raise InvalidInputError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if columns.responded is not None:
        data = _mask_unanswered(data, [columns.outcome], columns.responded)
    missing = "drop" if missing == "ipw" else missing
    return model_matrix(data, columns, how=how, missing=missing, nest=nest)
