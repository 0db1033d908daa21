"""Clustered data with a known mean and intraclass correlation.

One model, drawn two ways: row by row (``draw_rows``, behind :func:`clusterstats.simulate`)
and directly as per-cluster sufficient statistics (``draw_cluster_sums``, used by the coverage
study, where building rows would only cost time). Both use :func:`draw_clusters` for the
cluster-level part, so the two paths describe exactly the same distribution.

The model
---------
* **Cluster sizes.** ``size_cv = 0``: every cluster has ``cluster_size`` rows. Otherwise
  ``n_j = 1 + X_j`` with ``X_j`` negative binomial (a gamma-Poisson mixture) of mean
  ``cluster_size - 1`` and variance ``(size_cv * cluster_size)^2``, so the sizes have mean
  ``cluster_size`` and coefficient of variation ``size_cv`` and every cluster has a row.
* **Binary outcomes.** ``p_j ~ Beta(a, b)`` with ``a = mean (1 - icc) / icc`` and
  ``b = (1 - mean)(1 - icc) / icc``, so ``E p_j = mean`` and the ICC of the Bernoulli rows
  is ``1 / (a + b + 1) = icc``; with ``icc = 0``, ``p_j = mean``. Rows are Bernoulli(p_j).
* **Continuous outcomes.** ``y_ij = mean + u_j + e_ij`` with ``u_j ~ N(0, icc)`` and
  ``e_ij ~ N(0, 1 - icc)``: total variance 1, ICC ``icc``.
* **Size related to difficulty** (``size_difficulty=True``, binary only). The expected size
  of cluster j is ``1 + (cluster_size - 1) (1 - p_j) / (1 - mean)``: harder clusters are
  larger (long conversations are long because they go badly). The cluster-mean estimand is
  still ``mean``; the pooled-row estimand is ``mean * (1 - icc (m - 1) / m)`` with
  ``m = cluster_size``, because ``E[n_j p_j] = mean + (m - 1)(mean - icc * mean)``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from clusterstats.core.grouping import ClusterSums

__all__ = [
    "ClusterDraw",
    "SimulationTruth",
    "draw_cluster_sums",
    "draw_clusters",
    "draw_rows",
    "truth",
]


class SimulationTruth(NamedTuple):
    """The population values the simulated data estimate."""

    pooled: float
    cluster_mean: float
    icc: float


class ClusterDraw(NamedTuple):
    sizes: np.ndarray  # int64, shape (..., K)
    levels: np.ndarray  # p_j (binary) or mean + u_j (continuous), shape (..., K)


def check_parameters(
    n_clusters: int,
    cluster_size: float,
    mean: float,
    icc: float,
    size_cv: float,
    outcome: str,
    size_difficulty: bool,
) -> None:
    """Raise ValueError with a precise message for parameters the model cannot realise."""
    if int(n_clusters) != n_clusters or n_clusters < 1:
        raise ValueError(f"n_clusters must be a positive integer, got {n_clusters!r}")
    if not cluster_size >= 1:
        raise ValueError(f"cluster_size must be at least 1, got {cluster_size!r}")
    if size_cv == 0 and int(cluster_size) != cluster_size:
        raise ValueError("with size_cv=0 every cluster has cluster_size rows: give an integer")
    if not 0.0 <= icc < 1.0:
        raise ValueError(f"icc must be in [0, 1), got {icc!r}")
    if not size_cv >= 0:
        raise ValueError(f"size_cv must be non-negative, got {size_cv!r}")
    if size_cv > 0 and (size_cv * cluster_size) ** 2 < cluster_size - 1:
        raise ValueError(
            f"size_cv={size_cv} is too small for sizes of mean {cluster_size} drawn as 1 + a "
            f"negative binomial (needs size_cv >= sqrt(m - 1) / m = "
            f"{math.sqrt(cluster_size - 1) / cluster_size:.3g}); use 0 for equal sizes"
        )
    if size_cv > 0 and cluster_size == 1:
        raise ValueError("with cluster_size=1 every cluster has one row: size_cv must be 0")
    if outcome not in ("binary", "continuous"):
        raise ValueError(f"outcome must be 'binary' or 'continuous', got {outcome!r}")
    if outcome == "binary" and not 0.0 < mean < 1.0:
        raise ValueError(f"a binary mean must be strictly between 0 and 1, got {mean!r}")
    if size_difficulty and outcome != "binary":
        raise ValueError("size_difficulty is defined for binary outcomes")


def truth(cluster_size: float, mean: float, icc: float, size_difficulty: bool) -> SimulationTruth:
    """The pooled and cluster-mean estimands of the model (equal unless size_difficulty)."""
    if not size_difficulty:
        return SimulationTruth(mean, mean, icc)
    m = float(cluster_size)
    return SimulationTruth(mean * (1.0 - icc * (m - 1.0) / m), mean, icc)


def _sizes(rng, shape, cluster_size, size_cv, scale=None):
    if size_cv == 0 and scale is None:
        return np.full(shape, int(cluster_size), dtype=np.int64)
    extra_mean = (cluster_size - 1.0) * (1.0 if scale is None else scale)
    if size_cv == 0:
        return 1 + rng.poisson(extra_mean)
    # Gamma-Poisson: mean extra_mean, variance (size_cv * cluster_size)^2 scaled alike.
    variance = (size_cv * cluster_size) ** 2 * (1.0 if scale is None else scale**2)
    dispersion = np.maximum(variance - extra_mean, 1e-12)
    shape_k = extra_mean**2 / dispersion
    gamma_scale = dispersion / np.maximum(extra_mean, 1e-300)
    lam = rng.gamma(np.maximum(shape_k, 1e-300), gamma_scale, size=shape)
    return 1 + rng.poisson(lam)


def draw_clusters(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    *,
    cluster_size: float,
    mean: float,
    icc: float,
    size_cv: float,
    outcome: str,
    size_difficulty: bool = False,
) -> ClusterDraw:
    """Cluster sizes and cluster-level means for ``shape = (..., K)`` clusters."""
    if outcome == "binary":
        if icc == 0.0:
            levels = np.full(shape, float(mean))
        else:
            a = mean * (1.0 - icc) / icc
            b = (1.0 - mean) * (1.0 - icc) / icc
            levels = rng.beta(a, b, size=shape)
    else:
        levels = mean + rng.normal(0.0, math.sqrt(icc), size=shape)
    scale = (1.0 - levels) / (1.0 - mean) if size_difficulty else None
    return ClusterDraw(_sizes(rng, shape, cluster_size, size_cv, scale), levels)


def draw_rows(
    rng: np.random.Generator,
    n_clusters: int,
    *,
    cluster_size: float,
    mean: float,
    icc: float,
    size_cv: float,
    outcome: str,
    size_difficulty: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Row-level data: ``(cluster index per row, outcome per row)``."""
    draw = draw_clusters(
        rng,
        (int(n_clusters),),
        cluster_size=cluster_size,
        mean=mean,
        icc=icc,
        size_cv=size_cv,
        outcome=outcome,
        size_difficulty=size_difficulty,
    )
    cluster = np.repeat(np.arange(int(n_clusters)), draw.sizes)
    level = draw.levels[cluster]
    if outcome == "binary":
        y = (rng.random(cluster.shape[0]) < level).astype(np.float64)
    else:
        y = level + rng.normal(0.0, math.sqrt(1.0 - icc), size=cluster.shape[0])
    return cluster, y


