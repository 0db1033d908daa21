"""Cluster bootstrap on per-cluster sufficient statistics.

Clusters are resampled whole, never rows: a replicate draws ``G`` cluster indices with
replacement and adds up the drawn clusters' statistics. Only the ``(G, k)`` per-cluster
statistics are touched, so the cost does not depend on the number of rows, and draws are
made in small chunks so that memory does not grow with the number of resamples.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from clusterstats.core._lazy import special
from clusterstats.core.grouping import ClusterSums
from clusterstats.core.variance import centred_estimate, cluster_robust

__all__ = [
    "DEFAULT_SEED",
    "BootstrapInterval",
    "StudentizedInterval",
    "bootstrap_interval",
    "generator",
    "jackknife_estimates",
    "resample_cluster_sums",
    "studentized_bounds",
    "studentized_interval",
    "t_quantiles",
]

# Indices drawn per chunk. Small enough that the index block and the gathered values stay
# in the CPU cache, large enough that the Python loop overhead is negligible (at G = 10,000,
# chunks of 2^15, 2^16 and 2^18 were no faster, for the bare draws or for the bootstrap).
CHUNK_ELEMENTS = 1 << 17

#: The seed of the bootstrap draws when none is given: the default interval of a continuous
#: outcome is a bootstrap, and an answer that changed from one call to the next (or between
#: the pandas, xarray and dask entry points) would not be one answer.
DEFAULT_SEED = 0


def generator(
    rng: int | np.random.Generator | np.random.SeedSequence | None,
) -> np.random.Generator:
    """The generator of the bootstrap draws: ``rng`` itself when it is a Generator, else a new
    one seeded by it (by :data:`DEFAULT_SEED` when it is None)."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(DEFAULT_SEED if rng is None else rng)


