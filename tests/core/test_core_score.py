"""The cluster score interval (``clusterstats.core.score``) against its definition.

The closed form is checked against the test it inverts, evaluated directly on a grid of
candidates: ``(sum e_g(r))^2 <= t^2 G/(G-1) sum e_g(r)^2`` with ``e_g(r) = T_g - r n_g``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from clusterstats.core.grouping import ClusterSums
from clusterstats.core.score import cluster_score_interval
from clusterstats.core.variance import cluster_robust


def _sums(counts, totals, shift=0.0):
    # The score interval reads only rows and totals; the squares slot is filled but unused.
    counts = np.asarray(counts, float)
    totals = np.asarray(totals, float)
    return ClusterSums(counts, totals - shift * counts, totals, shift)


def _statistic(counts, totals, r, estimand):
    """|sum e| / sqrt(G/(G-1) sum e^2) at candidate r, straight from the definition."""
    if estimand == "cluster_mean":
        totals, counts = totals / counts, np.ones_like(counts)
    residuals = totals - r * counts
    g = counts.shape[0]
    return abs(residuals.sum()) / math.sqrt(g / (g - 1) * (residuals**2).sum())


def test_closed_form_example():
    # 50% confidence on 2 df: t^2 = 2/3, q = 1; (36-14) r^2 - 2 (30-12) r + (25-11) = 0.
    found = cluster_score_interval(_sums([1, 2, 3], [1, 1, 3]), "pooled", 0.5)
    assert found.low == pytest.approx(7 / 11, rel=1e-12)
    assert found.high == pytest.approx(1.0, rel=1e-12)


@pytest.mark.parametrize("estimand", ["pooled", "cluster_mean"])
@pytest.mark.parametrize("seed", range(6))
def test_bounds_are_where_the_test_starts_to_reject(seed, estimand):
    rng = np.random.default_rng(seed)
    g = int(rng.integers(8, 40))
    counts = rng.integers(1, 60, g).astype(float)
    totals = rng.binomial(counts.astype(int), rng.beta(2, 3, g)).astype(float)
    found = cluster_score_interval(_sums(counts, totals), estimand, 0.95)
    assert math.isfinite(found.low)
    assert math.isfinite(found.high)
    t = stats.t.ppf(0.975, g - 1)
    for bound in (found.low, found.high):
        assert _statistic(counts, totals, bound, estimand) == pytest.approx(t, rel=1e-9)
    width = found.high - found.low
    inside = np.linspace(found.low, found.high, 41)[1:-1]
    assert all(_statistic(counts, totals, r, estimand) < t for r in inside)
    for r in (found.low - 1e-6 * width, found.high + 1e-6 * width):
        assert _statistic(counts, totals, r, estimand) > t


def test_the_estimate_is_inside_and_the_variance_there_is_cr1():
    rng = np.random.default_rng(3)
    counts = rng.integers(5, 200, 25).astype(float)
    totals = rng.binomial(counts.astype(int), 0.4).astype(float)
    sums = _sums(counts, totals)
    point = totals.sum() / counts.sum()
    found = cluster_score_interval(sums, "pooled", 0.95)
    assert found.low < point < found.high
    # At the estimate the variance under the null is the CR1 variance (times N^2).
    residuals = totals - point * counts
    g = counts.shape[0]
    assert g / (g - 1) * (residuals**2).sum() / counts.sum() ** 2 == pytest.approx(
        cluster_robust(sums, "pooled", "CR1").variance, rel=1e-12
    )


def test_shift_and_scale_invariance():
    rng = np.random.default_rng(5)
    counts = rng.integers(1, 30, 15).astype(float)
    totals = rng.normal(0.3, 1.0, 15) * counts
    plain = cluster_score_interval(_sums(counts, totals), "pooled", 0.9)
    shifted = cluster_score_interval(_sums(counts, totals + 1e6 * counts, 1e6), "pooled", 0.9)
    assert shifted.low - 1e6 == pytest.approx(plain.low, abs=1e-8)
    assert shifted.high - 1e6 == pytest.approx(plain.high, abs=1e-8)
    scaled = cluster_score_interval(_sums(counts, 1e-200 * totals), "pooled", 0.9)
    assert scaled.low / 1e-200 == pytest.approx(plain.low, rel=1e-10)
    assert scaled.high / 1e-200 == pytest.approx(plain.high, rel=1e-10)


def test_leans_towards_the_side_a_large_cluster_pulls():
    # One large cluster at 20% among small ones at 70%: the pooled share is pulled down by
    # it, and the interval reaches further up (where the draws without it would land)
    # than a symmetric interval around the estimate would.
    counts = np.array([400.0] + [20.0] * 19)
    totals = np.array([80.0] + [14.0] * 19)
    found = cluster_score_interval(_sums(counts, totals), "pooled", 0.95)
    point = totals.sum() / counts.sum()
    assert found.high - point > 1.5 * (point - found.low)


def test_one_dominant_cluster_leaves_a_side_unbounded():
    counts = np.array([5000.0, 10.0, 12.0, 9.0, 11.0])
    totals = np.array([1000.0, 6.0, 8.0, 5.0, 7.0])
    found = cluster_score_interval(_sums(counts, totals), "pooled", 0.95)
    assert math.isinf(found.low) or math.isinf(found.high)
    point = totals.sum() / counts.sum()
    assert found.low <= point <= found.high


def test_refuses_one_cluster_and_unknown_estimands():
    with pytest.raises(ValueError, match="two clusters"):
        cluster_score_interval(_sums([3], [1]), "pooled", 0.95)
    with pytest.raises(ValueError, match="estimand"):
        cluster_score_interval(_sums([3, 4], [1, 2]), "median", 0.95)
