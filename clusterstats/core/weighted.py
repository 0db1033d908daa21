"""Weighted means: the Hájek estimator ``sum(w y) / sum(w)`` with its linearised
cluster-robust variance (Binder 1983), as R survey's ``svymean`` with ``weights=``.

The linearisation of a ratio is the unweighted formula with each cluster's row count
replaced by its total weight: the residual of cluster ``g`` is ``sum_g w (y - mean)``, so
every variance of :mod:`clusterstats.core.variance` and :mod:`clusterstats.core.strata`
applies to the per-cluster weighted sums unchanged. Alongside them this module keeps the
sums of squared weights, for the variance that treats the rows as independent (each row
its own cluster) and for Kish's design effect of the weights.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from clusterstats.core import intervals as iv
from clusterstats.core.grouping import ClusterSums
from clusterstats.core.strata import stratified_variance
from clusterstats.core.summary import IntervalSummary, design_variance_summary
from clusterstats.core.variance import cluster_robust
from clusterstats.errors import TooFewClustersError

__all__ = [
    "WEIGHTED_METHODS",
    "WeightedSums",
    "carrying_weight",
    "kish_effect",
    "scale_free",
    "subset",
    "summarize_weighted",
    "weighted_matrix_sums",
    "weighted_sums",
]

#: The interval methods with a weighted form; "auto" is korn_graubard for a binary outcome
#: (R survey's svyciprop(method="beta")), cr1 otherwise.
WEIGHTED_METHODS = ("auto", "naive", "cr1", "wilson", "korn_graubard")


class WeightedSums(NamedTuple):
    """Per-cluster sums of a weighted outcome (``shift`` subtracted from ``y``).

    ``weighted``: counts ``sum w``, totals ``sum w (y - shift)``, squares ``sum w (y -
    shift)^2``; ``squared``: the same with ``w^2``; ``rows``: rows per cluster that carry
    weight (a positive one).
    """

    weighted: ClusterSums
    squared: ClusterSums
    rows: NDArray[np.float64]


def scale_free(weights: NDArray[np.float64]) -> NDArray[np.float64]:
    """Weights divided by their largest value.

    A Hájek mean and its linearised variance do not change when every weight is multiplied
    by one constant, but their sums of products and squares can underflow to zero or
    overflow to infinity when the weights are far from 1 (1e-200 or 1e200). With the largest
    weight 1 every sum stays between the smallest positive weight and the number of rows.
    All-zero weights are returned unchanged.

    >>> import numpy as np
    >>> scale_free(np.array([2e200, 1e200, 0.0])).tolist()
    [1.0, 0.5, 0.0]
    """
    largest = float(weights.max()) if weights.size else 0.0
    return weights / largest if largest > 0 else weights


def weighted_sums(
    values: NDArray[np.float64], weights: NDArray[np.float64], codes: NDArray[np.intp]
) -> WeightedSums:
    """Per-cluster weighted sums of ``values`` (no missing values), clusters ``0..G-1``;
    ``rows`` counts the rows that carry weight (a weight of zero is no observation).

    >>> import numpy as np
    >>> s = weighted_sums(np.array([1.0, 0, 1]), np.array([2.0, 1, 1]), np.array([0, 0, 1]))
    >>> s.weighted.counts.tolist(), s.rows.tolist()
    ([3.0, 1.0], [2.0, 1.0])
    >>> float(s.weighted.totals.sum() / s.weighted.counts.sum() + s.weighted.shift)  # (2+0+1)/4
    0.75
    """
    g = int(codes.max()) + 1
    shift = float(values[0]) if values.size else 0.0
    centred = values - shift

    def sums(w: NDArray[np.float64]) -> ClusterSums:
        return ClusterSums(
            np.bincount(codes, weights=w, minlength=g),
            np.bincount(codes, weights=w * centred, minlength=g),
            np.bincount(codes, weights=w * centred * centred, minlength=g),
            shift,
        )

    rows = np.bincount(codes, weights=(weights > 0).astype(np.float64), minlength=g)
    return WeightedSums(sums(weights), sums(weights * weights), rows)


def weighted_matrix_sums(
    values: NDArray[np.float64], weights: NDArray[np.float64], codes: NDArray[np.intp]
) -> tuple[WeightedSums, ...]:
    """:func:`weighted_sums` of each row of a models × items matrix (no shift: the per-item
    values of several models share one set of weights)."""
    g = int(codes.max()) + 1
    rows = np.bincount(codes, weights=(weights > 0).astype(np.float64), minlength=g)
    w2 = weights * weights
    out = []
    for row in values:

        def sums(w: NDArray[np.float64], row: NDArray[np.float64] = row) -> ClusterSums:
            return ClusterSums(
                np.bincount(codes, weights=w, minlength=g),
                np.bincount(codes, weights=w * row, minlength=g),
                np.bincount(codes, weights=w * row * row, minlength=g),
            )

        out.append(WeightedSums(sums(weights), sums(w2), rows))
    return tuple(out)


def subset(ws: WeightedSums, keep: NDArray[np.bool_]) -> WeightedSums:
    """The sums of the clusters where ``keep`` is True."""

    def part(sums: ClusterSums) -> ClusterSums:
        return ClusterSums(sums.counts[keep], sums.totals[keep], sums.squares[keep], sums.shift)

    return WeightedSums(part(ws.weighted), part(ws.squared), ws.rows[keep])


def carrying_weight(
    ws: WeightedSums, strata: NDArray[np.intp] | None = None
) -> tuple[WeightedSums, NDArray[np.intp] | None]:
    """The sums of the clusters whose total weight is positive (and their strata, coded
    ``0..H-1`` again): a cluster of zero weight is not in the weighted sample, so it counts
    neither in the variance's ``G/(G-1)`` nor in its degrees of freedom.

    >>> import numpy as np
    >>> ws = weighted_sums(np.array([1.0, 0, 1]), np.array([1.0, 1, 0]), np.array([0, 0, 1]))
    >>> carrying_weight(ws)[0].weighted.n_clusters
    1
    """
    keep = ws.weighted.counts > 0
    if keep.all():
        return ws, strata
    if strata is not None:
        strata = np.unique(strata[keep], return_inverse=True)[1].ravel().astype(np.intp)
    return subset(ws, keep), strata


def _row_variance(ws: WeightedSums, centred_mean: float) -> float:
    """The variance of the weighted mean with every row its own cluster (CR1 over rows):
    ``n/(n-1) sum w^2 (y - mean)^2 / (sum w)^2``."""
    n = float(ws.rows.sum())
    sq = ws.squared
    spread = (
        float(sq.squares.sum())
        - 2.0 * centred_mean * float(sq.totals.sum())
        + centred_mean**2 * float(sq.counts.sum())
    )
    return n / (n - 1.0) * max(spread, 0.0) / float(ws.weighted.counts.sum()) ** 2


def kish_effect(ws: WeightedSums) -> float:
    """Kish's design effect of unequal weights, ``n sum w^2 / (sum w)^2 = 1 + CV^2``."""
    return (
        float(ws.rows.sum()) * float(ws.squared.counts.sum()) / float(ws.weighted.counts.sum()) ** 2
    )


