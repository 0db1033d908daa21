"""Statistics of test cases run several times: per-case moments, pass@k, pass^k, flakiness.

The input is an array whose last axis holds the runs of one case (NaN where a case has fewer
runs than the longest). Everything reduces each case to a few numbers (runs ``n``, total
``t``, the within-case sum of squares around the case mean and the residual that makes the
case mean exact), so a dask array can be reduced chunk by chunk and the rest finished on
arrays of one value per case.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from clusterstats.core._lazy import special
from clusterstats.core.grouping import ClusterSums, ClusterTable, check_sums

__all__ = [
    "MOMENTS",
    "case_moments",
    "case_sums",
    "case_table",
    "effective_runs",
    "flaky_cases",
    "impute_runs",
    "pass_at_k",
    "pass_hat_k",
    "pass_k_variance",
]

#: Names of the last axis of :func:`case_moments`' output.
MOMENTS = ("runs", "total", "within_ss", "non_binary", "missing", "residual")
# Cells per slab in case_moments: temporaries of a few MB, whatever the input size.
_SLAB_CELLS = 1 << 20


def case_moments(values: ArrayLike, ran: ArrayLike | None = None) -> NDArray[np.float64]:
    """Per case (the last axis holds its runs; NaN is "no run"): the number of runs, their
    total, the sum of squares around the case mean, 1.0 if any run is not 0 or 1, the number
    of runs whose outcome is missing, and the residual ``sum(y - total / runs)``.

    ``ran`` (a boolean array of the same shape) tells a missing outcome from no run: where it
    is True and the value is NaN, the run happened and its outcome is missing. Without it
    every NaN is "no run".

    Precision. A case is centred on its rounded mean ``m = total / runs`` (the same float
    wherever it is recomputed): the residual ``r = sum(y - m)`` makes it exact, ``m + r / n``,
    however far the scores are from zero (with scores near 1e12 the rounded total alone keeps
    only about four digits of the case mean below the offset). The sum of squares is the
    corrected two-pass one, ``sum((y - m)^2) - r^2 / n``, exact to rounding.
    :func:`case_table` and :func:`case_sums` recover sums around any common value from these.
    Cases are processed in slabs of about a million cells, so the temporaries stay small
    whatever the size of the input (a dask chunk, or a whole array).

    Examples
    --------
    >>> case_moments([[1.0, 0.0, np.nan], [1.0, 1.0, 1.0]])
    array([[2. , 1. , 0.5, 0. , 0. , 0. ],
           [3. , 3. , 0. , 0. , 0. , 0. ]])
    >>> float(case_moments([[1.0, np.nan, np.nan]], ran=[[True, True, False]])[0, 4])
    1.0
    """
    array = np.asarray(values)
    mask = None if ran is None else np.asarray(ran, dtype=bool)
    n_runs = array.shape[-1]
    flat = array.reshape(-1, n_runs)
    flat_ran = None if mask is None else np.broadcast_to(mask, array.shape).reshape(-1, n_runs)
    out = np.empty((flat.shape[0], len(MOMENTS)))
    step = max(1, _SLAB_CELLS // max(n_runs, 1))
    for start in range(0, flat.shape[0], step):
        y = flat[start : start + step].astype(np.float64)
        present = ~np.isnan(y)
        runs = present.sum(axis=-1)
        y[~present] = 0.0
        total = y.sum(axis=-1)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(runs > 0, total / np.maximum(runs, 1), 0.0)
        non_binary = (present & (y != 0.0) & (y != 1.0)).any(axis=-1)
        with np.errstate(invalid="ignore", over="ignore"):  # an infinite run: reported later
            y -= mean[:, None]
            y[~present] = 0.0
            block = out[start : start + step]
            residual = y.sum(axis=-1)
        block[:, 0] = runs
        block[:, 1] = total
        # overflow (scores beyond ~1e154) is reported when the sums are formed (case_table)
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            within = np.einsum("ij,ij->i", y, y)
            within -= residual * np.where(runs > 0, residual / np.maximum(runs, 1), 0.0)
        np.maximum(within, 0.0, out=within)  # NaN (an infinite run) is kept
        block[:, 2] = within
        block[:, 3] = non_binary
        if flat_ran is None:
            block[:, 4] = 0.0
        else:
            block[:, 4] = (flat_ran[start : start + step] & ~present).sum(axis=-1)
        block[:, 5] = residual
    return out.reshape(*array.shape[:-1], len(MOMENTS))


def impute_runs(
    runs: NDArray[np.float64],
    total: NDArray[np.float64],
    within_ss: NDArray[np.float64],
    missing: NDArray[np.float64],
    value: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Case moments with every missing run counted as ``value``: the runs, totals and sums
    of squares around the new case means (pooling the two parts' sums of squares).

    >>> impute_runs(np.array([2.0]), np.array([2.0]), np.array([0.0]), np.array([2.0]), 0.0)
    (array([4.]), array([2.]), array([1.]))
    """
    new_runs = runs + missing
    new_total = total + missing * value
    with np.errstate(invalid="ignore", divide="ignore"):
        old_mean = np.where(runs > 0, total / np.maximum(runs, 1), 0.0)
        new_mean = np.where(new_runs > 0, new_total / np.maximum(new_runs, 1), 0.0)
    within = within_ss + runs * (old_mean - new_mean) ** 2 + missing * (value - new_mean) ** 2
    return new_runs, new_total, within


