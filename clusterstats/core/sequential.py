"""Anytime-valid confidence sequences over completed clusters, by betting.

The unit of the sequence is the cluster: clusters are independent draws from a population of
clusters, so a bet placed on each completed cluster's sum is a fair game under the null
whatever the dependence inside a cluster, and the wealth of a gambler who bets against a
candidate mean ``m`` is a nonnegative martingale when ``m`` is the truth. Ville's inequality
then bounds, over all looks at once, the chance that the wealth ever reaches ``1/alpha``: the
candidates whose wealth stays below it form a confidence sequence (Howard, Ramdas, McAuliffe
& Sekhon 2021; Waudby-Smith & Ramdas 2024).

The bets are Waudby-Smith & Ramdas's hedged capital with predictable plug-in bets
(their "PrPl-EB" choice): for outcomes rescaled to [0, 1], the bet after ``t - 1`` clusters
is ``sqrt(2 log(2/alpha) / (sigma2 t log(1 + t)))`` truncated at ``c/m`` (``c/(1 - m)`` for the
negative side), with ``sigma2`` a running variance regularised by a prior of 1/4. Candidates
are a grid of ``breaks + 1`` points on [0, 1]; each bound is the outermost accepted point
moved out by one grid step, as in the authors' reference implementation.

Two estimands, one martingale. Each cluster gives ``x_g`` and ``u_g`` with ``E[x_g - m u_g] =
0`` exactly when ``m`` is the estimand:

* the mean of cluster means: ``x_g = S_g / n_g`` and ``u_g = 1`` (the bounded mean of i.i.d.
  cluster means, Waudby-Smith & Ramdas's setting exactly);
* the pooled mean of all rows, ``E[S] / E[n]``: ``x_g = S_g / B`` and ``u_g = n_g / B`` with ``B``
  a bound on the cluster sizes, so that ``x_g - m u_g`` lies in ``[-m, 1 - m]`` and the same
  truncation keeps every factor of the wealth positive.

Everything here works on per-cluster sums in arrival order; the wealth of every candidate is
carried from one block of clusters to the next, so the trajectory costs O(breaks) per cluster
and its memory is bounded by the block.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "SequenceTrajectory",
    "betting_sequence",
    "predictable_bets",
    "projected_clusters",
]

# Grid cells per block of clusters: temporaries of a few MB, whatever the number of clusters.
_BLOCK_CELLS = 1 << 19


class SequenceTrajectory(NamedTuple):
    """One row per completed cluster: the sequence after it."""

    n_clusters: NDArray[np.int64]
    n_rows: NDArray[np.float64]
    estimate: NDArray[np.float64]
    low: NDArray[np.float64]
    high: NDArray[np.float64]


def predictable_bets(
    x: NDArray[np.float64],
    u: NDArray[np.float64],
    *,
    alpha: float,
    prior_mean: float = 0.5,
    prior_variance: float = 0.25,
) -> NDArray[np.float64]:
    """The bet placed on each cluster from the clusters before it (Waudby-Smith & Ramdas
    2024, eq. 26, with the regularised running mean and variance of their section 5.1).

    ``alpha`` is the level of one side of the hedge. With ``u = 1`` these are the authors'
    ``lambda_predmix_eb(x, alpha=alpha)``; with sizes, the running mean is the ratio of the
    sums and the residuals are ``x - mean * u``.

    >>> predictable_bets(np.array([1.0, 0.0]), np.ones(2), alpha=0.025).round(4).tolist()
    [6.525, 4.6357]
    """
    t = np.arange(1, x.shape[0] + 1, dtype=float)
    mean = np.minimum((prior_mean + np.cumsum(x)) / (1.0 + np.cumsum(u)), 1.0)
    residual = x - mean * u
    variance = (prior_variance + np.cumsum(residual * residual)) / (t + 1.0)
    before = np.concatenate(([prior_variance], variance[:-1]))
    with np.errstate(divide="ignore", invalid="ignore"):
        bets = np.sqrt(2.0 * math.log(1.0 / alpha) / (t * np.log1p(t) * before))
    return np.nan_to_num(bets, nan=0.0)


def betting_sequence(
    totals: ArrayLike,
    counts: ArrayLike,
    *,
    estimand: str,
    confidence: float = 0.95,
    bounds: tuple[float, float] = (0.0, 1.0),
    max_cluster_size: float | None = None,
    breaks: int = 1000,
    truncation: float = 0.5,
    running_intersection: bool = True,
) -> SequenceTrajectory:
    """The confidence sequence after each completed cluster, in the order given.

    Parameters
    ----------
    totals, counts : array_like
        Each cluster's sum of outcomes and number of rows, in order of arrival.
    estimand : {"pooled", "cluster_mean"}
        The mean of all rows (a ratio of expected sums) or the mean of cluster means.
    confidence : float
        ``1 - alpha``: the chance that every interval of the whole sequence holds the truth.
    bounds : (float, float)
        Every outcome lies in ``[bounds[0], bounds[1]]`` (known before the data).
    max_cluster_size : float, optional
        For ``"pooled"``: a bound ``B`` on the cluster sizes, known before the data (default:
        the largest size among ``counts``).
    breaks : int
        Candidate means on a grid of ``breaks + 1`` points.
    truncation : float
        ``c`` in the truncation of the bets at ``c/m`` and ``c/(1 - m)``.
    running_intersection : bool
        Intersect each interval with all earlier ones (still a confidence sequence, and the
        bounds then never move back).

    Returns
    -------
    SequenceTrajectory

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> counts = rng.integers(1, 10, size=200).astype(float)
    >>> totals = rng.binomial(counts.astype(int), 0.7).astype(float)
    >>> seq = betting_sequence(totals, counts, estimand="pooled")
    >>> bool(seq.low[-1] < 0.7 < seq.high[-1]), bool(np.all(np.diff(seq.low) >= 0))
    (True, True)
    """
    sums = np.asarray(totals, dtype=float)
    sizes = np.asarray(counts, dtype=float)
    if sums.ndim != 1 or sums.shape != sizes.shape or sums.size == 0:
        raise ValueError("totals and counts must be two 1-d arrays of the same positive length")
    lower, upper = float(bounds[0]), float(bounds[1])
    if not upper > lower:
        raise ValueError(f"bounds must be increasing, got {bounds!r}")
    alpha = 1.0 - confidence
    scaled = (sums - lower * sizes) / (upper - lower)
    if estimand == "cluster_mean":
        x, u = scaled / sizes, np.ones_like(sizes)
    elif estimand == "pooled":
        bound = float(sizes.max() if max_cluster_size is None else max_cluster_size)
        if sizes.max() > bound:
            raise ValueError(f"a cluster has {sizes.max():g} rows, above the bound {bound:g}")
        x, u = scaled / bound, sizes / bound
    else:
        raise ValueError(f"unknown estimand {estimand!r}")
    # the hedge splits alpha between the two sides (theta = 1/2)
    bets = predictable_bets(x, u, alpha=alpha / 2)
    grid = np.linspace(0.0, 1.0, breaks + 1)
    with np.errstate(divide="ignore"):
        cap_up = np.where(grid > 0, truncation / grid, np.inf)
        cap_down = np.where(grid < 1, truncation / (1.0 - grid), np.inf)
    threshold = math.log(1.0 / alpha)
    n = sums.shape[0]
    low = np.empty(n)
    high = np.empty(n)
    wealth_up = np.zeros(grid.shape[0])  # log wealth of each candidate, carried on
    wealth_down = np.zeros(grid.shape[0])
    block = max(1, _BLOCK_CELLS // grid.shape[0])
    for start in range(0, n, block):
        stop = min(n, start + block)
        lam = bets[start:stop, None]
        step = x[start:stop, None] - grid[None, :] * u[start:stop, None]
        up = np.cumsum(np.log1p(np.minimum(lam, cap_up) * step), axis=0) + wealth_up
        down = np.cumsum(np.log1p(-np.minimum(lam, cap_down) * step), axis=0) + wealth_down
        wealth_up, wealth_down = up[-1], down[-1]
        hedged = np.maximum(up, down) + math.log(0.5)
        kept = hedged <= threshold
        some = kept.any(axis=1)
        first = np.argmax(kept, axis=1)
        last = grid.shape[0] - 1 - np.argmax(kept[:, ::-1], axis=1)
        step_size = 1.0 / breaks
        low[start:stop] = np.where(some, np.maximum(grid[first] - step_size, 0.0), 0.0)
        high[start:stop] = np.where(some, np.minimum(grid[last] + step_size, 1.0), 1.0)
    if running_intersection:
        low = np.maximum.accumulate(low)
        high = np.minimum.accumulate(high)
    rows = np.cumsum(sizes)
    if estimand == "pooled":
        estimate = np.cumsum(sums) / rows
    else:
        estimate = np.cumsum(sums / sizes) / np.arange(1, n + 1)
    return SequenceTrajectory(
        n_clusters=np.arange(1, n + 1),
        n_rows=rows,
        estimate=estimate,
        low=lower + (upper - lower) * low,
        high=lower + (upper - lower) * high,
    )


def projected_clusters(half_width: float, distance: float, n_clusters: float) -> float:
    """The completed clusters at which a sequence of ``half_width`` after ``n_clusters``
    would be narrower than ``distance``, its half-width scaled as the bets' scale
    ``sqrt(log(1 + t) / t)``: ``n_clusters`` when it already is, ``inf`` when ``distance``
    is 0 (or the answer is beyond 10^9).

    >>> projected_clusters(0.2, 0.1, 20) > 20
    True
    """
    t = float(n_clusters)
    if distance == 0 or not math.isfinite(half_width):
        return math.inf
    if half_width <= distance:
        return t

    shape = half_width / math.sqrt(math.log1p(t) / t)

    def half(at: float) -> float:
        return shape * math.sqrt(math.log1p(at) / at)

    needed = t
    while half(needed) > distance:  # bracket the crossing, then bisect it
        needed *= 1.25
        if needed > 1e9:
            return math.inf
    low, high = needed / 1.25, needed
    for _ in range(60):
        middle = (low + high) / 2
        if half(middle) > distance:
            low = middle
        else:
            high = middle
    return float(math.ceil(high))
