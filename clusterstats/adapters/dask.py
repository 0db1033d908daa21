"""The dask adapter: a dask DataFrame (logs in Parquet shards) reduced to a design.

The per-cluster statistics of ``cluster_ci``, ``icc``, ``design_effect`` (and everything
built on them: strata, missing-data policies, ``report``, ``stratum_table``,
``missing_report``, ``pilot_plan``) come from one lazy grouped aggregation, computed under
whatever scheduler is active. Designs that pair items, count runs per case, fit a response
model on rows or compare groupings row by row compute only the columns their options name
(a :class:`~clusterstats.adapters.labels.Columns`) and reuse the pandas adapter.

dask is an optional extra, imported only when a dask object is passed.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from clusterstats._design import MeanDesign, MeanGroup
from clusterstats.adapters import frame as frame_adapter
from clusterstats.adapters.frame import over_groups, stratify
from clusterstats.adapters.labels import Columns, as_labels
from clusterstats.core.grouping import ClusterSums, ClusterTable, check_sums
from clusterstats.core.weighted import WeightedSums
from clusterstats.errors import (
    ColumnNotFoundError,
    InvalidClusterError,
    InvalidOptionError,
    InvalidOutcomeError,
)

INSTALL_HINT = "dask is an optional extra: pip install 'clusterstats[dask]'"


def require_dask() -> Any:
    """``dask.dataframe``, or an ImportError that says how to install it."""
    try:
        import dask.dataframe
    except ImportError as error:  # pragma: no cover - exercised without dask installed
        raise ImportError(INSTALL_HINT) from error
    return dask.dataframe


def is_dask_frame(data: Any) -> bool:
    """Whether ``data`` is a dask DataFrame (without importing dask when it is not loaded)."""
    import sys

    module = sys.modules.get("dask.dataframe")
    return module is not None and isinstance(data, module.DataFrame)


def compute_columns(data: Any, labels: Iterable[Hashable]) -> pd.DataFrame:
    """The named columns of a dask DataFrame, computed into a pandas frame."""
    wanted = list(labels)
    for column in wanted:
        if column not in data.columns:
            raise ColumnNotFoundError(column, list(data.columns))
    return data[wanted].compute()


def mean_design(
    data: Any, columns: Columns, *, nest: bool = False, arrivals: bool = False
) -> MeanDesign:
    """Per-cluster statistics from one lazy grouped aggregation over (over, by..., strata);
    with ``arrivals``, the cluster and order columns are computed in the same pass, for when
    each cluster was complete."""
    import dask

    outcome, by_labels = columns.outcome, as_labels(columns.given("by"))
    over, strata = columns.given("over"), columns.strata
    responded, weights = columns.responded, columns.weights
    if columns.covariates:  # a response model needs the rows
        frame = compute_columns(data, columns.names())
        return frame_adapter.mean_design(frame, columns, nest=nest, arrivals=arrivals)
    keys = [
        *dict.fromkeys((*columns.by, *columns.over, *columns.labels("strata")))
    ]  # as names() orders
    for column in columns.names():
        if column not in data.columns:
            raise ColumnNotFoundError(column, list(data.columns))
    dtype = data[outcome].dtype
    if not (pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype)):
        raise InvalidOutcomeError(
            f"outcome column {outcome!r} has dtype {dtype}, which is not numeric; convert it to "
            "0/1 (e.g. df[col].eq('pass').astype(int)) or to a numeric score"
        )
    y = data[outcome].astype("float64")
    if responded is not None:
        flag_dtype = data[responded].dtype
        if not (
            pd.api.types.is_bool_dtype(flag_dtype) or pd.api.types.is_integer_dtype(flag_dtype)
        ):
            raise InvalidOptionError(
                f"response indicator {responded!r} must be boolean (True = a usable response; "
                f"0/1 integers are accepted too); it has dtype {flag_dtype}"
            )
        answered = data[responded].astype(bool)
        contradicting = (answered & y.isna()).sum()
        y = y.where(answered)
    else:
        contradicting = None
    first = y.dropna().head(1, npartitions=-1)
    shift = float(first.iloc[0]) if len(first) else 0.0
    present = ~y.isna()
    centred = (y - shift).fillna(0.0)
    # Generated names: the aggregation frame holds only these, so no column of the caller's
    # can collide with them.
    key_names = [f"key{i}" for i in range(len(keys))]
    frame = data[keys].rename(columns=dict(zip(keys, key_names, strict=True)))
    frame = frame.assign(
        rows=1.0,
        answered=present.astype("float64"),
        total=centred,
        square=centred * centred,
        other=(present & (y != 0.0) & (y != 1.0)).astype("float64"),
    )
    weight_checks = []
    if weights is not None:
        w, weight_checks = _lazy_weights(data[weights], weights)
        used = w * present.astype("float64")
        frame = frame.assign(
            w1=used, w1_total=used * centred, w1_square=used * centred * centred,
            w2=used * w, w2_total=used * w * centred, w2_square=used * w * centred * centred,
            carried=(used > 0).astype("float64"),
        )  # fmt: skip
    table = frame.groupby(key_names, sort=True, dropna=False).agg(
        dict.fromkeys([c for c in frame.columns if c not in key_names], "sum")
    )
    infinite = np.isinf(y).any()
    missing_ids = data[keys].isna().sum()
    lazy = [table, infinite, missing_ids, *weight_checks]
    lazy += [contradicting] if contradicting is not None else []
    # the rows' clusters and order in computed order: their positions are the rows'
    lazy += [data[[*dict.fromkeys((*keys, *columns.labels("order")))]]] if arrivals else []
    table, has_inf, missing_ids, *checks = dask.compute(*lazy)
    rows = checks.pop() if arrivals else None
    if weights is not None:
        _raise_bad_weights(weights, checks[: len(weight_checks)])
        checks = checks[len(weight_checks) :]
    for column, count in zip(keys, missing_ids.to_numpy(), strict=True):
        if count:
            role = (
                "over=" if column in columns.over else ("strata" if column == strata else "cluster")
            )
            raise InvalidClusterError(f"{role} column {column!r} has {int(count)} missing ids")
    if has_inf:
        raise InvalidOutcomeError(f"outcome column {outcome!r} contains infinite values")
    if checks and checks[0]:
        raise InvalidOutcomeError(
            f"{int(checks[0])} rows have {responded!r} True but no {outcome!r} value"
        )
    table = table.sort_index()
    cells = table.index.to_frame(index=False)
    cells.columns = keys  # the caller's names again, in a frame that holds nothing else
    sums = {name: table[name].to_numpy(dtype=np.float64) for name in table.columns}
    design = _design_from_table(
        cells, sums, outcome, by_labels, over, strata, nest, shift, weights=weights
    )
    return design if rows is None else frame_adapter.with_arrivals(design, rows, columns)


def _lazy_weights(column: Any, name: Hashable) -> tuple[Any, list[Any]]:
    """The weight column as float64 and the lazy counts that check it (missing, infinite,
    negative values)."""
    dtype = column.dtype
    if not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
        raise InvalidOptionError(
            f"weights column {name!r} has dtype {dtype}, which is not numeric; weights are "
            "non-negative numbers (e.g. sampling weights, or weights_for_mix)"
        )
    w = column.astype("float64")
    checks = [w.isna().sum(), np.isinf(w).sum(), (w < 0).sum()]
    # divided by the largest weight inside the same graph, as the eager adapters do
    # (core.weighted.scale_free): the sums then neither underflow nor overflow
    largest = w.max()
    return w / (largest + (largest <= 0) * 1.0), checks


def _raise_bad_weights(name: Hashable, counts: list[Any]) -> None:
    missing, infinite, negative = (int(c) for c in counts)
    if missing:
        raise InvalidOptionError(
            f"weights column {name!r} has {missing} missing values; give every row a weight"
        )
    if infinite:
        raise InvalidOptionError(f"weights column {name!r} has infinite values")
    if negative:
        raise InvalidOptionError(
            f"weights column {name!r} has {negative} negative values; weights are non-negative"
        )


def _weighted_of(
    sums: dict[str, np.ndarray],
    pick: np.ndarray,
    ids: np.ndarray,
    name: Hashable,
    where: str,
    shift: float,
) -> tuple[Any, np.ndarray]:
    """One group's weighted sums (the clusters with a usable outcome) and their ids."""

    usable = sums["carried"][pick] > 0  # clusters with an answered row of positive weight
    if not usable.any():
        raise InvalidOptionError(
            f"weights column {name!r} is zero on every row with an outcome{where}: a "
            "weighted mean needs some positive weight"
        )
    chosen = pick[usable]

    def part(prefix: str) -> ClusterSums:
        return ClusterSums(
            sums[prefix][chosen], sums[f"{prefix}_total"][chosen],
            sums[f"{prefix}_square"][chosen], shift,
        )  # fmt: skip

    weighted = WeightedSums(part("w1"), part("w2"), sums["carried"][chosen])
    return weighted, ids[usable].astype(np.intp)