def case_table(
    runs: NDArray[np.float64],
    total: NDArray[np.float64],
    within_ss: NDArray[np.float64],
    missing: NDArray[np.float64],
    codes: NDArray[np.intp] | None = None,
    *,
    residual: NDArray[np.float64] | None = None,
    name: Hashable | None = None,
) -> tuple[ClusterTable, NDArray[np.intp]]:
    """Per-cluster statistics of the runs, from per-case moments, before a missing-data
    policy; and the codes of the clusters kept (those with at least one run).

    Each case is its own cluster when ``codes`` is None (its code is its position);
    otherwise ``codes`` gives each case's cluster. ``residual`` (the moment of that name)
    makes each case mean exact, ``total / runs + residual / runs``: without it the case means
    are the rounded ``total / runs``, which for scores far from zero (1e9 and up) loses
    digits. The sums are centred on the first answered case's mean. ``name`` names
    the outcome in an ``InvalidOutcomeError`` (deviations too large or too small for float64
    sums of squares, see :func:`~clusterstats.core.grouping.check_magnitude`).

    Examples
    --------
    >>> m = case_moments([[1.0, np.nan], [1.0, 1.0], [0.0, 0.0]], ran=[[1, 1], [1, 1], [1, 1]])
    >>> t, ids = case_table(m[:, 0], m[:, 1], m[:, 2], m[:, 4], codes=np.array([0, 0, 1]))
    >>> t.rows, t.answered, t.complete_case().means, ids
    (array([4., 2.]), array([3., 2.]), array([1., 0.]), array([0, 1]))
    """
    # Ten million cases make every temporary here 80 MB: none is made that is not needed,
    # and the arithmetic runs in place.
    any_missing = bool(missing.any())
    cells = runs + missing if any_missing else runs
    has_cells = cells > 0
    position = np.arange(runs.shape[0], dtype=np.intp) if codes is None else codes
    if not has_cells.all():
        runs, total, within_ss = runs[has_cells], total[has_cells], within_ss[has_cells]
        missing, cells, position = missing[has_cells], cells[has_cells], position[has_cells]
        residual = None if residual is None else residual[has_cells]
        if not any_missing:
            cells = runs
    del has_cells
    if runs.size == 0:
        empty = np.zeros(0)
        return ClusterTable(empty, empty, empty, empty, 0.0), np.zeros(0, dtype=np.intp)
    answered_cases = runs > 0
    first = int(np.argmax(answered_cases))
    offset = np.maximum(runs, 1.0)
    np.divide(total, offset, out=offset)
    shift = _first_mean(offset, runs, residual, first) if answered_cases[first] else 0.0
    offset[~answered_cases] = shift
    offset -= shift
    if residual is not None:
        _add_residual_means(offset, residual, runs, answered_cases)
    del answered_cases
    totals = runs * offset
    squares = offset  # reused: (runs * offset) * offset + within_ss
    with np.errstate(over="ignore", invalid="ignore"):  # reported by the check below
        squares *= totals
        squares += within_ss
    del offset
    check_sums(runs, totals, squares, name=name)
    if codes is None:
        # Own copies, not views into the caller's (case, moment) array: the table outlives
        # that array, which is several times its size.
        answered = np.array(runs, dtype=np.float64)
        rows = answered if not any_missing else cells  # runs + missing: already its own
        return ClusterTable(rows, answered, totals, squares, shift), position
    n_clusters = int(position.max()) + 1
    answered = np.bincount(position, weights=runs, minlength=n_clusters)
    rows = (
        answered if not any_missing else np.bincount(position, weights=cells, minlength=n_clusters)
    )
    table = ClusterTable(
        rows,
        answered,
        np.bincount(position, weights=totals, minlength=n_clusters),
        np.bincount(position, weights=squares, minlength=n_clusters),
        shift,
    )
    ids = np.flatnonzero(rows > 0).astype(np.intp)
    return (table if ids.size == n_clusters else table.subset(ids)), ids