def draw_cluster_sums(
    rng: np.random.Generator,
    n_datasets: int,
    n_clusters: int,
    *,
    cluster_size: float,
    mean: float,
    icc: float,
    size_cv: float,
    outcome: str,
    size_difficulty: bool = False,
) -> list[ClusterSums]:
    """``n_datasets`` independent datasets, each reduced to per-cluster sums.

    Equivalent in distribution to reducing :func:`draw_rows` output: binary totals are
    ``Binomial(n_j, p_j)``; a continuous cluster total is ``N(n_j level_j, n_j (1 - icc))``
    and its within-cluster sum of squares ``(1 - icc) chi2(n_j - 1)``.
    """
    draw = draw_clusters(
        rng,
        (n_datasets, n_clusters),
        cluster_size=cluster_size,
        mean=mean,
        icc=icc,
        size_cv=size_cv,
        outcome=outcome,
        size_difficulty=size_difficulty,
    )
    n = draw.sizes.astype(np.float64)
    if outcome == "binary":
        totals = rng.binomial(draw.sizes, draw.levels).astype(np.float64)
        squares = totals
    else:
        sigma2 = 1.0 - icc
        totals = rng.normal(n * draw.levels, np.sqrt(n * sigma2))
        within = sigma2 * rng.chisquare(np.maximum(n - 1.0, 1e-300)) * (n > 1)
        squares = totals**2 / n + within
    return [ClusterSums(n[i], totals[i], squares[i]) for i in range(n_datasets)]
