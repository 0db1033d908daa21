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
    "BettingState",
    "SequenceTrajectory",
    "betting_sequence",
    "predictable_bets",
    "projected_clusters",
]

# Grid cells per block of clusters: temporaries of a few MB, whatever the number of clusters.
_BLOCK_CELLS = 1 << 19


class SequenceTrajectory(NamedTuple):
    """One row per completed cluster: the sequence after it.

    ``empty`` marks the looks at which no candidate mean survives (with the running
    intersection: from the first such look on). A valid sequence is empty with probability at
    most ``alpha``, so an empty one is evidence against its own assumptions; its ``low`` and
    ``high`` are NaN there.
    """

    n_clusters: NDArray[np.int64]
    n_rows: NDArray[np.float64]
    estimate: NDArray[np.float64]
    low: NDArray[np.float64]
    high: NDArray[np.float64]
    empty: NDArray[np.bool_]


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
    state = _BetState(prior_mean=prior_mean, prior_variance=prior_variance)
    return state.bets(np.asarray(x, dtype=float), np.asarray(u, dtype=float), alpha=alpha)


class _BetState:
    """The running sums the predictable bets read, carried from one block to the next."""

    def __init__(self, *, prior_mean: float = 0.5, prior_variance: float = 0.25) -> None:
        self.prior_mean = prior_mean
        self.prior_variance = prior_variance
        self.t = 0
        self.sum_x = 0.0
        self.sum_u = 0.0
        self.sum_squares = 0.0

    def bets(self, x: NDArray[np.float64], u: NDArray[np.float64], *, alpha: float) -> NDArray:
        """The bets on the clusters ``x, u`` that follow those already seen; the sums move on."""
        t = self.t + np.arange(1, x.shape[0] + 1, dtype=float)
        mean = np.minimum(
            (self.prior_mean + self.sum_x + np.cumsum(x)) / (1.0 + self.sum_u + np.cumsum(u)), 1.0
        )
        residual = x - mean * u
        squares = self.sum_squares + np.cumsum(residual * residual)
        variance = (self.prior_variance + squares) / (t + 1.0)
        previous = (self.prior_variance + self.sum_squares) / (self.t + 1.0)
        before = np.concatenate(([previous], variance[:-1]))
        with np.errstate(divide="ignore", invalid="ignore"):
            bets = np.sqrt(2.0 * math.log(1.0 / alpha) / (t * np.log1p(t) * before))
        if x.shape[0]:
            self.t += x.shape[0]
            self.sum_x += float(x.sum())
            self.sum_u += float(u.sum())
            self.sum_squares = float(squares[-1])
        return np.nan_to_num(bets, nan=0.0)