def _first_mean(
    rounded: NDArray[np.float64],
    runs: NDArray[np.float64],
    residual: NDArray[np.float64] | None,
    first: int,
) -> float:
    """The shift: the mean of case ``first``, with its residual when there is one (then the
    runs of cases whose outcomes all equal it are centred to exact zeros)."""
    mean = float(rounded[first])
    if residual is None:
        return mean
    return mean + float(residual[first]) / float(runs[first])


def _add_residual_means(
    offset: NDArray[np.float64],
    residual: NDArray[np.float64],
    runs: NDArray[np.float64],
    answered: NDArray[np.bool_] | None = None,
) -> None:
    """``offset += residual / runs`` in place, over the cases that have runs."""
    correction = residual / np.maximum(runs, 1.0)
    if answered is not None:
        correction[~answered] = 0.0
    offset += correction


def case_sums(
    runs: NDArray[np.float64],
    total: NDArray[np.float64],
    within_ss: NDArray[np.float64],
    codes: NDArray[np.intp] | None = None,
    *,
    residual: NDArray[np.float64] | None = None,
    name: Hashable | None = None,
) -> ClusterSums:
    """Per-cluster sums of the runs, from per-case moments (cases with no run are skipped).

    Each case is its own cluster when ``codes`` is None; otherwise ``codes`` gives each case's
    cluster. The sums are centred on the first case's mean, as :func:`cluster_sums` centres
    on an observed value; ``residual`` and ``name`` are as in :func:`case_table`.

    Examples
    --------
    >>> m = case_moments([[1.0, 0.0], [1.0, 1.0], [0.0, 0.0]])
    >>> s = case_sums(m[:, 0], m[:, 1], m[:, 2], codes=np.array([0, 0, 1]))
    >>> s.counts, s.means
    (array([4., 2.]), array([0.75, 0.  ]))
    """
    has_runs = runs > 0
    if not has_runs.all():
        runs, total, within_ss = runs[has_runs], total[has_runs], within_ss[has_runs]
        codes = None if codes is None else codes[has_runs]
        residual = None if residual is None else residual[has_runs]
    if runs.size == 0:
        return ClusterSums(np.zeros(0), np.zeros(0), np.zeros(0), 0.0)
    # In place, one temporary at a time: with millions of cases these arrays dominate memory.
    offset = total / runs
    shift = _first_mean(offset, runs, residual, 0)
    offset -= shift
    if residual is not None:
        _add_residual_means(offset, residual, runs)
    totals = runs * offset
    with np.errstate(over="ignore", invalid="ignore"):  # reported by the check below
        squares = np.multiply(totals, offset)
        squares += within_ss
    del offset
    check_sums(runs, totals, squares, name=name)
    if codes is None:
        return ClusterSums(counts=runs, totals=totals, squares=squares, shift=shift)
    n_clusters = int(codes.max()) + 1
    counts = np.bincount(codes, weights=runs, minlength=n_clusters)
    sums = ClusterSums(
        counts=counts,
        totals=np.bincount(codes, weights=totals, minlength=n_clusters),
        squares=np.bincount(codes, weights=squares, minlength=n_clusters),
        shift=shift,
    )
    occupied = counts > 0
    return sums if occupied.all() else sums.subset(occupied)


def _falling_ratio(top: NDArray[np.float64], n: NDArray[np.float64], k: int) -> NDArray:
    """``C(top, k) / C(n, k)`` as the product of ``(top - j) / (n - j)`` for ``j < k``: exact
    to rounding, and 0 when ``top < k``."""
    ratio = np.ones(np.shape(n))
    for j in range(k):
        ratio *= np.clip(top - j, 0.0, None) / (n - j)
    return ratio


