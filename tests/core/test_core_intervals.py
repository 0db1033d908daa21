"""korn_graubard_guarded, the binary default, and the clustered rule of three."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import clusterstats as cs
from clusterstats.core.bootstrap import DEFAULT_SEED
from clusterstats.core.grouping import cluster_sums
from clusterstats.core.intervals import (
    AUTO_BOOTSTRAP_MAX_CLUSTERS,
    auto_method,
    effective_clusters_df,
)


def test_auto_is_hybrid_korn_graubard_for_binary_and_bootstrap_t_then_cr2_for_continuous():
    assert auto_method(is_binary=True, n_clusters=10) == "korn_graubard_hybrid"
    assert auto_method(is_binary=True, n_clusters=10_000) == "korn_graubard_hybrid"
    assert auto_method(is_binary=False, n_clusters=30) == "bootstrap_t"
    assert auto_method(is_binary=False, n_clusters=AUTO_BOOTSTRAP_MAX_CLUSTERS) == "bootstrap_t"
    assert auto_method(is_binary=False, n_clusters=AUTO_BOOTSTRAP_MAX_CLUSTERS + 1) == "cr2"
    frame = cs.simulate(40, 5, mean=0.3, icc=0.2, seed=1)
    assert cs.cluster_ci(frame, "y", by="cluster").method == "korn_graubard_hybrid"
    scores = cs.simulate(40, 5, mean=0.3, icc=0.2, seed=1, outcome="continuous")
    assert cs.cluster_ci(scores, "y", by="cluster").method == "bootstrap_t"


def test_auto_unites_the_hybrid_with_the_score_interval_for_a_rate_over_uneven_clusters():
    # A pooled rate over 20 or more clusters of uneven sizes is a ratio of totals: the
    # default is the hybrid's union with the score interval, and exactly that union.
    uneven = cs.simulate(40, 5, mean=0.3, icc=0.2, size_cv=0.8, seed=1)
    found = cs.cluster_ci(uneven, "y", by="cluster")
    union = cs.cluster_ci(uneven, "y", by="cluster", method="korn_graubard_hybrid_or_score")
    assert found.method == "korn_graubard_hybrid_or_score"
    assert (found.low, found.high, found.design_effect) == (
        union.low,
        union.high,
        union.design_effect,
    )
    hybrid = cs.cluster_ci(uneven, "y", by="cluster", method="korn_graubard_hybrid")
    # widened by the score side here: the design effect scales with the squared width ratio
    ratio = (found.high - found.low) / (hybrid.high - hybrid.low)
    assert ratio > 1
    assert found.design_effect == pytest.approx(hybrid.design_effect * ratio**2, rel=1e-12)
    # the cluster_mean estimand is no ratio, and fewer than 20 clusters keep the hybrid
    means = cs.cluster_ci(uneven, "y", by="cluster", estimand="cluster_mean")
    assert means.method == "korn_graubard_hybrid"
    few = cs.simulate(19, 5, mean=0.3, icc=0.2, size_cv=0.8, seed=1)
    with pytest.warns(cs.FewClustersWarning):
        assert cs.cluster_ci(few, "y", by="cluster").method == "korn_graubard_hybrid"
    # the design effect the result reports is the one DesignEffect reports for the default
    deff = cs.design_effect(uneven, "y", by="cluster")
    assert deff.design_effect == pytest.approx(found.design_effect, rel=1e-12)


def test_default_bootstrap_draws_are_reproducible_and_seedable():
    # rng=None is the fixed DEFAULT_SEED: the default interval is one answer, on every call.
    scores = cs.simulate(30, 4, mean=0.3, icc=0.2, seed=2, outcome="continuous")
    first = cs.cluster_ci(scores, "y", by="cluster", n_resamples=500)
    again = cs.cluster_ci(scores, "y", by="cluster", n_resamples=500)
    seeded = cs.cluster_ci(scores, "y", by="cluster", n_resamples=500, rng=DEFAULT_SEED)
    other = cs.cluster_ci(scores, "y", by="cluster", n_resamples=500, rng=DEFAULT_SEED + 1)
    assert (first.low, first.high) == (again.low, again.high) == (seeded.low, seeded.high)
    assert first.n_resamples == 500
    # a different seed moves a bound that the bootstrap (not the CR2 floor) sets
    cr2 = cs.cluster_ci(scores, "y", by="cluster", method="cr2")
    moved = [
        (a, b)
        for a, b, c in ((first.low, other.low, cr2.low), (first.high, other.high, cr2.high))
        if a != c
    ]
    assert moved
    assert all(a != b for a, b in moved)


def test_effective_clusters_df():
    # equal |residuals|: every cluster informs the variance -> the full df
    assert effective_clusters_df(np.array([1.0, -1.0] * 10), 19.0) == 19.0
    # one cluster carries everything: r = 1/G, df = (G - 1) * 3 / G
    one = np.zeros(20)
    one[3] = 2.0
    assert effective_clusters_df(one, 19.0) == pytest.approx(19 * 3 / 20)
    # normal residuals: r is about 1/3, so the df stays near G - 1
    rng = np.random.default_rng(0)
    draws = [effective_clusters_df(rng.normal(size=200), 199.0) for _ in range(50)]
    assert np.median(draws) > 150
    assert effective_clusters_df(np.zeros(5), 4.0) == 4.0  # no residual at all: unchanged


def test_guarded_on_d1_by_hand(d1, reference):
    # Variance: max(CR2, p(1-p) * unequal-size deff(ICC) / N); REPORT §12 gives CR2, the ICC
    # and the Eldridge design effect of D1. df: CR2's 5.2863 reduced by the residual kurtosis.
    p, n = 0.5625, 32
    cr2 = reference["D1.mean_variance"]["CR2_general"]
    model = p * (1 - p) * reference["D1.deff_from_icc"]["eldridge(cv_pop)"] / n
    variance = max(cr2["var"], model)
    assert variance == model  # on D1 the ICC model is the larger
    sums = cluster_sums(d1["y"].to_numpy(float), d1["cluster"].to_numpy())
    residuals = sums.means * sums.counts - p * sums.counts
    e2 = residuals**2
    ratio = e2.sum() ** 2 / (8 * (e2 @ e2))
    df = min(cr2["df_satt"], max(1.0, 7 * min(1.0, 3 * ratio)))
    n_eff = p * (1 - p) / variance * (stats.t.ppf(0.025, n - 1) / stats.t.ppf(0.025, df)) ** 2
    low = stats.beta.ppf(0.025, n_eff * p, n_eff * (1 - p) + 1)
    high = stats.beta.ppf(0.975, n_eff * p + 1, n_eff * (1 - p))
    with pytest.warns(cs.FewClustersWarning):
        res = cs.cluster_ci(d1, "y", by="cluster", method="korn_graubard_guarded")
    assert res.se == pytest.approx(math.sqrt(variance), rel=1e-12)
    assert res.df == pytest.approx(df, rel=1e-12)
    assert (res.low, res.high) == (pytest.approx(low, rel=1e-10), pytest.approx(high, rel=1e-10))


def test_guarded_widens_when_a_rare_outcome_sits_in_one_small_cluster():
    # 20 clusters, 2 successes, both in a cluster of 3 rows: the design-based variance is tiny
    # and plain Korn-Graubard's upper bound excludes rates a big cluster could easily produce.
    sizes = [3] + [40] * 19
    rows = [(g, int(g == 0 and i < 2)) for g, n in enumerate(sizes) for i in range(n)]
    frame = pd.DataFrame(rows, columns=["cluster", "y"])
    plain = cs.cluster_ci(frame, "y", by="cluster", method="korn_graubard")
    guarded = cs.cluster_ci(frame, "y", by="cluster", method="korn_graubard_guarded")
    assert guarded.high > 2 * plain.high
    assert guarded.low <= plain.low


def test_guarded_cluster_mean_estimand_runs_and_contains_the_estimate():
    frame = cs.simulate(60, 8, mean=0.2, icc=0.3, size_cv=0.8, seed=3)
    res = cs.cluster_ci(
        frame, "y", by="cluster", estimand="cluster_mean", method="korn_graubard_guarded"
    )
    assert res.low < res.estimate < res.high


def test_guarded_needs_a_binary_outcome():
    frame = cs.simulate(30, 5, mean=0.0, icc=0.3, outcome="continuous", seed=2)
    with pytest.raises(cs.InvalidOutcomeError, match="binary"):
        cs.cluster_ci(frame, "y", by="cluster", method="korn_graubard_guarded")


def test_rule_of_three_matches_the_reference(reference):
    # REPORT §9 / reference_values.json "rule3.*"
    assert cs.rule_of_three(30) == pytest.approx(
        reference["rule3.n30"]["exact_one_sided_95_upper(1-0.05^(1/n))"], rel=1e-12
    )
    assert cs.rule_of_three(300) == pytest.approx(
        reference["rule3.n300"]["exact_one_sided_95_upper(1-0.05^(1/n))"], rel=1e-12
    )
    n_eff = reference["rule3.clustered_300runs_30items_rho0.3"]["n_eff"]
    assert cs.rule_of_three(300, n_clusters=30, icc=0.3) == pytest.approx(
        1 - 0.05 ** (1 / n_eff), rel=1e-12
    )
    assert cs.rule_of_three(300, n_clusters=30) == pytest.approx(cs.rule_of_three(30))
    with pytest.raises(cs.InvalidOptionError, match="n_clusters"):
        cs.rule_of_three(300, icc=0.3)


def test_all_pass_fallback_is_the_two_sided_clustered_rule_of_three():
    frame = pd.DataFrame({"case": np.repeat(np.arange(30), 10), "passed": 1})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.DegenerateDataWarning)
        res = cs.cluster_ci(frame, "passed", by="case", method="korn_graubard_guarded")
    # the failure rate's upper bound is 1 - low = the rule of three at confidence 97.5%
    assert 1 - res.low == pytest.approx(cs.rule_of_three(300, n_clusters=30, confidence=0.975))


def count_row_order_dependent_bca(n_frames: int = 200) -> int:
    """How many of ``n_frames`` random few-cluster frames of repeated scores give a seeded BCa
    interval that changes when the rows are shuffled (the bias correction counts replicates
    below the estimate; with few clusters many replicates equal it in exact arithmetic, and
    the order of summation put them either side)."""
    rng = np.random.default_rng(3)
    dependent = 0
    for _ in range(n_frames):
        g = int(rng.integers(3, 7))
        sizes = rng.integers(1, 5, g)
        rows = [(c, float(v)) for c in range(g) for v in rng.choice([0.1, 0.2, 0.3, 0.7], sizes[c])]
        frame = pd.DataFrame(rows, columns=["g", "y"])
        options = {"method": "bootstrap_bca", "n_resamples": 999, "rng": 1}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cs.ClusterStatsWarning)
            try:
                base = cs.cluster_ci(frame, "y", by="g", **options)
            except cs.ClusterStatsError:  # e.g. every score equal
                continue
            for seed in range(3):
                shuffled = frame.sample(frac=1.0, random_state=seed)
                other = cs.cluster_ci(shuffled, "y", by="g", **options)
                if abs(other.low - base.low) > 1e-12 or abs(other.high - base.high) > 1e-12:
                    dependent += 1
                    break
    return dependent


def test_seeded_bca_does_not_depend_on_the_row_order():
    """74 of these 200 frames gave row-order-dependent intervals before replicates within
    rounding of the estimate counted as ties (measured on the previous commit)."""
    assert count_row_order_dependent_bca(200) == 0