def _design_from_table(
    cells: pd.DataFrame,
    sums: dict[str, np.ndarray],
    outcome: Hashable,
    by_labels: list[Hashable],
    over: Hashable | None,
    strata: Hashable | None,
    nest: bool,
    shift: float,
    *,
    weights: Hashable | None = None,
) -> MeanDesign:
    """A MeanDesign from the aggregated cells (one row per group, cluster and stratum: the
    key columns) and their sums (with ``weights``, also the weighted sums)."""
    codes, names, groupings = frame_adapter.cluster_codes(
        cells, by_labels, with_names=True, with_groupings=True
    )
    stratum_of_cluster, stratum_labels = None, ()
    if strata is not None:
        codes, stratum_of_cluster, stratum_labels = stratify(cells, codes, strata, nest=nest)
        if nest:
            names, groupings = frame_adapter.first_row_names(cells, by_labels, codes), None
    if over is None:
        group_codes, group_labels = np.zeros(len(cells), dtype=np.intp), [None]
    else:
        group_codes, group_labels = over_groups(cells, over)
    groups = []
    for index, label in enumerate(group_labels):
        part = group_codes == index
        cells_of = codes[part]
        order = np.argsort(cells_of, kind="stable")
        ids = cells_of[order]
        pick = np.flatnonzero(part)[order]
        rows, answered = sums["rows"][pick], sums["answered"][pick]
        check_sums(answered, sums["total"][pick], sums["square"][pick], name=outcome)
        missing = bool((answered != rows).any())
        weighted = weighted_ids = None
        if weights is not None:
            where = "" if over is None else f" in group {label!r} of {over!r}"
            weighted, weighted_ids = _weighted_of(sums, pick, ids, weights, where, shift)
        groups.append(
            MeanGroup(
                label=label,
                table=ClusterTable(
                    rows,
                    answered if missing else rows,
                    sums["total"][pick],
                    sums["square"][pick],
                    shift,
                ),
                cluster_ids=ids.astype(np.intp),
                is_binary=not bool(sums["other"][pick].any()),
                strata=None if stratum_of_cluster is None else stratum_of_cluster[ids],
                weighted=weighted,
                weighted_ids=weighted_ids,
            )
        )
    return MeanDesign(
        outcome=str(outcome),
        by=tuple(str(b) for b in by_labels),
        over=frame_adapter.over_name(over),
        groups=tuple(groups),
        strata_labels=tuple(stratum_labels),
        cluster_names=names,
        cluster_groupings=groupings,
        weights=None if weights is None else str(weights),
    )
