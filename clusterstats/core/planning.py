"""Planning formulas for clustered evals: the budget identity of a two-stage design
(Donner & Klar 2000, ch. 5).

``K`` clusters of ``m`` rows each, ICC ``ρ`` and row variance ``σ²``:
``Var(mean) = σ² (ρ/K + (1 − ρ)/(K m)) = σ² (1 + (m − 1) ρ) / (K m)``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

__all__ = [
    "clusters_for_half_width",
    "clusters_for_power",
    "clusters_to_decide",
    "decisive_half_width",
    "effective_n",
    "half_width",
    "minimum_detectable_effect",
    "optimal_cluster_size",
    "variance_of_mean",
]


def _quantiles(confidence: float, power: float) -> tuple[float, float]:
    """``z_{1−α/2}`` of the two-sided level and ``z_{power}``."""
    return float(special.ndtri(0.5 + confidence / 2.0)), float(special.ndtri(power))


def _ratio(numerator: float, denominator: float) -> float:
    """``numerator / denominator``, infinite rather than an error when the denominator has
    underflowed to 0 (a target so small that its square is below floating-point range)."""
    return numerator / denominator if denominator > 0 else math.inf


def variance_of_mean(sigma2: float, icc: float, n_clusters: float, cluster_size: float) -> float:
    """``σ² (1 + (m − 1) ρ) / (K m)``.

    >>> round(variance_of_mean(0.25, 0.3, 30, 10), 10)  # 0.25 * 3.7 / 300
    0.0030833333
    """
    return sigma2 * (1.0 + (cluster_size - 1.0) * icc) / (n_clusters * cluster_size)


def half_width(
    sigma2: float, icc: float, n_clusters: float, cluster_size: float, confidence: float = 0.95
) -> float:
    """The ``t_{K−1}`` half-width of the interval for a mean under the budget identity.

    >>> round(half_width(0.25, 0.3, 30, 10), 4)
    0.1136
    """
    q = float(special.stdtrit(max(n_clusters - 1.0, 1.0), 0.5 + confidence / 2.0))
    return q * math.sqrt(variance_of_mean(sigma2, icc, n_clusters, cluster_size))


def effective_n(n_clusters: float, cluster_size: float, icc: float) -> float:
    """``K m / (1 + (m − 1) ρ)``; it never exceeds ``K / ρ``, however deep the clusters.

    >>> [round(effective_n(k, m, 0.5), 1) for k, m in ((100, 10), (100, 20), (200, 10))]
    [181.8, 190.5, 363.6]
    """
    return n_clusters * cluster_size / (1.0 + (cluster_size - 1.0) * icc)


def optimal_cluster_size(cost_per_cluster: float, cost_per_row: float, icc: float) -> float:
    """Rows per cluster that minimise the variance for a budget ``K (c_cluster + c_row m)``:
    ``m* = sqrt(c_cluster / c_row · (1 − ρ) / ρ)`` (Cochran 1977; Raudenbush 1997).

    >>> [round(optimal_cluster_size(*a), 2) for a in ((10, 1, 0.3), (1, 1, 0.5), (100, 1, 0.05))]
    [4.83, 1.0, 43.59]
    """
    if icc <= 0:
        return math.inf
    return math.sqrt(cost_per_cluster / cost_per_row * (1.0 - icc) / icc)


def clusters_for_half_width(
    sigma2: float,
    icc: float,
    cluster_size: float,
    half_width: float,
    confidence: float = 0.95,
    *,
    t_quantile: bool = False,
) -> float:
    """Clusters needed for a confidence-interval half-width ``h``:
    ``K = z² σ² (1 + (m − 1) ρ) / (m h²)`` with the normal quantile, or, with the
    ``t_{K−1}`` quantile, the ``K`` at which ``t_{K−1} sqrt(σ² (1 + (m − 1) ρ) / (K m))``
    equals ``h`` (unrounded; round up to plan). The t half-width falls strictly as ``K``
    grows, so the root is bracketed and solved; the t answer is at least 2 (fewer clusters
    have no between-cluster variance), and exactly 2 when 2 clusters already meet ``h``.

    For p = 0.5, ρ = 0.3, m = 10, h = 0.05: 142.13, so 143 clusters with z, and 145 with
    the t quantile (one t step gives 144.59; the root is 144.56):

    >>> round(clusters_for_half_width(0.25, 0.3, 10, 0.05), 2)
    142.13
    >>> k = clusters_for_half_width(0.25, 0.3, 10, 0.05, t_quantile=True)
    >>> round(k, 2), math.ceil(k)
    (144.56, 145)

    A wide target needs few clusters, where t and z differ most: ±0.3 at ρ = 0.1 takes
    4.53 clusters (z would say 2.13), and ±2 is met by the minimum of 2:

    >>> round(clusters_for_half_width(0.25, 0.1, 10, 0.3, t_quantile=True), 2)
    4.53
    >>> clusters_for_half_width(0.25, 0.1, 10, 2.0, t_quantile=True)
    2.0
    """
    base = _ratio(
        sigma2 * (1.0 + (cluster_size - 1.0) * icc), cluster_size * half_width * half_width
    )
    p = 0.5 + confidence / 2.0
    k = float(special.ndtri(p)) ** 2 * base
    if not t_quantile or not math.isfinite(k):
        return k

    def excess(clusters: float) -> float:
        # (t_{K-1} / h)^2 sigma2 deff / (K m) - 1, in the scale-free form q^2 base / K - 1
        q = float(special.stdtrit(clusters - 1.0, p))
        return q * q * base / clusters - 1.0

    if excess(2.0) <= 0.0:
        return 2.0
    high = max(2.0 * k, 4.0)  # the t root lies above the z one
    while excess(high) > 0.0:
        high *= 2.0
    return float(optimize.brentq(excess, 2.0, high, xtol=1e-12, rtol=4 * np.finfo(float).eps))


def clusters_for_power(
    sigma2_diff: float,
    icc_diff: float,
    cluster_size: float,
    effect: float,
    power: float = 0.8,
    confidence: float = 0.95,
) -> float:
    """Clusters needed to detect a paired difference ``δ`` with the given power:
    ``K = (z_{1−α/2} + z_{power})² σ²_d (1 + (m − 1) ρ_d) / (m δ²)``, with ``σ²_d`` and ``ρ_d``
    the variance and ICC of the per-item differences.

    For σ²_d = 0.2, ρ_d = 0.2, m = 5, δ = 0.03 and 80% power, and unclustered (m = 1):

    >>> round(clusters_for_power(0.2, 0.2, 5, 0.03), 1)
    627.9
    >>> round(clusters_for_power(0.2, 0.2, 1, 0.03), 1)
    1744.2
    """
    z = sum(_quantiles(confidence, power))
    numerator = z * z * sigma2_diff * (1.0 + (cluster_size - 1.0) * icc_diff)
    return _ratio(numerator, cluster_size * effect * effect)


def decisive_half_width(distance: float, confidence: float = 0.95, power: float = 0.8) -> float:
    """The half-width an interval needs for its bound to clear a boundary ``d`` away from
    the truth with the given power: ``d z_{1−α/2} / (z_{1−α/2} + z_{power})``.

    >>> round(decisive_half_width(0.03), 5)
    0.02099
    """
    z_alpha, z_power = _quantiles(confidence, power)
    return distance * z_alpha / (z_alpha + z_power)


def clusters_to_decide(
    n_clusters: float,
    standard_error: float,
    distance: float,
    confidence: float = 0.95,
    power: float = 0.8,
) -> float:
    """Clusters at which an estimate ``d`` from a boundary is told from it with the given
    power, scaling an observed standard error at ``K`` clusters as ``se sqrt(K / K′)`` (the
    design effect held fixed): ``K (z_{1−α/2} + z_{power})² se² / d²``, at least 2.

    >>> round(clusters_to_decide(100, 0.02, 0.03), 1)
    348.8
    """
    z_alpha, z_power = _quantiles(confidence, power)
    return max(2.0, n_clusters * ((z_alpha + z_power) * standard_error / distance) ** 2)


def minimum_detectable_effect(
    sigma2_diff: float,
    icc_diff: float,
    n_clusters: float,
    cluster_size: float,
    power: float = 0.8,
    confidence: float = 0.95,
) -> float:
    """The smallest paired difference detectable with the given power at ``K`` clusters of
    ``m`` items: ``(z_{1−α/2} + z_{power}) sqrt(σ²_d (1 + (m − 1) ρ_d) / (K m))``.

    >>> round(minimum_detectable_effect(0.2, 0.2, 627.9, 5), 4)
    0.03
    """
    z = sum(_quantiles(confidence, power))
    return z * math.sqrt(variance_of_mean(sigma2_diff, icc_diff, n_clusters, cluster_size))
