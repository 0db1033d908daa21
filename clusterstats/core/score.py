"""The cluster score interval: a t test with the sandwich variance taken under the null, inverted.

For a candidate value ``r`` of the estimand, each cluster contributes a residual
``e_g(r) = T_g - r n_g`` (pooled share: cluster totals and rows) or ``m_g - r`` (mean of the
cluster means). Under ``r`` the residuals have mean zero, and the cluster-robust (CR1) variance
of their sum *evaluated at r*, not at the estimate, is ``G/(G-1) sum_g e_g(r)^2``. The test

    (sum_g e_g(r))^2  <=  t^2_{G-1, 1-alpha/2} * G/(G-1) * sum_g e_g(r)^2

accepts the candidates of the interval. Both sides are quadratic in ``r``, so the interval has
a closed form. It is the Wilson construction (the variance under the null rather than at the
estimate) applied to cluster totals, as Saha, Miller & Wang (2016) propose for clustered
binary data, and for the pooled share it is Fieller's (1954) interval for a ratio of means with
the uncentred variance. Because ``sum_g e_g(r)^2`` carries the cross term
``-2 r sum_g T_g n_g``, the interval leans towards the side where large clusters pull the
estimate, which the symmetric CR1 or CR2 intervals cannot do.

Where the clusters carry too little information (``N^2 <= t^2 G/(G-1) sum_g n_g^2``: fewer
than about ``t^2`` clusters' worth of rows, as when one cluster holds most of them), every
candidate on one side is accepted and that bound is infinite.

References
----------
Fieller, E. C. (1954). Some problems in interval estimation. *Journal of the Royal Statistical
Society B*, 16(2), 175–185.

Saha, K. K., Miller, D., & Wang, S. (2016). A comparison of some approximate confidence
intervals for a single proportion for clustered binary outcome data. *The International
Journal of Biostatistics*, 12(2).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from clusterstats.core._lazy import special, stats
from clusterstats.core.grouping import ClusterSums

__all__ = ["ScoreInterval", "cluster_score_interval", "cluster_score_test"]


class ScoreInterval(NamedTuple):
    """The accepted candidates: ``low`` and ``high`` (either may be infinite)."""

    low: float
    high: float


def _weights_and_values(sums: ClusterSums, estimand: str) -> tuple[np.ndarray, np.ndarray]:
    """What each cluster contributes: its rows and centred total (pooled) or one and its
    centred mean (cluster mean); the estimate is ``sum values / sum weights + shift``."""
    if sums.n_clusters < 2:
        raise ValueError("the cluster score interval needs at least two clusters")
    if estimand == "pooled":
        return sums.counts, sums.totals
    if estimand == "cluster_mean":
        return np.ones(sums.n_clusters), sums.totals / sums.counts
    raise ValueError(f"unknown estimand {estimand!r}; expected 'pooled' or 'cluster_mean'")


def cluster_score_test(sums: ClusterSums, estimand: str, null: float) -> float:
    """Two-sided p-value of the cluster-robust t test with its variance under ``null``.

    The statistic is ``sum_g e_g / sqrt(G/(G-1) sum_g e_g^2)`` with the residuals
    ``e_g = T_g - null n_g`` (pooled) or ``m_g - null`` (cluster mean), referred to t with
    ``G - 1`` df: the test that :func:`cluster_score_interval` inverts, so ``null`` lies in
    the interval exactly when the p-value is at least ``1 - confidence``.

    Parameters
    ----------
    sums : ClusterSums
        Per-cluster rows and centred totals (at least two clusters).
    estimand : {"pooled", "cluster_mean"}
        Which mean is tested.
    null : float
        The value of the estimand under the null hypothesis.

    Returns
    -------
    float
        The p-value; 1 when every residual is zero (the data agree with ``null`` exactly).

    Examples
    --------
    The data of :func:`cluster_score_interval`'s example: at its 50% bound ``7/11`` the
    p-value is 0.5.

    >>> import numpy as np
    >>> from clusterstats.core.grouping import ClusterSums
    >>> t = np.array([1.0, 1.0, 3.0])
    >>> round(cluster_score_test(ClusterSums(np.array([1.0, 2, 3]), t, t), "pooled", 7 / 11), 6)
    0.5
    """
    weights, values = _weights_and_values(sums, estimand)
    g = sums.n_clusters
    residuals = values - (null - sums.shift) * weights
    scale = float(np.max(np.abs(residuals)))
    if scale == 0.0:
        return 1.0
    e = residuals / scale
    spread = float(e @ e) * g / (g - 1.0)
    statistic = float(e.sum()) / math.sqrt(spread)
    return float(2.0 * special.stdtr(g - 1, -abs(statistic)))


def cluster_score_interval(sums: ClusterSums, estimand: str, confidence: float) -> ScoreInterval:
    """Invert the cluster-robust t test whose variance is evaluated under each candidate.

    Parameters
    ----------
    sums : ClusterSums
        Per-cluster rows and centred totals (at least two clusters).
    estimand : {"pooled", "cluster_mean"}
        ``"pooled"``: the share of all rows, ``sum T / sum n``; ``"cluster_mean"``: the mean of
        the cluster means.
    confidence : float
        Nominal two-sided coverage, in (0, 1).

    Returns
    -------
    ScoreInterval
        The connected set of accepted candidates around the estimate. A side on which every
        candidate is accepted is infinite.

    Examples
    --------
    Three clusters of 1, 2 and 3 rows with 1, 1 and 3 successes at 50% confidence, where
    ``t^2 = 2/3`` on 2 df, so ``q = t^2 G/(G-1) = 1`` and the bounds solve
    ``(36 - 14) r^2 - 2 (30 - 12) r + (25 - 11) = 0``: ``r = 7/11`` and ``r = 1``.

    >>> import numpy as np
    >>> from clusterstats.core.grouping import ClusterSums
    >>> t = np.array([1.0, 1.0, 3.0])
    >>> found = cluster_score_interval(ClusterSums(np.array([1.0, 2, 3]), t, t), "pooled", 0.5)
    >>> round(found.low, 4), round(found.high, 4)
    (0.6364, 1.0)
    """
    weights, values = _weights_and_values(sums, estimand)
    g = sums.n_clusters
    # Scale both to order one so that the squares below stay far from overflow.
    w_scale = float(np.max(np.abs(weights)))
    v_scale = float(np.max(np.abs(values))) or 1.0
    w, v = weights / w_scale, values / v_scale
    t = float(stats.t.ppf(0.5 + confidence / 2.0, g - 1))
    q = t * t * g / (g - 1.0)
    total_w, total_v = float(w.sum()), float(v.sum())
    # Accept r when a r^2 - 2 b r + c <= 0 (r on the scaled axis).
    a = total_w * total_w - q * float(w @ w)
    b = total_w * total_v - q * float(w @ v)
    c = total_v * total_v - q * float(v @ v)
    centre = total_v / total_w  # the estimate, always accepted
    to_reported = v_scale / w_scale
    if a > 0.0:
        root = math.sqrt(max(b * b - a * c, 0.0))
        # The two roots without cancellation: one as (b + sign(b) root) / a, the other c / that.
        far = b + math.copysign(root, b)
        ends = sorted((far / a, c / far)) if far != 0.0 else [0.0, 0.0]
        low, high = min(ends[0], centre), max(ends[1], centre)
    elif a == 0.0:  # linear: one side unbounded
        bound = c / (2.0 * b) if b != 0.0 else centre
        low, high = (bound, math.inf) if bound <= centre else (-math.inf, bound)
    else:  # the accepted set runs to infinity on the side of the estimate
        root = math.sqrt(max(b * b - a * c, 0.0))
        ends = sorted(((b - root) / a, (b + root) / a))
        low, high = (-math.inf, ends[0]) if centre <= ends[0] else (ends[1], math.inf)
    return ScoreInterval(low * to_reported + sums.shift, high * to_reported + sums.shift)
