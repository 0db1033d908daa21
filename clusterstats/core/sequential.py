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
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "PREDICTABLE",
    "SEQUENCE_METHODS",
    "BettingState",
    "SequenceMethod",
    "SequenceTrajectory",
    "betting_bounds",
    "betting_sequence",
    "decision_looks",
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
    t = np.arange(1, x.shape[0] + 1, dtype=float)
    mean = np.minimum((prior_mean + np.cumsum(x)) / (1.0 + np.cumsum(u)), 1.0)
    residual = x - mean * u
    variance = (prior_variance + np.cumsum(residual * residual)) / (t + 1.0)
    before = np.concatenate(([prior_variance], variance[:-1]))
    return _bets(before, t, PREDICTABLE, 2.0 * alpha)


#: The bet schedule of Waudby-Smith & Ramdas's predictable plug-in bets (PrPl-EB).
PREDICTABLE = "predictable"


class SequenceMethod(NamedTuple):
    """How a sequence bets: its schedules (mixed when several) and the truncation ``c``."""

    schedules: tuple[str | float, ...]
    truncation: float


#: The sequences by name. Both are valid at every look by Ville's inequality; they differ in
#: how soon they decide (``docs/coverage-sequential.md`` measured them):
#:
#: * ``"betting_mixture"``: the average wealth of five bet schedules tuned to 50, 100, 200,
#:   400 and 800 clusters, truncated at ``c = 0.9``, which decides sooner at the run lengths
#:   evals have, and far sooner where cluster sizes are uneven;
#: * ``"betting_predictable"``: Waudby-Smith & Ramdas's predictable plug-in bets truncated at
#:   ``c = 0.5``, equal to the authors' ``confseq.betting.betting_cs`` bound for bound.
SEQUENCE_METHODS: dict[str, SequenceMethod] = {
    "betting_mixture": SequenceMethod((50.0, 100.0, 200.0, 400.0, 800.0), 0.9),
    "betting_predictable": SequenceMethod((PREDICTABLE,), 0.5),
}


def _bets(
    before: NDArray[np.float64], t: NDArray[np.float64], schedule: str | float, alpha: float
) -> NDArray[np.float64]:
    """Untruncated bets from the running variance seen before each cluster: the
    predictable plug-in schedule ``sqrt(2 log(2/alpha) / (sigma2 t log(1 + t)))``, or one
    tuned to a planned number of clusters ``n*``, ``sqrt(2 log(2/alpha) / (sigma2 n*))``
    (the bet that maximises the growth of the wealth after ``n*`` clusters of variance
    ``sigma2``; Waudby-Smith & Ramdas 2024, section 5)."""
    scale = t * np.log1p(t) if schedule == PREDICTABLE else float(schedule)
    with np.errstate(divide="ignore", invalid="ignore"):
        bets = np.sqrt(2.0 * math.log(2.0 / alpha) / (scale * before))
    return np.nan_to_num(bets, nan=0.0)


