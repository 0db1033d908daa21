"""Restricted beta-binomial ICC and the test-inverted Korn–Graubard interval built on it.

For binary rows in clusters, the beta-binomial model gives each cluster a success rate drawn
from a Beta distribution of mean ``mu`` and intraclass correlation ``rho``. With
``theta = rho / (1 - rho)`` the log-likelihood of cluster successes ``x_g`` of ``n_g`` is (up to
a constant)

    sum_g [ sum_{i<x_g} log(mu + i theta) + sum_{i<n_g-x_g} log(1 - mu + i theta)
            - sum_{i<n_g} log(1 + i theta) ]

(Griffiths 1973; the product form of the ratio of Beta functions, which is exact and stays
finite at ``theta = 0``, where it is the binomial likelihood). Exchanging the sums, only how
many clusters have more than ``i`` successes, failures and rows matters: the likelihood costs
``O(max n_g)`` per evaluation whatever the number of clusters.

The interval inverts a test. For each candidate mean ``mu0`` the ICC is the maximum-likelihood
one *with the mean fixed at mu0* (a restricted estimate, as in a score test), which gives the
design effect, an effective number of rows ``n0`` and an effective count ``p_hat * n0``; the
p-value is the binomial one at ``mu0`` with those fractional arguments (through the
regularised incomplete beta function, as Korn & Graubard 1998 do for their effective n), with
mid-p tails (Lancaster 1961). The interval is the connected set of ``mu0`` around ``p_hat``
whose one-sided p-values both exceed ``alpha / 2``. Because the ICC is re-estimated under each
candidate mean, a rare outcome seen in one or two clusters cannot make the interval collapse:
under a larger ``mu0`` those few successes are evidence of strong clustering.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from clusterstats.core._lazy import special
from clusterstats.core.variance import design_effect_unequal

__all__ = [
    "MAX_ICC",
    "InvertedInterval",
    "TailCounts",
    "inverted_korn_graubard",
    "restricted_icc",
    "tail_counts",
]

#: The restricted ICC is searched in ``[0, MAX_ICC]``: at 1 the model has no within-cluster
#: variation and the likelihood of any mixed cluster is zero.
MAX_ICC = 0.98
_MAX_THETA = MAX_ICC / (1.0 - MAX_ICC)
# Starting points of the search for the maximum over the ICC (the likelihood in theta need
# not be unimodal); the best one is refined by a safeguarded Newton iteration.
_RHO_GRID = np.append(
    [0.0, 0.002, 0.005, 0.01, 0.02, 0.04, 0.07, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9],
    MAX_ICC,
)
_THETA_GRID = _RHO_GRID / (1.0 - _RHO_GRID)


class TailCounts(NamedTuple):
    """How many clusters have more than ``i`` successes, failures and rows, ``i = 0, 1, ...``.

    These are the sufficient statistics of the beta-binomial likelihood in its product form.
    """

    successes: NDArray[np.float64]
    failures: NDArray[np.float64]
    rows: NDArray[np.float64]


def _more_than(values: NDArray[np.int64], length: int) -> NDArray[np.float64]:
    counts = np.bincount(values, minlength=length + 1)[: length + 1]
    return (values.shape[0] - np.cumsum(counts))[:length].astype(np.float64)


def tail_counts(successes: NDArray, counts: NDArray) -> TailCounts:
    """The :class:`TailCounts` of cluster successes ``x_g`` out of ``n_g`` rows (integers)."""
    x = np.rint(np.asarray(successes, dtype=np.float64)).astype(np.int64)
    n = np.rint(np.asarray(counts, dtype=np.float64)).astype(np.int64)
    length = int(n.max())
    return TailCounts(_more_than(x, length), _more_than(n - x, length), _more_than(n, length))


def _score(tails: TailCounts, mu: NDArray, theta: NDArray) -> tuple[NDArray, NDArray]:
    """First and second derivative of the log-likelihood in ``theta``, for vectors mu, theta."""
    i = np.arange(tails.rows.shape[0], dtype=np.float64)
    mu, theta = mu[:, None], theta[:, None]
    a = i / (mu + i * theta)
    b = i / (1.0 - mu + i * theta)
    c = i / (1.0 + i * theta)
    first = a @ tails.successes + b @ tails.failures - c @ tails.rows
    second = -(a * a) @ tails.successes - (b * b) @ tails.failures + (c * c) @ tails.rows
    return first, second


def _log_likelihood(tails: TailCounts, mu: NDArray, theta: NDArray) -> NDArray:
    """Log-likelihood for every (mu, theta) pair of the broadcast arrays ``mu``, ``theta``."""
    i = np.arange(tails.rows.shape[0], dtype=np.float64)
    mu, theta = mu[..., None], theta[..., None]
    return (
        np.log(mu + i * theta) @ tails.successes
        + np.log(1.0 - mu + i * theta) @ tails.failures
        - np.log1p(i * theta) @ tails.rows
    )


def restricted_icc(tails: TailCounts, mu: NDArray | float) -> NDArray[np.float64]:
    """The beta-binomial maximum-likelihood ICC with the mean fixed at each ``mu``.

    Searched in ``[0, MAX_ICC]``: the best of a grid of starting points, refined by Newton's
    method on ``theta = rho / (1 - rho)`` kept inside the neighbouring grid points (bisection
    when a step would leave them). Returns an array shaped like ``mu``.
    """
    # At a mean of exactly 0 or 1 the limit is taken (from inside; log(0) would be NaN).
    mu = np.clip(np.atleast_1d(np.asarray(mu, dtype=np.float64)), 1e-15, 1.0 - 1e-15)
    if tails.rows.shape[0] < 2:  # every cluster has one row: the ICC does not enter
        return np.zeros_like(mu)
    if not tails.successes.any() or not tails.failures.any():
        # All rows fail (or all pass): the score is positive for every theta, since every
        # cluster agrees with itself, so the maximum is at the largest ICC searched.
        return np.full_like(mu, MAX_ICC)
    values = _log_likelihood(tails, mu[:, None], _THETA_GRID[None, :])
    best = np.argmax(values, axis=1)
    last = _THETA_GRID.shape[0] - 1
    low = _THETA_GRID[np.maximum(best - 1, 0)]
    high = _THETA_GRID[np.minimum(best + 1, last)]
    theta = _THETA_GRID[best].copy()
    # A best grid point at an end is the maximum when the score points outside there.
    first, _ = _score(tails, mu, theta)
    settled = ((best == 0) & (first <= 0)) | ((best == last) & (first >= 0))
    for _ in range(60):
        active = ~settled
        if not active.any():
            break
        m, t, lo, hi = mu[active], theta[active], low[active], high[active]
        first, second = _score(tails, m, t)
        # Keep the bracket [lo, hi] around the maximum: the score is positive below it.
        lo = np.where(first > 0, t, lo)
        hi = np.where(first <= 0, t, hi)
        step = -first / np.where(second < 0, second, -np.inf)
        proposal = t + np.where(second < 0, step, np.inf)
        # A zero score with negative curvature is the maximum: stay (the bracket test would
        # bisect away from it, halving the bracket down to the tolerance, ~10 more steps).
        at_maximum = (first == 0) & (second < 0)
        inside = ((proposal > lo) & (proposal < hi)) | at_maximum
        moved = np.where(inside, proposal, 0.5 * (lo + hi))
        theta[active], low[active], high[active] = moved, lo, hi
        settled[active] = np.abs(moved - t) <= 1e-13 * (1.0 + t)
    theta = np.clip(theta, 0.0, _MAX_THETA)
    return theta / (1.0 + theta)


class InvertedInterval(NamedTuple):
    low: float
    high: float
    icc: float  # the restricted ICC at the estimate (the unrestricted maximum-likelihood ICC)
    n_eff: float  # the effective n at the estimate
    icc_low: float  # the restricted ICC at each bound
    icc_high: float


def _binomial_cdf(x: NDArray, n: NDArray, mu: NDArray) -> NDArray:
    """``P(Y <= x)`` for ``Y ~ Bin(n, mu)``, continuous in a fractional ``x`` and ``n``."""
    inside = (x > -1.0) & (x < n)
    value = special.betainc(np.where(inside, n - x, 1.0), np.where(inside, x + 1.0, 1.0), 1.0 - mu)
    return np.where(inside, value, np.where(x <= -1.0, 0.0, 1.0))


def inverted_korn_graubard(
    successes: NDArray,
    counts: NDArray,
    estimate: float,
    *,
    estimand: str,
    confidence: float,
    min_design_effect: float = 0.0,
    design_effect_scale: float = 1.0,
) -> InvertedInterval:
    """Test-inverted Korn–Graubard interval with the restricted beta-binomial ICC, mid-p.

    Parameters
    ----------
    successes, counts : ndarray
        Successes ``x_g`` and rows ``n_g`` per cluster.
    estimate : float
        The point estimate: the pooled share ``sum x / N`` or the mean of the cluster shares.
    estimand : {"pooled", "cluster_mean"}
        Which estimate, so that the effective n is its variance's:
        ``n0 = 1 / sum_g w_g^2 (1 + (n_g - 1) rho) / n_g`` with weights ``n_g / N`` (pooled,
        ``n0 = N / (1 + rho (sum n^2 / N - 1))``) or ``1 / G`` (cluster mean).
    confidence : float
        Nominal coverage.

    Returns
    -------
    InvertedInterval
        The bounds, and the ICC and effective n at the estimate and at each bound.

    Notes
    -----
    The mid-p weight on the point mass is 1/2, and 0.7 when every cluster has one row (the
    data are then binomial and mid-p at 1/2 covers a little below nominal for small counts;
    the heavier weight was chosen by exact enumeration, see the coverage study).
    """
    counts = np.asarray(counts, dtype=np.float64)
    tails = tail_counts(successes, counts)
    # The estimate's design effect is linear in the ICC: N / n0 = deff(0) + (deff(1) - deff(0)) rho.
    n_rows = float(counts.sum())
    at_zero = design_effect_unequal(counts, 0.0, estimand)
    base = at_zero / n_rows
    slope = (design_effect_unequal(counts, 1.0, estimand) - at_zero) / n_rows
    weight = 0.7 if slope == 0.0 else 0.5
    floor = min_design_effect / n_rows
    alpha = 1.0 - confidence
    p_hat = min(max(float(estimate), 0.0), 1.0)

    def gaps_and_iccs(mu: NDArray, side: NDArray) -> tuple[NDArray, NDArray]:
        """One-sided mid-p value minus ``alpha / 2`` at each candidate ``mu``, and the
        restricted ICC there. ``side`` +1: ``P(Y < x0) + w P(Y = x0)`` (small when ``mu`` is
        too large: the upper bound); -1: ``P(Y > x0) + w P(Y = x0)`` (small when ``mu`` is
        too small: the lower bound)."""
        rho = restricted_icc(tails, mu)
        n0 = 1.0 / (np.maximum(base + slope * rho, floor) * design_effect_scale)
        x0 = p_hat * n0
        below, at_most = _binomial_cdf(x0 - 1.0, n0, mu), _binomial_cdf(x0, n0, mu)
        lower = (1.0 - weight) * below + weight * at_most
        upper = 1.0 - (1.0 - weight) * at_most - weight * below
        return np.where(side > 0, lower, upper) - alpha / 2, rho

    def gaps(mu: NDArray, side: NDArray) -> NDArray:
        return gaps_and_iccs(mu, side)[0]

    rho_at = float(restricted_icc(tails, p_hat)[0])
    n_at = 1.0 / (max(base + slope * rho_at, floor) * design_effect_scale)
    bounds = {-1: 0.0, 1: 1.0}
    icc_at = {-1: math.nan, 1: math.nan}
    brackets = _first_crossings(gaps, p_hat, n_at)
    for _ in range(_REFINEMENTS):
        if not brackets:
            break
        sides = list(brackets)
        grids = [np.linspace(*brackets[d][:2], _POINTS + 2)[1:-1] for d in sides]
        values = gaps(np.concatenate(grids), np.repeat(np.array(sides, float), _POINTS))
        for k, d in enumerate(sides):
            brackets[d] = _narrow(brackets[d], grids[k], values[k * _POINTS : (k + 1) * _POINTS])
    if brackets:
        # Regula falsi on each narrow bracket (the p-value is smooth there), both sides in one
        # evaluation, then once more on the side of the bracket that holds the root.
        sides = list(brackets)
        guesses = np.array([_falsi(*brackets[d]) for d in sides])
        values, rho_guess = gaps_and_iccs(guesses, np.array(sides, float))
        for k, d in enumerate(sides):
            inner, outer, g_inner, g_outer = brackets[d]
            if values[k] > 0:
                inner, g_inner = float(guesses[k]), float(values[k])
            else:
                outer, g_outer = float(guesses[k]), float(values[k])
            bounds[d] = _falsi(inner, outer, g_inner, g_outer)
            icc_at[d] = float(rho_guess[k])  # within the last bracket of the bound
    low, high = bounds[-1], bounds[1]
    icc_low, icc_high = icc_at[-1], icc_at[1]
    return InvertedInterval(low, high, rho_at, n_at, icc_low, icc_high)


# Each refinement evaluates _POINTS candidates inside the bracket of each bound in one
# vectorised call, shrinking it _POINTS + 1 times; regula falsi then finishes the root.
_REFINEMENTS = 3
_POINTS = 15
_STEPS = np.concatenate(
    [[0.125, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 6.0], 8.0 * 2.0 ** np.arange(0, 50)]
)


def _first_crossings(gaps, p_hat: float, n_at: float) -> dict[int, list[float]]:
    """Scan outwards from the estimate, on both sides at once, for the first candidate that
    the test rejects; ``{side: [inner, outer, gap(inner), gap(outer)]}`` for each side where
    one is found before the end of [0, 1] (sides at an end of [0, 1] are left out)."""
    # A scale for the scan: twice the normal half-width on the effective n at the estimate.
    scale = max(2.0 * math.sqrt(p_hat * (1.0 - p_hat) / n_at), 1.0 / n_at)
    points, sides = [], []
    for d, end in ((-1, 0.0), (1, 1.0)):
        room = abs(end - p_hat)
        if room == 0.0:
            continue
        steps = scale * _STEPS
        near_end = end - d * 1e-12 * room
        points.append(np.concatenate([[p_hat], p_hat + d * steps[steps < room], [near_end]]))
        sides.append(d)
    if not sides:
        return {}
    values = gaps(
        np.concatenate(points),
        np.concatenate([np.full(p.shape, float(d)) for p, d in zip(points, sides, strict=True)]),
    )
    found, offset = {}, 0
    for p, d in zip(points, sides, strict=True):
        v = values[offset : offset + p.shape[0]]
        offset += p.shape[0]
        crossed = np.flatnonzero(v <= 0)
        if crossed.size and crossed[0] > 0:
            k = int(crossed[0])
            found[d] = [float(p[k - 1]), float(p[k]), float(v[k - 1]), float(v[k])]
        elif crossed.size:  # rejected at the estimate itself (cannot happen with mid-p tails)
            found[d] = [p_hat, p_hat, 0.0, -1.0]
    return found


def _narrow(bracket: list[float], grid: NDArray, values: NDArray) -> list[float]:
    """The sub-bracket of ``bracket`` that holds the first rejected candidate of ``grid``."""
    inner, outer, g_inner, g_outer = bracket
    crossed = np.flatnonzero(values <= 0)
    k = int(crossed[0]) if crossed.size else grid.shape[0]
    if k > 0:
        inner, g_inner = float(grid[k - 1]), float(values[k - 1])
    if k < grid.shape[0]:
        outer, g_outer = float(grid[k]), float(values[k])
    return [inner, outer, g_inner, g_outer]


def _falsi(inner: float, outer: float, g_inner: float, g_outer: float) -> float:
    """Where the line through ``(inner, g_inner)`` and ``(outer, g_outer)`` crosses zero."""
    if not g_inner > g_outer:
        return outer
    return inner + (outer - inner) * g_inner / (g_inner - g_outer)
