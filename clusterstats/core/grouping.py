"""Reduce row-level outcomes to per-cluster sufficient statistics.

Every statistic in clusterstats (means, cluster-robust variances, the one-way ANOVA ICC, the
cluster bootstrap) is a function of three numbers per cluster: the row count ``n_g``, the
outcome total ``T_g`` and the total of squares ``S_g``. Reducing once, with ``np.bincount``,
is what makes the analytic methods cost about one pass over the rows.

Precision. The totals and squares are of ``y - shift``, ``shift`` being one of the outcomes:
scores far from zero (an offset of 1e12) then lose nothing, since ``y - shift`` is exact
for values within a factor of two of each other, and the statistics never add the shift back
before subtracting it again (see :mod:`clusterstats.core.variance`). Magnitude is checked
once per reduction, on the ``G`` sums (not the rows): the sums are kept in the outcome's own
units, which every consumer relies on, so outcomes whose deviations are too large or too
small for float64 squares are not rescaled but rejected with an
:class:`~clusterstats.errors.InvalidOutcomeError` that says by how much to rescale them (see
:func:`check_magnitude`). Within that range the statistics are exact to rounding.
Groups reduced together (``over=``) share one shift unless a group lies far from it, which
:func:`grouped_cluster_tables` then reduces around its own value.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Literal, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from clusterstats.errors import InvalidOutcomeError

__all__ = [
    "MAX_SQUARES",
    "MIN_NORMAL",
    "ClusterSums",
    "ClusterTable",
    "check_magnitude",
    "check_sums",
    "cluster_sums",
    "cluster_table",
    "cluster_table_and_ids",
    "dense_codes",
    "grouped_cluster_tables",
    "item_summaries",
]

#: Largest accepted sum of squared deviations from the shift, ``sum((y - shift)^2)``: 2^1020,
#: a quarter of the float64 range, so that the sums of squares formed from it (between-cluster
#: sums, centred means squared) cannot overflow.
MAX_SQUARES = 2.0**1020
#: The smallest normal float64, 2^-1022. Below it a float keeps fewer than 53 bits, so the
#: sum of squares divided by ``N^2`` (the scale of the variance of a mean) must reach it.
MIN_NORMAL = 2.0**-1022


@overload
def dense_codes(codes: ArrayLike) -> NDArray[np.intp]: ...
@overload
def dense_codes(
    codes: ArrayLike, *, with_values: Literal[True]
) -> tuple[NDArray[np.intp], NDArray[np.intp]]: ...
def dense_codes(codes: ArrayLike, *, with_values: bool = False) -> Any:
    """Non-negative codes renumbered ``0 .. G-1`` in increasing order (``np.unique``'s
    inverse, in time linear in the codes' range); with ``with_values``, also the distinct
    values in that order (``np.unique``'s values).

    >>> dense_codes(np.array([7, 2, 7, 5])).tolist()
    [2, 0, 2, 1]
    >>> [a.tolist() for a in dense_codes(np.array([7, 2, 7, 5]), with_values=True)]
    [[2, 0, 2, 1], [2, 5, 7]]
    """
    codes = np.asarray(codes, dtype=np.intp)
    present = np.zeros(int(codes.max()) + 1 if codes.size else 0, dtype=bool)
    present[codes] = True
    if present.all():  # no gaps: the codes are their own ranks (a read-only view of them)
        dense = codes.view()
        dense.flags.writeable = False
    else:
        dense = (np.cumsum(present, dtype=np.intp) - 1)[codes]
    return (dense, np.flatnonzero(present)) if with_values else dense


def check_magnitude(
    squares_total: float,
    n_rows: float,
    deviation: Callable[[], float],
    *,
    name: Hashable | None = None,
) -> None:
    """Raise ``InvalidOutcomeError`` unless float64 holds the sums of squares of an outcome,
    and the variance of its mean, to full precision.

    The check costs one comparison: ``squares_total`` is ``sum((y - shift)^2)``, formed from
    the per-cluster sums, and ``n_rows`` is ``N``. It fails when

    * ``squares_total > MAX_SQUARES`` (2^1020, about 1.1e307), or is not finite: deviations
      from about 1e153 up overflow their squares (or an outcome is infinite);
    * ``0 < squares_total < N^2 * MIN_NORMAL``: the variance of the mean (whose scale is
      ``squares_total / N^2``) would be subnormal, i.e. imprecise;
    * ``squares_total == 0`` while ``deviation()`` is not 0: every squared deviation
      underflowed to zero although the outcomes differ (deviations below about 1e-162), which
      would otherwise be reported as "all outcomes equal".

    Rejected rather than rescaled: the sums stay in the outcome's units because every
    statistic, interval and resampling built on them expects that. The message gives the
    power of ten that brings the outcome into range (multiplying keeps every digit, and an
    offset is harmless: the sums are centred); the ICC and design effects do not change under
    it. ``deviation`` (the largest, or a typical, ``|y - shift|``) is called only to
    tell constant data from underflow and to word the message.

    Examples
    --------
    >>> check_magnitude(12.5, 10.0, lambda: 1.0)  # in range: returns None
    >>> check_magnitude(math.inf, 10.0, lambda: 3e155, name="score")
    Traceback (most recent call last):
    ...
    clusterstats.errors.InvalidOutcomeError: outcome 'score': its values differ by about 3e+155, \
so their squares overflow float64 (the sum of squared deviations exceeds 2^1020 = 1.1e+307); \
rescale it first: analyse score * 1e-155 and divide the estimate, standard error and bounds by \
1e-155 (the ICC and design effects are unchanged)
    """
    if MIN_NORMAL * n_rows * n_rows <= squares_total <= MAX_SQUARES:
        return
    spread = float(deviation())
    if squares_total == 0.0 and spread == 0.0:
        return  # every outcome equal: exact zeros, which the degenerate cases handle
    label = "the outcome" if name is None else f"outcome {name!r}"
    if not math.isfinite(spread):
        raise InvalidOutcomeError(f"{label} contains infinite values")
    if not squares_total <= MAX_SQUARES:  # too large, or NaN: infinity minus infinity
        reason = (
            "so their squares overflow float64 (the sum of squared deviations exceeds "
            f"2^1020 = {MAX_SQUARES:.2g})"
        )
    else:
        reason = (
            "so their squares underflow float64 (the variance of their mean would be below "
            f"the smallest normal float64, {MIN_NORMAL:.2g}, and lose precision)"
        )
    exponent = round(math.log10(spread)) if 0.0 < spread < math.inf else 0
    factor = f"{10.0**-exponent:g}"
    symbol = "y" if name is None else str(name)
    raise InvalidOutcomeError(
        f"{label}: its values differ by about {spread:.2g}, {reason}; rescale it first: "
        f"analyse {symbol} * {factor} and divide the estimate, standard error and bounds by "
        f"{factor} (the ICC and design effects are unchanged)"
    )


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
    values: ArrayLike,
    codes: ArrayLike,
    n_clusters: int | None = None,
    *,
    name: Hashable | None = None,
) -> ClusterTable:
    """Reduce ``values`` (NaN where the outcome is missing) to a :class:`ClusterTable`; see
    :func:`cluster_table_and_ids`, which also returns the codes of the clusters kept."""
    return cluster_table_and_ids(values, codes, n_clusters, name=name)[0]


def cluster_table_and_ids(
    values: ArrayLike,
    codes: ArrayLike,
    n_clusters: int | None = None,
    *,
    name: Hashable | None = None,
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
    name : hashable, optional
        The outcome's name, for the message of an ``InvalidOutcomeError``.

    Returns
    -------
    (ClusterTable, ndarray of int)
        The table of the clusters that have rows, and those clusters' codes.

    Raises
    ------
    InvalidOutcomeError
        The outcomes' deviations are too large or too small for float64 sums of squares
        (see :func:`check_magnitude`), or an outcome is infinite.

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
    return _table_and_ids(y, g, minlength, name, check=True)


def _table_and_ids(
    y: NDArray[np.float64],
    g: NDArray[np.intp],
    minlength: int,
    name: Hashable | None,
    *,
    check: bool,
) -> tuple[ClusterTable, NDArray[np.intp]]:
    """:func:`cluster_table_and_ids` on validated arrays; ``check`` runs the magnitude
    check on the whole table (off when the caller checks parts of it)."""
    present = ~np.isnan(y)
    if present.all():
        counts, totals, squares, shift, occupied = _reduce(y, g, minlength, name, check=check)
        ids = np.flatnonzero(occupied).astype(np.intp)
        return ClusterTable(counts, counts, totals, squares, shift), ids
    rows = np.bincount(g, minlength=minlength).astype(np.float64)
    answered_y, answered_g = y[present], g[present]
    shift = float(answered_y[0]) if answered_y.size else 0.0
    centred = answered_y - shift
    answered = np.bincount(answered_g, minlength=rows.shape[0]).astype(np.float64)
    totals = np.bincount(answered_g, weights=centred, minlength=rows.shape[0])
    with np.errstate(over="ignore"):  # an overflow is reported by the check
        squares = np.bincount(answered_g, weights=centred * centred, minlength=rows.shape[0])
    if check:
        check_magnitude(
            float(squares.sum()), float(centred.size), lambda: _largest(centred), name=name
        )
    occupied = rows > 0
    if not occupied.all():
        rows, answered = rows[occupied], answered[occupied]
        totals, squares = totals[occupied], squares[occupied]
    ids = np.flatnonzero(occupied).astype(np.intp)
    return ClusterTable(rows, answered, totals, squares, shift), ids


def grouped_cluster_tables(
    values: ArrayLike,
    codes: ArrayLike,
    n_clusters: int,
    group_codes: ArrayLike,
    n_groups: int,
    *,
    name: Hashable | None = None,
) -> list[tuple[ClusterTable, NDArray[np.intp]]]:
    """Per group (``over=``), the :class:`ClusterTable` of its clusters and their codes, from
    one reduction over ``(group, cluster)`` cells; a group far from the shared shift is
    reduced again around one of its own values.

    One shift for every group costs precision in each group far from it: with one model's
    scores near 0 and another's near 1e12, the second's sums of squares around the first's
    value keep none of the digits of its spread (its CR1 variance loses eight digits at 1e9;
    at 1e12 the group reads as constant). A group whose mean lies more than ``2^5``
    standard deviations from the shared shift (``N * mean^2 > 2^10 * SS``, all centred) is
    therefore reduced again, alone, centred on its own first answered value: one more pass
    over the rows for each such group, none when the groups sit at comparable values (pass
    rates of several models). The magnitude check (:func:`check_magnitude`) is made group by
    group.

    Parameters
    ----------
    values : array_like of float, shape (N,)
        Outcomes; NaN marks a row without a usable outcome.
    codes : array_like of int, shape (N,)
        Cluster index of each row, in ``0 .. n_clusters - 1``.
    n_clusters : int
        Number of clusters (codes), shared by the groups.
    group_codes : array_like of int, shape (N,)
        Group index of each row, in ``0 .. n_groups - 1``.
    n_groups : int
    name : hashable, optional
        The outcome's name, for the message of an ``InvalidOutcomeError``.

    Returns
    -------
    list of (ClusterTable, ndarray of int)
        One per group, in group order: the table of the group's clusters that have rows and
        those clusters' codes (an empty table for a group without rows).

    Examples
    --------
    >>> y = np.array([0.0, 1.0, 1e12, 1e12 + 1.0]); g = np.array([0, 1, 0, 1])
    >>> tables = grouped_cluster_tables(y, g, 2, np.array([0, 0, 1, 1]), 2)
    >>> [t.shift for t, _ in tables], tables[1][0].complete_case().centred_means
    ([0.0, 1000000000000.0], array([0., 1.]))
    """
    y = np.asarray(values, dtype=np.float64)
    g = np.asarray(codes)
    groups = np.asarray(group_codes)
    if not (y.shape == g.shape == groups.shape) or y.ndim != 1:
        raise ValueError("values, codes and group_codes must be 1-d arrays of the same length")
    n_clusters = int(n_clusters)
    cell = groups * np.intp(n_clusters) + g
    table, cell_ids = _table_and_ids(y, cell, n_groups * n_clusters, name, check=False)
    del cell
    group_of_cell = cell_ids // n_clusters
    out = []
    for index in range(n_groups):
        selection = group_of_cell == index
        part, ids = table.subset(selection), cell_ids[selection] - index * n_clusters
        if _far_from_shift(part):
            rows = groups == index
            part, ids = _table_and_ids(y[rows], g[rows], n_clusters, name, check=False)
        check_sums(part.answered, part.totals, part.squares, name=name)
        out.append((part, ids))
    return out


# A group whose centred mean squared, times N, exceeds this multiple of its sum of squares
# around its mean is reduced again around its own value (see grouped_cluster_tables).
_FAR = 2.0**10


def _far_from_shift(table: ClusterTable) -> bool:
    """Whether a group's sums around a shared shift have lost precision to cancellation: its
    mean is more than ``sqrt(_FAR)`` standard deviations from the shift (sums of squares
    that cancelled to noise count as far)."""
    n = float(table.answered.sum())
    if n == 0.0:
        return False
    total = float(table.totals.sum())
    mean = total / n
    around_mean = float(table.squares.sum()) - total * mean
    return not n * mean * mean <= _FAR * around_mean


def check_sums(
    counts: NDArray[np.float64],
    totals: NDArray[np.float64],
    squares: NDArray[np.float64],
    *,
    name: Hashable | None = None,
) -> None:
    """:func:`check_magnitude` on per-cluster sums (counts of the answered rows, centred
    totals and squares); the deviation in the message is the largest of the clusters'
    centred means and root mean squares."""

    def deviation() -> float:
        if not counts.size:
            return 0.0
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            scale = np.maximum(counts, 1.0)
            means = np.abs(totals / scale)
            if not np.isfinite(means).all():
                return math.inf  # an infinite outcome
            rms = np.sqrt(np.abs(squares) / scale)
        rms = rms[np.isfinite(rms)]  # not the squares that overflowed
        return max(float(means.max()), float(rms.max()) if rms.size else 0.0)

    check_magnitude(float(squares.sum()), float(counts.sum()), deviation, name=name)


def _largest(centred: NDArray[np.float64]) -> float:
    """The largest ``|y - shift|`` (called only when a check fails)."""
    return float(np.max(np.abs(centred))) if centred.size else 0.0


def _reduce(
    y: NDArray[np.float64],
    g: NDArray[np.intp],
    minlength: int,
    name: Hashable | None,
    *,
    check: bool = True,
):
    """Counts, centred totals and squares of the occupied clusters, the shift, and which
    codes are occupied."""
    shift = float(y[0]) if y.size else 0.0
    if shift != 0.0:
        y = y - shift
    counts = np.bincount(g, minlength=minlength).astype(np.float64)
    totals = np.bincount(g, weights=y, minlength=minlength)
    with np.errstate(over="ignore"):  # an overflow is reported by the check
        squares = np.bincount(g, weights=y * y, minlength=minlength)
    if check:
        check_magnitude(float(squares.sum()), float(y.size), lambda: _largest(y), name=name)
    occupied = counts > 0
    if not occupied.all():
        counts, totals, squares = counts[occupied], totals[occupied], squares[occupied]
    return counts, totals, squares, shift, occupied


def cluster_sums(
    values: ArrayLike,
    codes: ArrayLike | None,
    n_clusters: int | None = None,
    *,
    name: Hashable | None = None,
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
    name : hashable, optional
        The outcome's name, for the message of an ``InvalidOutcomeError``.

    Returns
    -------
    ClusterSums

    Raises
    ------
    InvalidOutcomeError
        The outcomes' deviations are too large or too small for float64 sums of squares
        (see :func:`check_magnitude`), or an outcome is infinite.

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
        with np.errstate(over="ignore"):  # an overflow is reported by the check
            squares = centred * centred
        check_magnitude(
            float(squares.sum()), float(centred.size), lambda: _largest(centred), name=name
        )
        return ClusterSums(np.ones(y.shape[0]), centred, squares, shift)
    g = np.asarray(codes)
    if y.shape != g.shape or y.ndim != 1:
        raise ValueError("values and codes must be 1-d arrays of the same length")
    minlength = 0 if n_clusters is None else int(n_clusters)
    counts, totals, squares, shift, _ = _reduce(y, g, minlength, name)
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
