"""Reduce row-level outcomes to per-cluster sufficient statistics.

Every statistic in clusterstats (means, cluster-robust variances, the one-way ANOVA ICC, the
cluster bootstrap) is a function of three numbers per cluster: the row count ``n_g``, the
outcome total ``T_g`` and the total of squares ``S_g``. Reducing once, with ``np.bincount``,
is what makes the analytic methods cost about one pass over the rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "ClusterSums",
    "ClusterTable",
    "cluster_sums",
    "cluster_table",
    "cluster_table_and_ids",
    "item_summaries",
]


@dataclass(frozen=True)
class ClusterSums:
    """Per-cluster sufficient statistics of one outcome.

    Attributes
    ----------
    counts : ndarray of float64, shape (G,)
        Rows per cluster, ``n_g`` (every entry is at least 1).
    totals : ndarray of float64, shape (G,)
        Sum of the centred outcome ``y - shift`` in each cluster, ``T_g``.
    squares : ndarray of float64, shape (G,)
        Sum of the squared centred outcome in each cluster, ``S_g``.
    shift : float
        The value subtracted from every outcome before summing (one of the outcomes).
        Centring keeps sums of squares accurate when scores sit far from zero, and makes
        them exactly zero when every outcome is equal. Variances and the ICC do not depend
        on it; means add it back.
    """

    counts: NDArray[np.float64]
    totals: NDArray[np.float64]
    squares: NDArray[np.float64]
    shift: float = 0.0

    @property
    def n_clusters(self) -> int:
        return int(self.counts.shape[0])

    @property
    def n_rows(self) -> int:
        return round(float(self.counts.sum()))

    @property
    def centred_means(self) -> NDArray[np.float64]:
        """Cluster means of the centred outcome, ``T_g / n_g``."""
        return self.totals / self.counts

    @property
    def means(self) -> NDArray[np.float64]:
        """Cluster means of the outcome, ``T_g / n_g + shift``."""
        return self.totals / self.counts + self.shift

    def subset(self, selection) -> ClusterSums:
        """The sums of the selected clusters (same shift)."""
        return ClusterSums(
            self.counts[selection], self.totals[selection], self.squares[selection], self.shift
        )

    @property
    def is_balanced(self) -> bool:
        return bool(np.all(self.counts == self.counts[0]))


@dataclass(frozen=True)
class ClusterTable:
    """Per-cluster statistics of one outcome before a missing-data policy is applied.

    Every missing-data policy is a function of these four numbers per cluster: the rows
    ``n_g`` (answered or not), the answered rows ``r_g``, and the total and sum of squares of
    the answered outcomes, centred on ``shift``. Dropping missing rows keeps the clusters
    with an answer; counting them as a fixed value adds ``n_g - r_g`` copies of it; inverse
    probability weighting uses ``n_g``, ``r_g`` and the totals.

    Attributes
    ----------
    rows : ndarray of float64, shape (G,)
        Rows per cluster, ``n_g`` (every entry is at least 1).
    answered : ndarray of float64, shape (G,)
        Rows with a usable outcome, ``r_g`` (0 for a cluster where nothing was answered). The
        same object as ``rows`` when nothing is missing.
    totals, squares : ndarray of float64, shape (G,)
        Sum and sum of squares of the answered outcomes minus ``shift``.
    shift : float
        The value subtracted before summing (one of the answered outcomes).
    """

    rows: NDArray[np.float64]
    answered: NDArray[np.float64]
    totals: NDArray[np.float64]
    squares: NDArray[np.float64]
    shift: float = 0.0

    @property
    def n_clusters(self) -> int:
        return int(self.rows.shape[0])

    @property
    def has_missing(self) -> bool:
        return self.answered is not self.rows and bool((self.answered != self.rows).any())

    @property
    def missing(self) -> NDArray[np.float64]:
        """Rows without a usable outcome, per cluster."""
        return self.rows - self.answered

    @property
    def n_missing(self) -> int:
        return round(float(self.missing.sum())) if self.has_missing else 0

    @property
    def answered_clusters(self) -> NDArray[np.bool_]:
        """Which clusters have at least one answered row."""
        return self.answered > 0

    def complete_case(self) -> ClusterSums:
        """The sums of the answered rows, over the clusters that have any."""
        if not self.has_missing:
            return ClusterSums(self.rows, self.totals, self.squares, self.shift)
        keep = self.answered_clusters
        return ClusterSums(self.answered[keep], self.totals[keep], self.squares[keep], self.shift)

    def imputed(self, value: float) -> ClusterSums:
        """The sums over every row, a missing outcome counted as ``value``."""
        if not self.has_missing:
            return ClusterSums(self.rows, self.totals, self.squares, self.shift)
        centred = float(value) - self.shift
        missing = self.missing
        return ClusterSums(
            self.rows,
            self.totals + missing * centred,
            self.squares + missing * (centred * centred),
            self.shift,
        )

    def subset(self, selection) -> ClusterTable:
        """The statistics of the selected clusters (same shift)."""
        answered = self.answered[selection] if self.has_missing else None
        rows = self.rows[selection]
        return ClusterTable(
            rows,
            rows if answered is None else answered,
            self.totals[selection],
            self.squares[selection],
            self.shift,
        )


def cluster_table(
    values: ArrayLike, codes: ArrayLike, n_clusters: int | None = None
) -> ClusterTable:
    """Reduce ``values`` (NaN where the outcome is missing) to a :class:`ClusterTable`; see
    :func:`cluster_table_and_ids`, which also returns the codes of the clusters kept."""
    return cluster_table_and_ids(values, codes, n_clusters)[0]


def cluster_table_and_ids(
    values: ArrayLike, codes: ArrayLike, n_clusters: int | None = None
) -> tuple[ClusterTable, NDArray[np.intp]]:
    """Reduce ``values`` (NaN where the outcome is missing) to a :class:`ClusterTable`.

    Parameters
    ----------
    values : array_like of float, shape (N,)
        Outcomes; NaN marks a row without a usable outcome.
    codes : array_like of int, shape (N,)
        Cluster index of each row, in ``0 .. n_clusters - 1``.
    n_clusters : int, optional
        Number of clusters; clusters with no rows are removed from the result.

    Returns
    -------
    (ClusterTable, ndarray of int)
        The table of the clusters that have rows, and those clusters' codes.

    Examples
    --------
    >>> import numpy as np
    >>> t, ids = cluster_table_and_ids(np.array([1.0, np.nan, 0.0, 1.0]), np.array([0, 0, 2, 2]))
    >>> t.rows, t.answered, t.complete_case().means, t.imputed(0.0).means, ids
    (array([2., 2.]), array([1., 2.]), array([1. , 0.5]), array([0.5, 0.5]), array([0, 2]))
    """
    y = np.asarray(values, dtype=np.float64)
    g = np.asarray(codes)
    if y.shape != g.shape or y.ndim != 1:
        raise ValueError("values and codes must be 1-d arrays of the same length")
    minlength = 0 if n_clusters is None else int(n_clusters)
    present = ~np.isnan(y)
    if present.all():
        counts, totals, squares, shift, occupied = _reduce(y, g, minlength)
        ids = np.flatnonzero(occupied).astype(np.intp)
        return ClusterTable(counts, counts, totals, squares, shift), ids
    rows = np.bincount(g, minlength=minlength).astype(np.float64)
    answered_y, answered_g = y[present], g[present]
    shift = float(answered_y[0]) if answered_y.size else 0.0
    centred = answered_y - shift
    answered = np.bincount(answered_g, minlength=rows.shape[0]).astype(np.float64)
    totals = np.bincount(answered_g, weights=centred, minlength=rows.shape[0])
    squares = np.bincount(answered_g, weights=centred * centred, minlength=rows.shape[0])
    occupied = rows > 0
    if not occupied.all():
        rows, answered = rows[occupied], answered[occupied]
        totals, squares = totals[occupied], squares[occupied]
    ids = np.flatnonzero(occupied).astype(np.intp)
    return ClusterTable(rows, answered, totals, squares, shift), ids


def _reduce(y: NDArray[np.float64], g: NDArray[np.intp], minlength: int):
    """Counts, centred totals and squares of the occupied clusters, the shift, and which
    codes are occupied."""
    shift = float(y[0]) if y.size else 0.0
    if shift != 0.0:
        y = y - shift
    counts = np.bincount(g, minlength=minlength).astype(np.float64)
    totals = np.bincount(g, weights=y, minlength=minlength)
    squares = np.bincount(g, weights=y * y, minlength=minlength)
    occupied = counts > 0
    if not occupied.all():
        counts, totals, squares = counts[occupied], totals[occupied], squares[occupied]
    return counts, totals, squares, shift, occupied


def cluster_sums(
    values: ArrayLike, codes: ArrayLike | None, n_clusters: int | None = None
) -> ClusterSums:
    """Reduce ``values`` to per-cluster sums, given integer cluster ``codes``.

    Parameters
    ----------
    values : array_like of float, shape (N,)
        Outcomes, without missing values.
    codes : array_like of int, shape (N,), or None
        Cluster index of each row, in ``0 .. n_clusters - 1``; None makes every row its own
        cluster.
    n_clusters : int, optional
        Number of clusters; clusters with no rows are removed from the result.

    Returns
    -------
    ClusterSums

    Examples
    --------
    >>> import numpy as np
    >>> s = cluster_sums(np.array([1.0, 0.0, 1.0, 1.0]), np.array([0, 0, 1, 1]))
    >>> s.counts, s.means
    (array([2., 2.]), array([0.5, 1. ]))
    """
    y = np.asarray(values, dtype=np.float64)
    shift = float(y[0]) if y.size else 0.0
    if codes is None:  # every value its own cluster: no bincount, no index array
        if y.ndim != 1:
            raise ValueError("values must be a 1-d array")
        centred = y - shift
        return ClusterSums(np.ones(y.shape[0]), centred, centred * centred, shift)
    g = np.asarray(codes)
    if y.shape != g.shape or y.ndim != 1:
        raise ValueError("values and codes must be 1-d arrays of the same length")
    minlength = 0 if n_clusters is None else int(n_clusters)
    counts, totals, squares, shift, _ = _reduce(y, g, minlength)
    return ClusterSums(counts=counts, totals=totals, squares=squares, shift=shift)


def item_summaries(
    values: NDArray[np.float64], item_codes: NDArray[np.intp], n_items: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Per item: the mean of its runs, the number of runs, and the unbiased within-item
    variance of the runs (NaN for items with one run; items without runs get NaN means).

    Reruns of one item are reduced to its mean before pairing; the within-item variance is
    what rerun noise contributes (Miller 2024).
    """
    runs = np.bincount(item_codes, minlength=n_items).astype(np.float64)
    total = np.bincount(item_codes, weights=values, minlength=n_items)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / runs
        centred = values - mean[item_codes]
        ss = np.bincount(item_codes, weights=centred * centred, minlength=n_items)
        within = np.where(runs > 1, ss / (runs - 1), np.nan)
    return mean, runs, within