def summarize_weighted(
    ws: WeightedSums,
    *,
    method: str,
    confidence: float,
    is_binary: bool,
    strata: NDArray[np.intp] | None = None,
    lonely: str = "fail",
    cap_n_eff: bool = True,
) -> IntervalSummary:
    """Confidence interval of a weighted (Hájek) mean of clustered rows.

    ``cr1``: t on the linearised variance (``G - 1`` df, ``G - H`` with ``strata``);
    ``korn_graubard`` and ``wilson``: the design-based effective n from it, with the rows
    as ``n`` (``korn_graubard`` with ``cap_n_eff=False`` is R survey's
    ``svyciprop(method="beta")``); ``naive``: the rows taken as independent (weighted).
    """
    if method not in WEIGHTED_METHODS:
        raise ValueError(
            f"method {method!r} has no weighted form; with weights use one of {WEIGHTED_METHODS}"
        )
    if method == "auto":
        method = "korn_graubard" if is_binary else "cr1"
    if method in iv.BINARY_ONLY_METHODS and not is_binary:
        raise ValueError(f"method {method!r} needs a binary (0/1) outcome")
    ws, strata = carrying_weight(ws, strata)
    sums = ws.weighted
    total_weight = float(sums.counts.sum())
    if not total_weight > 0:
        raise ValueError("the weights sum to zero: a weighted mean needs a positive total weight")
    if sums.n_clusters < 2:
        raise TooFewClustersError(
            "the weights are positive in only 1 cluster; at least 2 clusters must carry "
            "weight to estimate the between-cluster variance"
        )
    centred_mean = float(sums.totals.sum()) / total_weight
    point = centred_mean + sums.shift
    n_rows = float(ws.rows.sum())
    g = sums.n_clusters
    if strata is None:
        found = cluster_robust(sums, "pooled", "CR1")
        variance, df = found.variance, found.df
    else:
        found = stratified_variance(sums, strata, "pooled", lonely=lonely)
        variance, df = found.variance, found.df
    rows_variance = _row_variance(ws, centred_mean)
    kish = kish_effect(ws)
    within = "" if strata is None else f", within {int(strata.max()) + 1} strata"
    notes = [
        f"weighted (Hájek) mean; the variance linearises it{within} (as R survey's svymean "
        f"with weights); Kish's design effect of the weights: {kish:.3f} (1 + CV² of the "
        "weights)"
    ]
    if is_binary:
        p = min(max(point, 0.0), 1.0)
        naive_n = p * (1 - p) / rows_variance if rows_variance > 0 else n_rows
        naive_low, naive_high = iv.wilson(p, min(naive_n, n_rows), confidence)
    else:
        naive_low, naive_high = iv.t_interval(point, rows_variance, n_rows - 1.0, confidence)
    return design_variance_summary(
        point,
        variance,
        df,
        reference_variance=rows_variance,
        naive_bounds=(naive_low, naive_high),
        n_rows=n_rows,
        method=method,
        confidence=confidence,
        is_binary=is_binary,
        cap_n_eff=cap_n_eff,
        notes=notes,
        zero={
            "n_eff": float(g),
            "basis": f"the number of clusters ({g})",
            "unit": "cluster",
            "variance": "linearised variance",
        },
        scale=max(float(ws.weighted.squares.sum()) / total_weight**2, 1e-300),
    )