def resample_cluster_sums(
    per_cluster: NDArray[np.float64],
    n_resamples: int,
    rng: np.random.Generator,
    *,
    indices: NDArray[np.intp] | None = None,
) -> NDArray[np.float64]:
    """Sums of per-cluster statistics over cluster-bootstrap resamples.

    Parameters
    ----------
    per_cluster : ndarray, shape (G,) or (G, k)
        One row of statistics per cluster (e.g. totals and counts).
    n_resamples : int
        Number of bootstrap replicates ``B``.
    rng : numpy.random.Generator
        Source of the draws.
    indices : ndarray of int, shape (B, G), optional
        Explicit cluster indices for each replicate (used by tests to compare with a
        reference implementation on identical draws); ``rng`` is then unused.

    Returns
    -------
    ndarray, shape (B,) or (B, k)
        ``out[b] = sum(per_cluster[draw_b])``.
    """
    stats_matrix = np.asarray(per_cluster, dtype=np.float64)
    squeeze = stats_matrix.ndim == 1
    if squeeze:
        stats_matrix = stats_matrix[:, None]
    g, k = stats_matrix.shape
    chunk = max(1, CHUNK_ELEMENTS // g)
    # Integer-valued statistics (a binary or count outcome's totals and counts) are packed
    # into one int64 per cluster: one gather and one integer sum serve every column, and the
    # integer sums are the float sums bit for bit (see _IntegerPacking).
    packing = _IntegerPacking.of(stats_matrix, g)
    packed_sums = np.empty(n_resamples if packing is not None else 0, dtype=np.int64)
    columns = [np.ascontiguousarray(stats_matrix[:, j]) for j in range(k)]
    out = np.empty((n_resamples, k))
    # With several statistics, one pass counts how often each cluster was drawn and a matrix
    # product sums every column at once (as compare's rank bootstrap does). Two columns (a
    # ratio's totals and counts) travel as the real and imaginary parts of one complex column:
    # one gather and one sum instead of two of each, the draws read once.
    by_counts = k >= 3
    if k == 2:
        columns = [stats_matrix[:, 0] + 1j * stats_matrix[:, 1]]
    for start in range(0, n_resamples, chunk):
        stop = min(start + chunk, n_resamples)
        if indices is None:
            drawn = rng.integers(0, g, size=(stop - start, g))
        else:
            drawn = indices[start:stop]
        if packing is not None:
            np.add.reduce(packing.packed.take(drawn), axis=1, out=packed_sums[start:stop])
            continue
        if by_counts:
            rows = stop - start
            flat = drawn + (np.arange(rows, dtype=drawn.dtype) * g)[:, None]
            counts = np.bincount(flat.ravel(), minlength=rows * g).reshape(rows, g)
            out[start:stop] = counts.astype(np.float64) @ stats_matrix
            continue
        if k == 2:
            both = np.take(columns[0], drawn).sum(axis=1)
            out[start:stop, 0], out[start:stop, 1] = both.real, both.imag
            continue
        for j, column in enumerate(columns):
            out[start:stop, j] = np.take(column, drawn).sum(axis=1)
    if packing is not None:
        packing.unpack(packed_sums, out)
    return out[:, 0] if squeeze else out


class _IntegerPacking(NamedTuple):
    """Integer-valued per-cluster columns packed side by side into one int64 per cluster.

    A binary or count outcome has integer totals and counts (``y - shift`` is an integer when
    every outcome is), and a float64 sum of integers below 2^53 is exact in any order: the
    float sums of the drawn clusters are the integer sums, bit for bit. Column ``j``, less its
    smallest value, sits in bits ``[position_j, position_j + width_j)``; ``width_j`` holds the
    largest possible sum of ``G`` draws, so one int64 sum adds every column without carries
    between them, and one gather serves them all.
    """

    packed: NDArray[np.int64]  # shape (G,)
    positions: tuple[int, ...]  # the lowest bit of each column
    masks: tuple[int, ...]  # 2^width - 1
    offsets: tuple[int, ...]  # G draws of each column's smallest value

    @classmethod
    def of(cls, stats_matrix: NDArray[np.float64], g: int) -> _IntegerPacking | None:
        """The packing of ``stats_matrix`` (shape (G, k)) for sums of ``g`` draws, or None
        when a value is not a finite integer, is -0.0 (a float sum of only -0.0 is -0.0, an
        integer sum 0), or the sums could exceed 2^53 or need more than 63 bits together."""
        if stats_matrix.size == 0:
            return None
        # a NaN or an infinity is a column's minimum or maximum
        low_values = stats_matrix.min(axis=0).tolist()
        high_values = stats_matrix.max(axis=0).tolist()
        if not all(math.isfinite(v) for v in low_values + high_values):
            return None
        if not np.all(stats_matrix == np.rint(stats_matrix)):
            return None
        if np.any(np.signbit(stats_matrix) & (stats_matrix == 0)):
            return None
        lows, highs = [int(v) for v in low_values], [int(v) for v in high_values]
        if g * max(abs(v) for v in lows + highs) > 2**53:
            return None
        widths = [(g * (high - low)).bit_length() for low, high in zip(lows, highs, strict=True)]
        if sum(widths) > 63:
            return None
        positions = [sum(widths[:j]) for j in range(len(widths))]
        packed = np.zeros(stats_matrix.shape[0], dtype=np.int64)
        for j, (low, position) in enumerate(zip(lows, positions, strict=True)):
            packed += (stats_matrix[:, j].astype(np.int64) - low) << position
        masks = tuple((1 << width) - 1 for width in widths)
        return cls(packed, tuple(positions), masks, tuple(g * low for low in lows))

    def unpack(self, packed_sums: NDArray[np.int64], out: NDArray[np.float64]) -> None:
        """Writes the column sums into ``out`` (shape (B, k)) from the packed sums."""
        fields = zip(self.positions, self.masks, self.offsets, strict=True)
        for j, (position, mask, offset) in enumerate(fields):
            out[:, j] = ((packed_sums >> position) & mask) + offset


def _replicates(sums: ClusterSums, estimand: str, n_resamples: int, rng, indices):
    """Replicate estimates minus ``sums.shift`` (centred, so that their spread keeps every
    digit however far the outcomes are from zero)."""
    if estimand == "pooled":
        drawn = resample_cluster_sums(
            np.column_stack([sums.totals, sums.counts]), n_resamples, rng, indices=indices
        )
        return drawn[:, 0] / drawn[:, 1]
    drawn = resample_cluster_sums(sums.centred_means, n_resamples, rng, indices=indices)
    return drawn / sums.n_clusters


def _centred_jackknife(sums: ClusterSums, estimand: str) -> NDArray[np.float64]:
    if estimand == "pooled":
        return (sums.totals.sum() - sums.totals) / (sums.counts.sum() - sums.counts)
    means = sums.centred_means
    return (means.sum() - means) / (sums.n_clusters - 1)


def jackknife_estimates(sums: ClusterSums, estimand: str) -> NDArray[np.float64]:
    """Leave-one-cluster-out estimates, in closed form."""
    return _centred_jackknife(sums, estimand) + sums.shift


class BootstrapInterval(NamedTuple):
    low: float
    high: float
    standard_error: float
    note: str | None


def bootstrap_interval(
    sums: ClusterSums,
    estimand: str,
    *,
    kind: str,
    confidence: float,
    n_resamples: int,
    rng: np.random.Generator,
    indices: NDArray[np.intp] | None = None,
) -> BootstrapInterval:
    """Percentile or BCa interval from a cluster bootstrap of the estimate.

    BCa follows Efron (1987) as scipy.stats.bootstrap does: the bias correction uses the
    mid-rank share of replicates below the estimate, and the acceleration comes from the
    leave-one-cluster-out jackknife ``a = sum(U^3) / (6 * sum(U^2)^1.5)``.
    """

    # Everything below is centred on sums.shift, which is added back to the bounds only.
    theta_hat = centred_estimate(sums, estimand)
    replicates = _replicates(sums, estimand, n_resamples, rng, indices)
    se = float(np.std(replicates, ddof=1)) if n_resamples > 1 else math.nan
    alpha = 1.0 - confidence
    levels = np.array([alpha / 2, 1 - alpha / 2])
    note = None
    if kind == "bca":
        # Replicates equal to the estimate in exact arithmetic (with few clusters, many
        # are) land a few units in the last place either side of it, depending on the
        # order in which the rows were summed: within that rounding they count as ties, so
        # the bias correction, and the interval, do not depend on the row order.
        tie = (
            16.0
            * np.finfo(float).eps
            * max(abs(theta_hat + sums.shift), float(np.max(np.abs(replicates))))
        )
        below = np.count_nonzero(replicates < theta_hat - tie)
        at_or_below = np.count_nonzero(replicates <= theta_hat + tie)
        z0 = special.ndtri((below + at_or_below) / (2.0 * n_resamples))
        jack = _centred_jackknife(sums, estimand)
        u = jack.mean() - jack
        denom = 6.0 * float(u @ u) ** 1.5
        accel = float(np.sum(u**3)) / denom if denom > 0 else 0.0
        z = special.ndtri(levels)
        adjusted = special.ndtr(z0 + (z0 + z) / (1 - accel * (z0 + z)))
        if np.all(np.isfinite(adjusted)):
            levels = adjusted
        else:
            note = "BCa adjustment undefined for these replicates; percentile interval used"
    elif kind != "percentile":
        raise ValueError(f"unknown bootstrap interval {kind!r}")
    low, high = np.quantile(replicates, levels)
    return BootstrapInterval(float(low) + sums.shift, float(high) + sums.shift, se, note)


class StudentizedInterval(NamedTuple):
    low: float  # the bootstrap-t bounds, before any floor; may be infinite
    high: float
    t_low: float  # the quantiles of the replicate t statistics
    t_high: float
    standard_error: float  # the CR1 standard error that studentises the estimate
    degenerate_share: float  # share of replicates whose own standard error is zero
    p_value: float  # two-sided bootstrap-t p-value of the null value (NaN without one)


def studentized_interval(
    sums: ClusterSums,
    estimand: str,
    *,
    confidence: float,
    n_resamples: int,
    rng: np.random.Generator,
    indices: NDArray[np.intp] | None = None,
    null: float | None = None,
) -> StudentizedInterval:
    """Bootstrap-t (studentised) interval from a cluster bootstrap.

    Each replicate resamples whole clusters and computes ``t* = (θ* - θ̂) / se*`` with
    ``se*`` the replicate's own CR1 standard error; the bounds are
    ``θ̂ - t*_(1-α/2) se`` and ``θ̂ - t*_(α/2) se`` (Hall 1992, section 3.6; Davison &
    Hinkley 1997, section 5.2). Unlike the percentile and BCa intervals it corrects for the
    skewness of the estimate to second order, which is what skewed, zero-inflated and rare
    outcomes concentrated in a few clusters need. A replicate with ``se* = 0`` (every drawn
    cluster the same) has ``t* = ±inf`` on the side of its estimate, so that a bound the data
    cannot pin down comes out infinite rather than falsely tight.

    With ``null``, also the two-sided p-value of ``θ = null``,
    ``2 min(P*(t* ≥ t0), P*(t* ≤ t0))`` with ``t0 = (θ̂ - null) / se``: the equal-tailed
    interval excludes ``null`` at level α exactly when this is at most α (up to one replicate
    at the boundary).

    Everything is computed from five per-cluster sums (pooled: ``T_g, n_g, T_g², T_g n_g,
    n_g²``; cluster_mean: the centred means and their squares), so the cost does not depend
    on the number of rows.
    """

    g = sums.n_clusters
    theta_hat = centred_estimate(sums, estimand)
    se = math.sqrt(cluster_robust(sums, estimand, "CR1").variance)
    if estimand == "pooled":
        t, n = sums.totals, sums.counts
        drawn = resample_cluster_sums(
            np.column_stack([t, n, t * t, t * n, n * n]), n_resamples, rng, indices=indices
        )
        mean = drawn[:, 0] / drawn[:, 1]
        spread = drawn[:, 2] - 2.0 * mean * drawn[:, 3] + mean * mean * drawn[:, 4]
        scale = drawn[:, 1]
    else:
        y = sums.centred_means
        drawn = resample_cluster_sums(
            np.column_stack([y, y * y]), n_resamples, rng, indices=indices
        )
        mean = drawn[:, 0] / g
        spread = drawn[:, 1] - g * mean * mean
        scale = np.full(n_resamples, float(g))
    found = studentized_bounds(
        theta_hat,
        se,
        mean - theta_hat,
        spread,
        scale,
        magnitude=drawn[:, 2] if estimand == "pooled" else drawn[:, 1],
        n_clusters=g,
        confidence=confidence,
        null=None if null is None else null - sums.shift,
    )
    return found._replace(low=found.low + sums.shift, high=found.high + sums.shift)


def t_quantiles(
    gap: NDArray[np.float64], replicate_se: NDArray[np.float64], confidence: float
) -> tuple[NDArray[np.float64], tuple[float, float]]:
    """Each replicate's ``t* = gap / replicate_se`` and their two-sided ``confidence``
    quantiles (``inverted_cdf``). A replicate without spread (``replicate_se`` 0) has ``t*``
    infinite on the side of its gap, so a bound the draws cannot pin down comes out
    infinite, not falsely tight; one with neither gap nor spread counts as 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t_stat = np.where(replicate_se > 0, gap / replicate_se, np.sign(gap) * np.inf)
    t_stat = np.where(np.isnan(t_stat), 0.0, t_stat)
    alpha = 1.0 - confidence
    t_low, t_high = np.quantile(t_stat, [alpha / 2, 1 - alpha / 2], method="inverted_cdf")
    return t_stat, (float(t_low), float(t_high))


def studentized_bounds(
    estimate: float,
    standard_error: float,
    gap: NDArray[np.float64],
    spread: NDArray[np.float64],
    scale: NDArray[np.float64],
    *,
    magnitude: NDArray[np.float64],
    n_clusters: int,
    confidence: float,
    null: float | None = None,
) -> StudentizedInterval:
    """The bootstrap-t bounds from each replicate's departure from the estimate.

    ``gap`` is ``θ* - θ̂``; ``spread`` the replicate's sum of squared cluster residuals and
    ``scale`` its number of rows (the pooled estimand) or clusters (cluster means), so that
    its CR1 standard error is ``sqrt(G/(G-1) spread) / scale``. ``magnitude`` is the size of
    the terms whose difference ``spread`` is: a spread below rounding noise of it is zero.
    """
    # Sums of squares that cancel to rounding noise are zero spread: compare with the size of
    # the terms that were subtracted.
    spread = np.where(spread > 64.0 * np.finfo(float).eps * magnitude, spread, 0.0)
    replicate_se = np.sqrt(n_clusters / (n_clusters - 1.0) * spread) / scale
    t_stat, (t_low, t_high) = t_quantiles(gap, replicate_se, confidence)
    se = standard_error
    low = estimate - float(t_high) * se if se > 0 else estimate
    high = estimate - float(t_low) * se if se > 0 else estimate
    p_value = math.nan
    if null is not None and se > 0:
        t_null = (estimate - null) / se
        tail = min(np.mean(t_stat >= t_null), np.mean(t_stat <= t_null))
        p_value = min(1.0, 2.0 * float(tail))
    return StudentizedInterval(
        low=low,
        high=high,
        t_low=float(t_low),
        t_high=float(t_high),
        standard_error=se,
        degenerate_share=float(np.mean(replicate_se == 0)),
        p_value=p_value,
    )