class _Engine:
    """The wealth of every candidate mean, for ``runs`` independent streams of clusters at
    once, carried from one block of clusters to the next. Outcomes are on [0, 1] already;
    ``x`` and ``u`` are each cluster's scaled sum and weight (see the module docstring)."""

    def __init__(
        self,
        *,
        runs: int,
        alpha: float,
        breaks: int,
        truncation: float,
        schedules: tuple[str | float, ...],
        population_size: int | None,
        population_weight: float | None,
        running_intersection: bool,
    ) -> None:
        self.alpha = alpha
        self.population_weight = population_weight
        self.breaks = breaks
        self.truncation = truncation
        self.schedules = schedules
        self.population_size = population_size
        self.running_intersection = running_intersection
        self.grid = np.linspace(0.0, 1.0, breaks + 1)
        shape = (len(schedules), runs, self.grid.shape[0])
        self.log_up = np.zeros(shape)
        self.log_down = np.zeros(shape)
        self.t = 0
        self.sum_x = np.zeros(runs)
        self.sum_u = np.zeros(runs)
        self.sum_squares = np.zeros(runs)
        self.ruled_out = np.zeros((runs, self.grid.shape[0]), dtype=bool)
        self.low = np.zeros(runs)
        self.high = np.ones(runs)
        self.empty = np.zeros(runs, dtype=bool)

    def advance(
        self, x: NDArray[np.float64], u: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
        """The bounds (on [0, 1]) and emptiness after each of the next ``k`` clusters of
        every run (``x``, ``u`` of shape (runs, k)), blocked to bound the temporaries."""
        k = x.shape[1]
        low, high = np.empty(x.shape), np.empty(x.shape)
        empty = np.zeros(x.shape, dtype=bool)
        cells = self.log_up.size
        block = max(1, _BLOCK_CELLS // max(cells, 1))
        for start in range(0, k, block):
            stop = min(k, start + block)
            part = slice(start, stop)
            low[:, part], high[:, part], empty[:, part] = self._block(x[:, part], u[:, part])
        return low, high, empty

    def _block(
        self, x: NDArray[np.float64], u: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
        k = x.shape[1]
        t = self.t + np.arange(1.0, k + 1.0)
        # the regularised running mean and variance (prior mean 1/2, variance 1/4, weight 1)
        cum_x = self.sum_x[:, None] + np.cumsum(x, axis=1)
        cum_u = self.sum_u[:, None] + np.cumsum(u, axis=1)
        mean = np.minimum((0.5 + cum_x) / (1.0 + cum_u), 1.0)
        residual = x - mean * u
        squares = self.sum_squares[:, None] + np.cumsum(residual * residual, axis=1)
        previous = (0.25 + self.sum_squares) / (self.t + 1.0)
        before = np.concatenate((previous[:, None], ((0.25 + squares) / (t + 1.0))[:, :-1]), 1)
        grid = self.grid[None, None, :]
        if self.population_size is None:
            step = x[:, :, None] - grid * u[:, :, None]
            centre: Any = grid
            impossible = None
        else:
            # without replacement: bet against the mean of the clusters not yet seen, were
            # the candidate the whole list's value (Waudby-Smith & Ramdas 2020)
            left = (self.population_size - (t - 1.0))[None, :, None]
            past_x = (cum_x - x)[:, :, None]
            past_u = (cum_u - u)[:, :, None]
            unseen = (grid * past_u - past_x) / left  # mean of x - m u over the unseen
            step = x[:, :, None] - grid * u[:, :, None] - unseen
            centre = grid + unseen
            impossible = (centre < 0.0) | (centre > 1.0)
            centre = np.clip(centre, 0.0, 1.0)
        with np.errstate(divide="ignore"):
            cap_up = np.where(centre > 0, self.truncation / centre, np.inf)
            cap_down = np.where(centre < 1, self.truncation / (1.0 - centre), np.inf)
        ups, downs = [], []
        for j, schedule in enumerate(self.schedules):
            lam = _bets(before, t, schedule, self.alpha)[:, :, None]
            up = np.log1p(np.maximum(np.minimum(lam, cap_up) * step, _FLOOR))
            down = np.log1p(np.maximum(-np.minimum(lam, cap_down) * step, _FLOOR))
            if impossible is not None:
                up[impossible] = 0.0
                down[impossible] = 0.0
            up = np.cumsum(up, axis=1) + self.log_up[j][:, None, :]
            down = np.cumsum(down, axis=1) + self.log_down[j][:, None, :]
            self.log_up[j], self.log_down[j] = up[:, -1], down[:, -1]
            ups.append(up)
            downs.append(down)
        if len(self.schedules) == 1:
            up, down = ups[0], downs[0]
        else:  # the mixture: the average wealth of the schedules
            up = _log_mean_exp(np.stack(ups))
            down = _log_mean_exp(np.stack(downs))
        kept = np.maximum(up, down) <= math.log(2.0 / self.alpha)
        if impossible is not None:
            gone = np.logical_or.accumulate(impossible, axis=1) | self.ruled_out[:, None, :]
            self.ruled_out = gone[:, -1]
            kept &= ~gone
        some = kept.any(axis=2)
        first = np.argmax(kept, axis=2)
        last = self.grid.shape[0] - 1 - np.argmax(kept[:, :, ::-1], axis=2)
        step_size = 1.0 / self.breaks
        low = np.where(some, np.maximum(self.grid[first] - step_size, 0.0), 1.0)
        high = np.where(some, np.minimum(self.grid[last] + step_size, 1.0), 0.0)
        empty = ~some
        if self.population_weight is not None:
            # the values the whole list's score can still take, given the clusters seen: each
            # unseen cluster's x lies in [0, u]
            whole = self.population_weight
            low = np.maximum(low, cum_x / whole)
            high = np.minimum(high, (cum_x + whole - cum_u) / whole)
            empty |= low > high + 1e-12
        if self.running_intersection:
            low = np.maximum.accumulate(np.concatenate((self.low[:, None], low), 1), 1)[:, 1:]
            high = np.minimum.accumulate(np.concatenate((self.high[:, None], high), 1), 1)[:, 1:]
            empty = np.logical_or.accumulate(np.concatenate((self.empty[:, None], empty), 1), 1)
            empty = empty[:, 1:] | (low > high + 1e-12)
            self.low, self.high, self.empty = low[:, -1], high[:, -1], empty[:, -1]
        self.t += k
        self.sum_x, self.sum_u = cum_x[:, -1], cum_u[:, -1]
        self.sum_squares = squares[:, -1]
        return low, high, empty


_FLOOR = -1.0 + 1e-12  # no factor of the wealth reaches 0: a truncated bet keeps it above 1 - c


def _log_mean_exp(stack: NDArray[np.float64]) -> NDArray[np.float64]:
    top = stack.max(axis=0)
    return top + np.log(np.mean(np.exp(stack - top), axis=0))


class BettingState:
    """The hedged-capital sequence as a state that takes completed clusters as they come.

    Each call of :meth:`add` costs O(``breaks``) per cluster and bet schedule, whatever the
    number already seen, so a run watched after every cluster costs no more than one pass
    over it. ``betting_sequence`` is this state fed all clusters at once.

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
    breaks, truncation, running_intersection, schedules, population_size, population_rows
        As in :func:`betting_sequence`.

    Examples
    --------
    >>> state = BettingState(estimand="cluster_mean")
    >>> first = state.add([3.0, 4.0], [5.0, 5.0])
    >>> later = state.add(5.0, 5.0)
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
        schedules: tuple[str | float, ...] = (PREDICTABLE,),
        population_size: int | None = None,
        population_rows: float | None = None,
    ) -> None:
        if estimand not in ("pooled", "cluster_mean"):
            raise ValueError(f"unknown estimand {estimand!r}")
        lower, upper = float(bounds[0]), float(bounds[1])
        if not upper > lower:
            raise ValueError(f"bounds must be increasing, got {bounds!r}")
        if estimand == "pooled" and max_cluster_size is None:
            raise ValueError("the pooled estimand needs max_cluster_size, fixed in advance")
        if not schedules or not all(
            s == PREDICTABLE or (isinstance(s, (int, float)) and s > 0) for s in schedules
        ):
            raise ValueError(f"schedules must be {PREDICTABLE!r} or positive numbers: {schedules}")
        self.estimand = estimand
        self.lower, self.upper = lower, upper
        self.bound = None if max_cluster_size is None else float(max_cluster_size)
        self.population_size = population_size
        self.population_rows = population_rows
        weight = None
        if population_size is not None:
            if estimand == "cluster_mean":
                weight = float(population_size)
            elif population_rows is not None:
                weight = float(population_rows) / float(max_cluster_size)  # type: ignore[arg-type]
        self._engine = _Engine(
            runs=1,
            alpha=1.0 - confidence,
            breaks=breaks,
            truncation=truncation,
            schedules=tuple(schedules),
            population_size=population_size,
            population_weight=weight,
            running_intersection=running_intersection,
        )
        self.n_clusters = 0
        self.n_rows = 0.0
        self._sum_totals = 0.0
        self._sum_means = 0.0

    def add(self, totals: ArrayLike, counts: ArrayLike) -> SequenceTrajectory:
        """Take the next completed clusters (their sums and sizes, in order of arrival, as two
        arrays, or one cluster as two numbers) and return the sequence after each of them."""
        sums = np.atleast_1d(np.asarray(totals, dtype=float))
        sizes = np.atleast_1d(np.asarray(counts, dtype=float))
        if sums.ndim != 1 or sums.shape != sizes.shape:
            raise ValueError("totals and counts must be two 1-d arrays of the same length")
        if np.any(sizes <= 0):
            raise ValueError("every cluster has at least one row")
        pooled = self.estimand == "pooled"
        if pooled and sizes.size and sizes.max() > self.bound:  # type: ignore[operator]
            raise ValueError(f"a cluster has {sizes.max():g} rows, above the bound {self.bound:g}")
        n = sums.shape[0]
        if self.population_size is not None and self.n_clusters + n > self.population_size:
            raise ValueError(
                f"{self.n_clusters + n} clusters, more than the {self.population_size} in the list"
            )
        span = self.upper - self.lower
        scaled = (sums - self.lower * sizes) / span
        if pooled:
            x, u = scaled / self.bound, sizes / self.bound  # type: ignore[operator]
        else:
            x, u = scaled / sizes, np.ones_like(sizes)
        low, high, empty = self._engine.advance(x[None, :], u[None, :])
        low, high, empty = low[0], high[0], empty[0]
        rows = self.n_rows + np.cumsum(sizes)
        clusters = self.n_clusters + np.arange(1, n + 1)
        cum_totals = self._sum_totals + np.cumsum(scaled)
        cum_means = self._sum_means + np.cumsum(scaled / sizes)
        estimate = cum_totals / rows if pooled else cum_means / clusters
        if n:
            self.n_clusters = int(clusters[-1])
            self.n_rows = float(rows[-1])
            self._sum_totals = float(cum_totals[-1])
            self._sum_means = float(cum_means[-1])
        return SequenceTrajectory(
            n_clusters=clusters,
            n_rows=rows,
            estimate=self.lower + span * estimate,
            low=np.where(empty, np.nan, self.lower + span * low),
            high=np.where(empty, np.nan, self.lower + span * np.minimum(high, 1.0)),
            empty=empty,
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
    schedules: tuple[str | float, ...] = (PREDICTABLE,),
    population_size: int | None = None,
    population_rows: float | None = None,
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
    schedules : tuple of "predictable" or float
        The bet schedules: ``"predictable"`` (Waudby-Smith & Ramdas's predictable plug-in
        bets) or a planned number of clusters ``n*`` that the bets are tuned to. Several are
        mixed, their wealths averaged (an average of test martingales is one).
    population_size : int, optional
        The clusters arrive in a uniformly random order, without replacement, from a known
        list of this many clusters, and the estimand is the whole list's value (Waudby-Smith
        & Ramdas 2020): the sequence shrinks to that value as the list runs out.
    population_rows : float, optional
        With ``population_size`` and ``"pooled"``: the rows of the whole list, so that the
        sequence also keeps to the values the list's score can still take.

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
        schedules=schedules,
        population_size=population_size,
        population_rows=population_rows,
    )
    return state.add(sums, sizes)


def betting_bounds(
    x: NDArray[np.float64],
    u: NDArray[np.float64],
    *,
    confidence: float = 0.95,
    breaks: int = 1000,
    truncation: float = 0.5,
    schedules: tuple[str | float, ...] = (PREDICTABLE,),
    population_size: int | None = None,
    population_weight: float | None = None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
    """The bounds (on the [0, 1] scale of ``x``) and emptiness of many independent streams
    at once: ``x`` and ``u`` of shape (runs, clusters) are each cluster's scaled sum and
    weight (``S/n`` and 1 for the mean of cluster means; ``S/B`` and ``n/B`` for the pooled
    mean). The same arithmetic as :class:`BettingState`, for simulation studies and plans.
    Without replacement (``population_size``), ``population_weight`` is the sum of ``u`` over
    the whole list (its clusters, or its rows over ``B``), which keeps the bounds to the
    values the list's score can still take.

    >>> x = np.full((2, 50), 0.7)
    >>> low, high, empty = betting_bounds(x, np.ones((2, 50)))
    >>> bool(low[0, -1] < 0.7 < high[0, -1]), bool(empty.any())
    (True, False)
    """
    engine = _Engine(
        runs=x.shape[0],
        alpha=1.0 - confidence,
        breaks=breaks,
        truncation=truncation,
        schedules=tuple(schedules),
        population_size=population_size,
        population_weight=population_weight,
        running_intersection=True,
    )
    return engine.advance(np.asarray(x, dtype=float), np.asarray(u, dtype=float))


def decision_looks(
    x: NDArray[np.float64],
    u: NDArray[np.float64],
    *,
    boundary: float,
    runs: int,
    horizon: int,
    rng: np.random.Generator,
    confidence: float = 0.95,
    breaks: int = 200,
    truncation: float = 0.5,
    schedules: tuple[str | float, ...] = (PREDICTABLE,),
    population_size: int | None = None,
) -> NDArray[np.float64]:
    """The completed clusters at which a sequence decides ``boundary``, in ``runs`` streams
    of clusters drawn with replacement from a pilot's clusters (``x``, ``u`` as in
    :func:`betting_bounds`, ``boundary`` on the same [0, 1] scale): the first look whose
    interval lies wholly on one side of it, ``inf`` when none within ``horizon`` clusters.

    With ``population_size``, each run draws a list of that many clusters from the pilot and
    runs through it without replacement (the benchmark target), so the horizon is the list.

    >>> rng = np.random.default_rng(0)
    >>> looks = decision_looks(np.r_[np.ones(7), np.zeros(3)], np.ones(10), boundary=0.4,
    ...                        runs=20, horizon=400, rng=rng)
    >>> bool(np.isfinite(looks).all()), bool(np.median(looks) < 400)
    (True, True)
    """
    if population_size is not None:
        horizon = population_size
    pick = rng.integers(0, x.shape[0], size=(runs, horizon))
    xs, us = x[pick], u[pick]
    extra: dict[str, Any] = {}
    if population_size is not None:
        extra = {"population_size": population_size, "population_weight": None}
    low, high, empty = betting_bounds(
        xs, us, confidence=confidence, breaks=breaks, truncation=truncation,
        schedules=schedules, **extra,
    )  # fmt: skip
    if population_size is not None:
        # each run's own list: the values its score can still take, given the clusters seen
        whole = us.sum(axis=1, keepdims=True)
        seen_x, seen_u = np.cumsum(xs, axis=1), np.cumsum(us, axis=1)
        low = np.maximum(low, seen_x / whole)
        high = np.minimum(high, (seen_x + whole - seen_u) / whole)
    decided = ((low >= boundary) | (high < boundary)) & ~empty
    return np.where(decided.any(axis=1), np.argmax(decided, axis=1) + 1.0, np.inf)


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
