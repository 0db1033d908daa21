"""Crossed (multi-way) clustering: rows that belong to two or more groupings at once that
are not nested (question × template, item × judge, person × item).

The variance of a mean is the Cameron–Gelbach–Miller (2011) inclusion–exclusion sum over
every non-empty set ``S`` of the groupings, ``sum_S (-1)^(|S|+1) V_S``, where ``V_S`` is the
one-way CR1 variance clustered by the intersection of the groupings in ``S``, each with its
own small-sample factor ``G_S/(G_S-1)``: for two groupings ``V_a + V_b - V_ab``, as R
``sandwich::vcovCL(cluster = ~a + b, multi0 = FALSE)`` and statsmodels'
``cov_cluster_2groups`` compute it for an intercept-only regression. Everything is computed
from the per-cell sums of a :class:`~clusterstats.core.grouping.ClusterSums` whose clusters
are the cells (the combinations of the groupings that occur), and each cell's code in every
grouping.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from clusterstats.core import intervals as iv
from clusterstats.core.grouping import ClusterSums, cluster_sums, dense_codes
from clusterstats.core.summary import (
    IntervalSummary,
    constant_up_to_rounding,
    design_variance_summary,
    few_clusters_notes,
    naive_interval,
)
from clusterstats.core.variance import centred_estimate, iid_variance
from clusterstats.errors import (
    DegenerateDataError,
    TooFewClustersError,
)

__all__ = [
    "CROSSED_METHODS",
    "CrossedPairwise",
    "CrossedVariance",
    "crossed_pairwise",
    "crossed_variance",
    "crossed_variance_of_rows",
    "memberships_of",
    "summarize_crossed",
]

#: The interval methods that have a crossed form; "auto" is korn_graubard for a binary
#: outcome, cr1 otherwise.
CROSSED_METHODS = ("auto", "naive", "cr1", "wilson", "korn_graubard")


class CrossedVariance(NamedTuple):
    """The multi-way variance of a pooled mean and its parts.

    ``terms`` holds, for each non-empty set of groupings (as a tuple of their positions),
    its number of clusters and its one-way CR1 variance; ``variance`` is their
    inclusion–exclusion sum, or, when that is not positive (``fallback``), the largest of
    the terms (never less than any single grouping's). ``df`` is ``min(G_j) - 1`` over the single
    groupings.
    """

    variance: float
    terms: tuple[tuple[tuple[int, ...], int, float], ...]
    df: float
    fallback: bool


def memberships_of(labels: Sequence[tuple], n_groupings: int) -> list[NDArray[np.intp]]:
    """Each cell's code in every grouping, from the cells' labels (one tuple per cell, one
    entry per grouping), codes numbered in order of first appearance.

    >>> [codes.tolist() for codes in memberships_of([("q1", "t1"), ("q1", "t2"), ("q2", "t1")], 2)]
    [[0, 0, 1], [0, 1, 0]]
    """
    memberships = []
    for position in range(n_groupings):
        seen: dict[object, int] = {}
        codes = [seen.setdefault(label[position], len(seen)) for label in labels]
        memberships.append(np.asarray(codes, dtype=np.intp))
    return memberships


def _intersection_codes(dense: Sequence[NDArray[np.intp]], subset: tuple[int, ...]):
    """Codes 0..G_S-1 of each cell in the intersection of the groupings in ``subset`` (each
    grouping's codes ``dense``: 0..G_j-1), in the lexicographic order of their codes."""
    key = dense[subset[0]]
    for j in subset[1:]:
        # a mixed-radix number of the codes so far and this grouping's, renumbered
        radix = int(dense[j].max()) + 1
        span = (int(key.max()) + 1) * radix
        combined = key.astype(np.int64) * np.int64(radix) + dense[j]
        if span <= 2 * combined.size + 1024:  # a short range: counted, not sorted
            key = dense_codes(combined)
        else:
            key = np.unique(combined, return_inverse=True)[1].ravel().astype(np.intp)
    return key


def _subsets(memberships: Sequence[NDArray[np.intp]], names: Sequence[str] = ()):
    """``(subset, codes, G)`` for every non-empty set of the groupings, smallest first: the
    positions of its groupings, each cell's code in their intersection, and its clusters.
    A grouping with a single level is an error naming it (``names``, when given): every
    intersection has at least the levels of each of its groupings, so it is the only case."""
    if len(memberships) < 2:
        raise ValueError("crossed clustering needs at least two groupings")
    dense = [dense_codes(codes) for codes in memberships]
    for position, codes in enumerate(dense):
        if int(np.max(codes)) < 1:
            which = f"{names[position]!r}" if len(names) > position else f"{position}"
            raise TooFewClustersError(
                f"crossed grouping {which} has a single level: a cluster-robust variance needs "
                "at least two clusters in every grouping; cluster by the other column(s) "
                "alone (crossed=False), or add rows from other levels"
            )
    for size in range(1, len(memberships) + 1):
        for subset in itertools.combinations(range(len(memberships)), size):
            codes = _intersection_codes(dense, subset)
            g = int(codes.max()) + 1
            if g < 2:
                raise ValueError(
                    f"grouping {subset} has a single cluster: a cluster-robust variance "
                    "needs at least two"
                )
            yield subset, codes, g


def crossed_variance(
    sums: ClusterSums, memberships: Sequence[NDArray[np.intp]], *, names: Sequence[str] = ()
) -> CrossedVariance:
    """Cameron–Gelbach–Miller multi-way cluster-robust variance of the pooled mean.

    Parameters
    ----------
    sums : ClusterSums
        Per-cell sums (a cell is a combination of the groupings that has rows).
    memberships : sequence of int arrays
        For each grouping, the code of every cell in it (shape ``(cells,)``).

    Examples
    --------
    Two crossed groupings of four cells, one row each, by hand: the residuals around the
    mean 0.5 are ``±0.5``; summed by ``a`` they cancel (``V_a = 0``), by ``b`` they are
    ``±1`` (``V_b = 2/1 * 2/16 = 0.25``), by cell ``V_ab = 4/3 * 1/16 = 0.0833``, so
    ``V = 0 + 0.25 - 0.0833``:

    >>> import numpy as np
    >>> from clusterstats.core.grouping import ClusterSums, cluster_sums
    >>> s = ClusterSums(np.ones(4), np.array([1.0, 0, 1, 0]), np.array([1.0, 0, 1, 0]))
    >>> a, b = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    >>> v = crossed_variance(s, [a, b])
    >>> [(t[0], t[1], round(t[2], 6)) for t in v.terms]
    [((0,), 2, 0.0), ((1,), 2, 0.25), ((0, 1), 4, 0.083333)]
    >>> round(v.variance, 6), v.df
    (0.166667, 1.0)
    """
    n = float(sums.counts.sum())
    residuals = sums.totals - sums.counts * centred_estimate(sums, "pooled")
    terms = []
    total = 0.0
    for subset, codes, g in _subsets(memberships, names):
        # every cell its own cluster (the intersection of all groupings, usually): the sums
        # are the residuals themselves, in another order, which e'e does not see
        e = residuals if g == codes.size else np.bincount(codes, weights=residuals, minlength=g)
        variance = g / (g - 1.0) * float(e @ e) / n**2
        terms.append((subset, g, variance))
        total += variance if len(subset) % 2 else -variance
    df = float(min(g for subset, g, _ in terms if len(subset) == 1) - 1)
    if total > 0:
        return CrossedVariance(total, tuple(terms), df, False)
    # Not positive: the intersections carry more variance than the groupings. Then the
    # largest term (an intersection's, at least as large as every single grouping's) is
    # used, so the interval is never narrower than any of the clusterings alone.
    return CrossedVariance(max(t[2] for t in terms), tuple(terms), df, True)


def crossed_variance_of_rows(
    values: NDArray[np.float64], groupings: Sequence[NDArray[np.intp]]
) -> CrossedVariance:
    """:func:`crossed_variance` of row values, each row's code given in every grouping.

    >>> import numpy as np
    >>> y = np.array([1.0, 0, 1, 0]); a = np.array([0, 0, 1, 1]); b = np.array([0, 1, 0, 1])
    >>> round(crossed_variance_of_rows(y, [a, b]).variance, 6)
    0.166667
    """
    stacked = np.stack([np.asarray(codes) for codes in groupings], axis=1)
    cells, cell_of_row = np.unique(stacked, axis=0, return_inverse=True)
    memberships = [cells[:, j].astype(np.intp) for j in range(stacked.shape[1])]
    return crossed_variance(cluster_sums(values, cell_of_row.ravel()), memberships)


def _describe(names: Sequence[str], variance: CrossedVariance) -> str:
    parts = []
    for subset, g, _ in variance.terms:
        sign = "+" if len(subset) % 2 else "−"
        parts.append(f"{sign} V[{' ∩ '.join(names[j] for j in subset)}] ({g:,} clusters)")
    formula = " ".join(parts).removeprefix("+ ")
    groupings = [f"{g:,}" for subset, g, _ in variance.terms if len(subset) == 1]
    return (
        f"crossed clustering by {' and '.join(names)} (Cameron, Gelbach & Miller 2011): "
        f"variance {formula}, each CR1; df = min({', '.join(groupings)}) − 1 = "
        f"{variance.df:g}"
    )


def summarize_crossed(
    sums: ClusterSums,
    memberships: Sequence[NDArray[np.intp]],
    *,
    names: Sequence[str],
    method: str,
    confidence: float,
    is_binary: bool,
    cap_n_eff: bool = True,
) -> IntervalSummary:
    """Confidence interval of a pooled mean under crossed clustering.

    ``method``: one of :data:`CROSSED_METHODS`. ``"cr1"`` is the t interval on the
    multi-way variance with ``min(G_j) - 1`` df; ``"korn_graubard"`` and ``"wilson"`` put
    that variance into the design-based effective n, as the one-way methods do with CR1;
    ``"auto"`` is ``"korn_graubard"`` for a binary outcome and ``"cr1"`` otherwise.
    """
    if method not in CROSSED_METHODS:
        raise ValueError(
            f"method {method!r} has no crossed form; with crossed clustering use one of "
            f"{CROSSED_METHODS}"
        )
    if method == "auto":
        method = "korn_graubard" if is_binary else "cr1"
    if method in iv.BINARY_ONLY_METHODS and not is_binary:
        raise ValueError(f"method {method!r} needs a binary (0/1) outcome")
    n_rows = float(sums.counts.sum())
    point = centred_estimate(sums, "pooled") + sums.shift
    if not is_binary and constant_up_to_rounding(sums, point):
        raise DegenerateDataError(
            f"all {int(n_rows)} outcomes equal {point:g}: a continuous outcome with no "
            "variation has no estimable uncertainty"
        )
    crossed = crossed_variance(sums, memberships, names=names)
    notes = [_describe(names, crossed)]
    if crossed.fallback:
        largest = max(crossed.terms, key=lambda t: t[2])
        notes.append(
            "the multi-way variance is not positive (the intersections carry more variance "
            "than the groupings); the largest of its terms, clustered by "
            f"{' ∩ '.join(names[j] for j in largest[0])}, is used instead"
        )
    iid_var = iid_variance(sums)
    fewest = min(g for subset, g, _ in crossed.terms if len(subset) == 1)
    summary = design_variance_summary(
        point,
        crossed.variance,
        crossed.df,
        reference_variance=iid_var,
        naive_bounds=naive_interval(sums, point, is_binary, confidence),
        n_rows=n_rows,
        method=method,
        confidence=confidence,
        is_binary=is_binary,
        cap_n_eff=cap_n_eff,
        notes=notes,
        zero={
            "n_eff": float(fewest),
            "basis": f"the smaller number of clusters ({fewest})",
            "unit": "cell",
            "variance": "crossed variance",
        },
        scale=float(sums.squares.sum()) / n_rows**2,
    )
    few = few_clusters_notes(fewest, summary.method, unit="clusters in the smallest grouping")
    return summary._replace(notes=(*summary.notes, *few))


class CrossedPairwise(NamedTuple):
    """The means of several models on the same cells and, for each pair, the multi-way
    variance of their difference (as :func:`crossed_variance` for one mean)."""

    means: NDArray[np.float64]  # (M,)
    variance: NDArray[np.float64]  # (M, M): variance of mean_i - mean_j (0 on the diagonal)
    own: NDArray[np.float64]  # (M,): each model's own multi-way variance
    fallback: NDArray[np.bool_]  # (M, M): pairs whose sum was not positive
    df: float
    terms: tuple[tuple[tuple[int, ...], int], ...]  # (groupings, clusters) of each term


def crossed_pairwise(
    cluster_totals: NDArray[np.float64],
    counts: NDArray[np.float64],
    memberships: Sequence[NDArray[np.intp]],
    *,
    names: Sequence[str] = (),
) -> CrossedPairwise:
    """Multi-way variances of every pairwise difference of ``M`` models' pooled means, from
    per-cell sums ``cluster_totals`` (cells × models) and items per cell ``counts``.

    Each term is the CR1 covariance matrix of the models' means clustered by one set of the
    groupings, ``G_S/(G_S-1) E_S' E_S / N^2``; a pair's variance is the inclusion–exclusion
    sum of its terms' ``c_ii + c_jj - 2 c_ij``, or, where that is not positive, its largest
    term, as for one mean.

    >>> import numpy as np
    >>> totals = np.array([[1.0, 0], [0, 0], [1, 1], [0, 1]])
    >>> p = crossed_pairwise(totals, np.ones(4), [np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])])
    >>> round(float(p.own[0]), 6), p.df  # model 0 alone: the example of crossed_variance
    (0.166667, 1.0)
    """
    n = float(counts.sum())
    means = cluster_totals.sum(axis=0) / n
    residuals = cluster_totals - np.outer(counts, means)
    m = cluster_totals.shape[1]
    total = np.zeros((m, m))
    own_total = np.zeros(m)
    largest = np.zeros((m, m))
    own_largest = np.zeros(m)
    terms = []
    singles = []
    for subset, codes, g in _subsets(memberships, names):
        if g == codes.size:  # every cell its own cluster: E'E does not see the order
            summed = residuals
        else:
            summed = np.zeros((g, m))
            np.add.at(summed, codes, residuals)
        covariance = g / (g - 1.0) * (summed.T @ summed) / n**2
        own = np.diag(covariance)
        pair = own[:, None] + own[None, :] - 2.0 * covariance
        sign = 1.0 if len(subset) % 2 else -1.0
        total += sign * pair
        own_total += sign * own
        largest = np.maximum(largest, pair)
        own_largest = np.maximum(own_largest, own)
        terms.append((subset, g))
        if len(subset) == 1:
            singles.append(g)
    off_diagonal = ~np.eye(m, dtype=bool)
    fallback = (total <= 0) & off_diagonal
    variance = np.where(fallback, largest, total)
    np.fill_diagonal(variance, 0.0)
    own = np.where(own_total > 0, own_total, own_largest)
    return CrossedPairwise(means, variance, own, fallback, float(min(singles) - 1), tuple(terms))