def pass_at_k(runs: ArrayLike, passes: ArrayLike, k: int) -> NDArray[np.float64]:
    """Per case, the unbiased pass@k of Chen et al. (2021): ``1 - C(n-c, k) / C(n, k)``,
    the chance that at least one of ``k`` runs drawn without replacement passes.

    Needs ``n >= k`` runs. Examples (six cases; the values follow from the closed form):

    >>> n = np.array([10, 10, 10, 10, 10, 5]); c = np.array([0, 1, 3, 7, 10, 2])
    >>> round(float(pass_at_k(n, c, 2).mean()), 5), round(float(pass_at_k(n, c, 5).mean()), 5)
    (0.56111, 0.73611)
    """
    n, c = np.asarray(runs, dtype=np.float64), np.asarray(passes, dtype=np.float64)
    return 1.0 - _falling_ratio(n - c, n, int(k))


def pass_hat_k(runs: ArrayLike, passes: ArrayLike, k: int) -> NDArray[np.float64]:
    """Per case, the unbiased pass^k of Yao et al. (2024, τ-bench): ``C(c, k) / C(n, k)``,
    the chance that ``k`` runs drawn without replacement all pass.

    >>> n = np.array([10, 10, 10, 10, 10, 5]); c = np.array([0, 1, 3, 7, 10, 2])
    >>> round(float(pass_hat_k(n, c, 2).mean()), 5)
    0.27222
    """
    n, c = np.asarray(runs, dtype=np.float64), np.asarray(passes, dtype=np.float64)
    return _falling_ratio(c, n, int(k))


def pass_k_variance(n: int, k: int, p: float, *, kind: str = "pass^k") -> float:
    """Variance of one case's unbiased pass^k (or pass@k) over the draw of its ``n`` runs,
    when each run passes with probability ``p``: the U-statistic variance
    ``sum_j C(k,j) C(n-k,k-j) / C(n,k) * (p^(2k-j) - p^(2k))`` (``1 - p`` for pass@k).

    This is the attempt-sampling noise with the case held fixed; across cases it is part of
    the spread that the case-clustered interval already measures.

    >>> round(pass_k_variance(10, 3, 0.4), 6), round(pass_k_variance(10, 3, 0.4, kind="pass@k"), 6)
    (0.007488, 0.032256)
    """
    comb = special.comb
    if kind not in ("pass^k", "pass@k"):
        raise ValueError(f"kind must be 'pass^k' or 'pass@k', got {kind!r}")
    q = p if kind == "pass^k" else 1.0 - p
    total = 0.0
    for j in range(1, k + 1):
        weight = comb(k, j, exact=True) * comb(n - k, k - j, exact=True) / comb(n, k, exact=True)
        total += weight * (q ** (2 * k - j) - q ** (2 * k))
    return float(total)


class FlakySummary(NamedTuple):
    disagreement: NDArray[np.float64]  # per case: share of runs against the case's majority
    flaky: NDArray[np.bool_]  # per case: 0 < passes < runs


def flaky_cases(runs: ArrayLike, passes: ArrayLike) -> FlakySummary:
    """Per case, the share of runs that disagree with the case's majority outcome
    (``min(c, n - c) / n``; 0.5 on a tie) and whether the case is flaky (``0 < c < n``).

    >>> flaky_cases(np.array([4, 4, 4]), np.array([0, 1, 2]))
    FlakySummary(disagreement=array([0.  , 0.25, 0.5 ]), flaky=array([False,  True,  True]))
    """
    n, c = np.asarray(runs, dtype=np.float64), np.asarray(passes, dtype=np.float64)
    return FlakySummary(np.minimum(c, n - c) / n, (c > 0) & (c < n))


def effective_runs(runs: float, icc: float) -> float:
    """What ``m`` runs of one case are worth as independent runs: ``m / (1 + (m − 1) ρ)``,
    with a negative ICC counted as 0; NaN when the ICC is undefined.

    >>> effective_runs(30, 1.0), effective_runs(4, 0.0)
    (1.0, 4.0)
    """
    if icc != icc:  # NaN: no information about how the runs relate
        return float("nan")
    rho = icc if icc > 0 else 0.0
    return runs / (1.0 + (runs - 1.0) * rho)