class BettingState:
    """The hedged-capital sequence as a state that takes completed clusters as they come.

    Each call of :meth:`add` costs O(``breaks``) per cluster, whatever the number already
    seen, so a run watched after every cluster costs no more than one pass over it.
    ``betting_sequence`` is this state fed all clusters at once.

    Parameters
    ----------
    estimand : {"pooled", "cluster_mean"}
        As in :func:`betting_sequence`.
    confidence : float
        ``1 - alpha``.
    bounds : (float, float)
        The range every outcome lies in, known before the data.
    max_cluster_size : float, optional
        For ``"pooled"``: the bound ``B`` on the cluster sizes, fixed before the first
        cluster (required: a bound read from later clusters would change earlier bets).
    breaks, truncation, running_intersection
        As in :func:`betting_sequence`.

    Examples
    --------
    >>> state = BettingState(estimand="cluster_mean")
    >>> first = state.add([3.0, 4.0], [5.0, 5.0])
    >>> later = state.add([5.0], [5.0])
    >>> state.n_clusters, bool(later.low[-1] <= 0.8 <= later.high[-1])
    (3, True)
    """

    def __init__(
        self,
        *,
        estimand: str,
        confidence: float = 0.95,
        bounds: tuple[float, float] = (0.0, 1.0),
        max_cluster_size: float | None = None,
        breaks: int = 1000,
        truncation: float = 0.5,
        running_intersection: bool = True,
    ) -> None:
        if estimand not in ("pooled", "cluster_mean"):
            raise ValueError(f"unknown estimand {estimand!r}")
        lower, upper = float(bounds[0]), float(bounds[1])
        if not upper > lower:
            raise ValueError(f"bounds must be increasing, got {bounds!r}")
        if estimand == "pooled" and max_cluster_size is None:
            raise ValueError("the pooled estimand needs max_cluster_size, fixed in advance")
        self.estimand = estimand
        self.alpha = 1.0 - confidence
        self.lower, self.upper = lower, upper
        self.bound = None if max_cluster_size is None else float(max_cluster_size)
        self.breaks = breaks
        self.running_intersection = running_intersection
        self.grid = np.linspace(0.0, 1.0, breaks + 1)
        with np.errstate(divide="ignore"):
            self._cap_up = np.where(self.grid > 0, truncation / self.grid, np.inf)
            self._cap_down = np.where(self.grid < 1, truncation / (1.0 - self.grid), np.inf)
        self._wealth_up = np.zeros(self.grid.shape[0])  # log wealth of each candidate
        self._wealth_down = np.zeros(self.grid.shape[0])
        self._bets = _BetState()
        self._low, self._high, self._empty = 0.0, 1.0, False
        self.n_clusters = 0
        self.n_rows = 0.0
        self._sum_totals = 0.0
        self._sum_means = 0.0

    def add(self, totals: ArrayLike, counts: ArrayLike) -> SequenceTrajectory:
        """Take the next completed clusters (their sums and sizes, in order of arrival, as two
        arrays, or one cluster as two numbers) and return the sequence after each of them."""
        if np.ndim(totals) == 0 and np.ndim(counts) == 0:
            return self._add_one(float(totals), float(counts))  # type: ignore[arg-type]
        sums = np.atleast_1d(np.asarray(totals, dtype=float))
        sizes = np.atleast_1d(np.asarray(counts, dtype=float))
        if sums.ndim != 1 or sums.shape != sizes.shape:
            raise ValueError("totals and counts must be two 1-d arrays of the same length")
        if np.any(sizes <= 0):
            raise ValueError("every cluster has at least one row")
        pooled = self.bound is not None and self.estimand == "pooled"
        if pooled and sizes.size and sizes.max() > self.bound:
            raise ValueError(f"a cluster has {sizes.max():g} rows, above the bound {self.bound:g}")
        scaled = (sums - self.lower * sizes) / (self.upper - self.lower)
        if self.estimand == "cluster_mean":
            x, u = scaled / sizes, np.ones_like(sizes)
        else:
            assert self.bound is not None
            x, u = scaled / self.bound, sizes / self.bound
        n = sums.shape[0]
        low = np.empty(n)
        high = np.empty(n)
        empty = np.zeros(n, dtype=bool)
        # the hedge splits alpha between the two sides (theta = 1/2)
        bets = self._bets.bets(x, u, alpha=self.alpha / 2)
        threshold = math.log(1.0 / self.alpha)
        width = self.grid.shape[0]
        block = max(1, _BLOCK_CELLS // width)
        step_size = 1.0 / self.breaks
        for start in range(0, n, block):
            stop = min(n, start + block)
            lam = bets[start:stop, None]
            step = x[start:stop, None] - self.grid[None, :] * u[start:stop, None]
            up = np.cumsum(np.log1p(np.minimum(lam, self._cap_up) * step), axis=0)
            down = np.cumsum(np.log1p(-np.minimum(lam, self._cap_down) * step), axis=0)
            up += self._wealth_up
            down += self._wealth_down
            self._wealth_up, self._wealth_down = up[-1], down[-1]
            kept = np.maximum(up, down) + math.log(0.5) <= threshold
            some = kept.any(axis=1)
            first = np.argmax(kept, axis=1)
            last = width - 1 - np.argmax(kept[:, ::-1], axis=1)
            low[start:stop] = np.where(some, np.maximum(self.grid[first] - step_size, 0.0), 1.0)
            high[start:stop] = np.where(some, np.minimum(self.grid[last] + step_size, 1.0), 0.0)
            empty[start:stop] = ~some
        if self.running_intersection:
            low = np.maximum.accumulate(np.concatenate(([self._low], low)))[1:]
            high = np.minimum.accumulate(np.concatenate(([self._high], high)))[1:]
            empty = np.logical_or.accumulate(np.concatenate(([self._empty], empty)))[1:]
            empty |= low > high
            if n:
                self._low, self._high, self._empty = (
                    float(low[-1]),
                    float(high[-1]),
                    bool(empty[-1]),
                )
        low = np.where(empty, np.nan, self.lower + (self.upper - self.lower) * low)
        high = np.where(empty, np.nan, self.lower + (self.upper - self.lower) * high)
        rows = self.n_rows + np.cumsum(sizes)
        clusters = self.n_clusters + np.arange(1, n + 1)
        if self.estimand == "pooled":
            estimate = (self._sum_totals + np.cumsum(sums)) / rows
        else:
            estimate = (self._sum_means + np.cumsum(sums / sizes)) / clusters
        if n:
            self.n_clusters = int(clusters[-1])
            self.n_rows = float(rows[-1])
            self._sum_totals += float(sums.sum())
            self._sum_means += float((sums / sizes).sum())
        return SequenceTrajectory(
            n_clusters=clusters, n_rows=rows, estimate=estimate, low=low, high=high, empty=empty
        )

    def _add_one(self, total: float, size: float) -> SequenceTrajectory:
        """:meth:`add` for one cluster given as two numbers: the same arithmetic on scalars,
        so that a look after every cluster costs a few operations on the grid."""
        if not size > 0:
            raise ValueError("every cluster has at least one row")
        if self.estimand == "pooled" and size > self.bound:  # type: ignore[operator]
            raise ValueError(f"a cluster has {size:g} rows, above the bound {self.bound:g}")
        scaled = (total - self.lower * size) / (self.upper - self.lower)
        if self.estimand == "cluster_mean":
            x, u = scaled / size, 1.0
        else:
            x, u = scaled / self.bound, size / self.bound  # type: ignore[operator]
        bets = self._bets
        t = bets.t + 1.0
        previous = (bets.prior_variance + bets.sum_squares) / (bets.t + 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = math.sqrt(2.0 * math.log(2.0 / self.alpha) / (t * math.log1p(t) * previous))
        mean = min((bets.prior_mean + bets.sum_x + x) / (1.0 + bets.sum_u + u), 1.0)
        residual = x - mean * u
        bets.t += 1
        bets.sum_x += x
        bets.sum_u += u
        bets.sum_squares += residual * residual
        step = x - self.grid * u
        self._wealth_up = self._wealth_up + np.log1p(np.minimum(lam, self._cap_up) * step)
        self._wealth_down = self._wealth_down + np.log1p(-np.minimum(lam, self._cap_down) * step)
        kept = np.maximum(self._wealth_up, self._wealth_down) <= math.log(2.0 / self.alpha)
        if kept.any():
            low = max(float(self.grid[np.argmax(kept)]) - 1.0 / self.breaks, 0.0)
            high = min(
                float(self.grid[len(kept) - 1 - np.argmax(kept[::-1])]) + 1.0 / self.breaks, 1.0
            )
            empty = False
        else:
            low, high, empty = 1.0, 0.0, True
        if self.running_intersection:
            low, high = max(low, self._low), min(high, self._high)
            empty = empty or self._empty or low > high
            self._low, self._high, self._empty = low, high, empty
        span = self.upper - self.lower
        self.n_clusters += 1
        self.n_rows += size
        self._sum_totals += total
        self._sum_means += total / size
        estimate = (
            self._sum_totals / self.n_rows
            if self.estimand == "pooled"
            else self._sum_means / self.n_clusters
        )
        return SequenceTrajectory(
            n_clusters=np.array([self.n_clusters]),
            n_rows=np.array([self.n_rows]),
            estimate=np.array([estimate]),
            low=np.array([math.nan if empty else self.lower + span * low]),
            high=np.array([math.nan if empty else self.lower + span * high]),
            empty=np.array([empty]),
        )


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
        the largest size among ``counts``, which suits a finished run looked at afterwards).
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
    if estimand == "pooled" and max_cluster_size is None:
        max_cluster_size = float(sizes.max())
    state = BettingState(
        estimand=estimand,
        confidence=confidence,
        bounds=bounds,
        max_cluster_size=max_cluster_size,
        breaks=breaks,
        truncation=truncation,
        running_intersection=running_intersection,
    )
    return state.add(sums, sizes)


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
