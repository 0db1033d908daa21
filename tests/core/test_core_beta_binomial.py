"""``korn_graubard_inverted``: the restricted beta-binomial ICC and the test inversion.

Every expected value is computed independently here: the restricted ICC by maximising
``scipy.stats.betabinom``'s log-likelihood on a fine grid and a bounded scalar search; the
bounds through ``scipy.stats.binom`` (integer counts) or from closed forms.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import optimize, special, stats

import clusterstats as cs
import clusterstats.core.beta_binomial as beta_binomial
from clusterstats.core.beta_binomial import (
    MAX_ICC,
    inverted_korn_graubard,
    restricted_icc,
    tail_counts,
)


def reference_icc(x, n, mu):
    """argmax over rho in [0, MAX_ICC] of sum log betabinom.pmf(x | n, mean mu, ICC rho)."""

    def negative(rho):
        if rho <= 1e-12:
            return -stats.binom.logpmf(x, n, mu).sum()
        a, b = mu * (1 - rho) / rho, (1 - mu) * (1 - rho) / rho
        return -stats.betabinom.logpmf(x, n, a, b).sum()

    grid = np.linspace(0.0, MAX_ICC, 981)
    values = np.array([negative(r) for r in grid])
    k = int(np.argmin(values))
    lo, hi = grid[max(k - 1, 0)], grid[min(k + 1, grid.size - 1)]
    found = optimize.minimize_scalar(
        negative, bounds=(lo, hi), method="bounded", options={"xatol": 1e-12}
    )
    return found.x if found.fun <= values[k] else grid[k]


@pytest.mark.parametrize("seed", range(12))
def test_restricted_icc_is_the_beta_binomial_maximum_likelihood_with_the_mean_fixed(seed):
    rng = np.random.default_rng(seed)
    g = int(rng.integers(3, 40))
    n = rng.integers(1, 25, g)
    x = rng.binomial(n, rng.beta(0.5, 3.0, g))
    if x.sum() in (0, n.sum()):
        x[0] = 1 - x[0] if n[0] == 1 else 1
    tails = tail_counts(x, n)
    mus = np.array([0.02, 0.1, 0.3, 0.7])
    ours = restricted_icc(tails, mus)
    for mu, rho in zip(mus, ours, strict=True):
        assert rho == pytest.approx(reference_icc(x, n, mu), abs=1e-6)


def test_a_newton_step_that_lands_on_a_zero_score_stops_there(monkeypatch):
    """The demo's first model (24 questions per source) at its pooled share: a Newton step
    lands where the score is exactly 0.0. The search used to bisect away from that maximum
    until the bracket shrank to the tolerance (14 score evaluations); it now stops (6)."""
    demo = cs.load_demo_data()
    one = demo[demo["model"] == demo["model"].iloc[0]]
    first24 = one.sort_values("question_id").groupby("src").head(24)
    per_source = first24.groupby("src")["correct"].agg(["sum", "count"])
    x, n = per_source["sum"].to_numpy(), per_source["count"].to_numpy()
    tails = tail_counts(x, n)
    mu = x.sum() / n.sum()
    evaluations = []
    score = beta_binomial._score

    def counted(*args):
        evaluations.append(1)
        return score(*args)

    monkeypatch.setattr(beta_binomial, "_score", counted)
    rho = restricted_icc(tails, mu)[0]
    assert rho == pytest.approx(reference_icc(x, n, mu), abs=1e-6)
    assert len(evaluations) <= 8


def test_tail_counts_count_clusters_above_each_level():
    tails = tail_counts(np.array([0, 2, 1]), np.array([1, 3, 2]))
    # successes > i: i=0 -> {2,1} = 2, i=1 -> {2} = 1; failures 1,1,1 -> i=0: 3; rows 1,3,2
    assert tails.successes.tolist() == [2, 1, 0]
    assert tails.failures.tolist() == [3, 0, 0]
    assert tails.rows.tolist() == [3, 2, 1]


def test_no_success_puts_the_icc_at_its_largest_value_and_the_bound_in_closed_form():
    """With x = 0 every candidate mean is fitted best by the largest ICC (each cluster agrees
    with itself), so n0 = N / (1 + 0.98 (Q - 1)) and the mid-p upper bound solves
    (1/2) (1 - mu)^n0 = alpha / 2: mu = 1 - alpha^(1 / n0)."""
    n = np.array([5, 10, 20, 15, 30, 8, 12, 25, 9, 16], dtype=float)
    x = np.zeros_like(n)
    found = inverted_korn_graubard(x, n, 0.0, estimand="pooled", confidence=0.95)
    n_rows, q = n.sum(), (n @ n) / n.sum()
    n0 = n_rows / (1 + MAX_ICC * (q - 1))
    assert found.low == 0.0
    assert found.high == pytest.approx(1 - 0.05 ** (1 / n0), rel=1e-9)
    assert found.n_eff == pytest.approx(n0, rel=1e-12)
    # all successes: the mirror image
    mirror = inverted_korn_graubard(n, n, 1.0, estimand="pooled", confidence=0.95)
    assert mirror.high == 1.0
    assert mirror.low == pytest.approx(0.05 ** (1 / n0), rel=1e-9)


def mid_p_binomial_interval(x, n, confidence, weight):
    """Mid-p test inversion of Bin(n, mu) with integer x, through scipy.stats.binom."""
    alpha = 1 - confidence

    def lower_tail(mu):  # P(Y < x) + w P(Y = x)
        return stats.binom.cdf(x - 1, n, mu) + weight * stats.binom.pmf(x, n, mu) - alpha / 2

    def upper_tail(mu):  # P(Y > x) + w P(Y = x)
        return stats.binom.sf(x, n, mu) + weight * stats.binom.pmf(x, n, mu) - alpha / 2

    low = 0.0 if x == 0 else optimize.brentq(upper_tail, 1e-15, x / n, xtol=1e-15)
    high = 1.0 if x == n else optimize.brentq(lower_tail, x / n, 1 - 1e-15, xtol=1e-15)
    return low, high


@pytest.mark.parametrize(("x", "n"), [(0, 20), (1, 20), (7, 20), (19, 20), (3, 50), (25, 50)])
def test_one_row_per_cluster_is_the_mid_p_binomial_interval_with_weight_0_7(x, n):
    y = (np.arange(n) < x).astype(float)
    found = inverted_korn_graubard(y, np.ones(n), x / n, estimand="pooled", confidence=0.95)
    low, high = mid_p_binomial_interval(x, n, 0.95, 0.7)
    assert found.low == pytest.approx(low, abs=1e-10)
    assert found.high == pytest.approx(high, abs=1e-10)


def test_equal_clusters_without_overdispersion_are_the_mid_p_binomial_interval():
    """Every cluster 2 of 10 (underdispersed): the restricted ICC is 0 near the estimate, so
    n0 = N and the interval is the mid-p (weight 1/2) binomial one on 40 of 200."""
    n = np.full(20, 10.0)
    x = np.full(20, 2.0)
    found = inverted_korn_graubard(x, n, 0.2, estimand="pooled", confidence=0.95)
    assert found.icc == 0.0
    low, high = mid_p_binomial_interval(40, 200, 0.95, 0.5)
    assert found.low == pytest.approx(low, abs=1e-10)
    assert found.high == pytest.approx(high, abs=1e-10)


def binomial_cdf(k, n, mu):
    """P(Y <= k), Y ~ Bin(n, mu), continuous in k and n (Korn & Graubard's extension)."""
    return 0.0 if k <= -1 else special.betainc(n - k, k + 1, 1 - mu)


def test_each_bound_is_where_its_one_sided_mid_p_value_equals_alpha_over_two():
    """At each returned bound, recompute the restricted ICC, n0 and the p-value with scipy's
    binomial through the incomplete beta (independent of the search)."""
    rng = np.random.default_rng(3)
    n = rng.integers(3, 30, 25).astype(float)
    x = rng.binomial(n.astype(int), rng.beta(1, 6, 25)).astype(float)
    for estimand, estimate in (("pooled", x.sum() / n.sum()), ("cluster_mean", np.mean(x / n))):
        found = inverted_korn_graubard(x, n, estimate, estimand=estimand, confidence=0.9)
        tails = tail_counts(x, n)
        g = n.size
        for mu, side in ((found.low, "lower"), (found.high, "upper")):
            rho = reference_icc(x, n, mu)
            assert restricted_icc(tails, mu)[0] == pytest.approx(rho, abs=1e-6)
            if estimand == "pooled":
                n0 = n.sum() / (1 + rho * ((n @ n) / n.sum() - 1))
            else:
                n0 = g**2 / np.sum((1 + (n - 1) * rho) / n)
            x0 = estimate * n0
            below, at_most = binomial_cdf(x0 - 1, n0, mu), binomial_cdf(x0, n0, mu)
            upper_bound_p = 0.5 * below + 0.5 * at_most
            p = upper_bound_p if side == "upper" else 1 - upper_bound_p
            assert p == pytest.approx(0.05, abs=2e-6)


def test_one_success_is_not_narrower_than_none():
    """The failure of a plug-in ICC estimate (see docs/estimands-and-methods.md): 1 success
    in 20 clusters of 20 rows must not get a far smaller upper bound than 0 successes."""
    n = np.full(20, 20.0)
    none = inverted_korn_graubard(np.zeros(20), n, 0.0, estimand="pooled", confidence=0.95)
    one = np.zeros(20)
    one[0] = 1
    single = inverted_korn_graubard(one, n, 1 / 400, estimand="pooled", confidence=0.95)
    assert single.high > 0.8 * none.high
    assert single.icc_high > 0.5  # under the upper bound, one success is strong clustering


def test_cluster_ci_reports_the_model_the_interval_used():
    rng = np.random.default_rng(0)
    g = np.repeat(np.arange(30), 12)
    y = (rng.random(g.size) < rng.beta(1, 4, 30)[g]).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = cs.cluster_ci(None, y, g, method="korn_graubard_inverted")
    found = inverted_korn_graubard(
        np.bincount(g, y),
        np.bincount(g).astype(float),
        y.mean(),
        estimand="pooled",
        confidence=0.95,
    )
    assert (res.low, res.high) == (found.low, found.high)
    # the test runs at n0 = found.n_eff; the design effect is reported like every method's,
    # the variance p (1 - p) / n0 over s^2 / N = p (1 - p) / (N - 1)
    assert res.design_effect == pytest.approx((res.n_rows - 1) / found.n_eff, rel=1e-14)
    assert res.n_eff == pytest.approx(res.n_rows / res.design_effect, rel=1e-15)
    assert res.se == pytest.approx(np.sqrt(res.estimate * (1 - res.estimate) / found.n_eff))
    assert res.se == pytest.approx(math.sqrt(y.mean() * (1 - y.mean()) / found.n_eff), rel=1e-15)
    assert math.isnan(res.df)


@pytest.mark.parametrize("pattern", ["zeros", "ones", "same_rate", "one_cluster_carries_all"])
def test_degenerate_data_get_an_interval_of_positive_width(pattern):
    g = np.repeat(np.arange(20), 5)
    y = {
        "zeros": np.zeros(100),
        "ones": np.ones(100),
        "same_rate": np.tile([1.0, 0, 0, 0, 0], 20),
        "one_cluster_carries_all": (g == 0).astype(float),
    }[pattern]
    if pattern in ("zeros", "ones"):  # the data cannot show how strongly they cluster
        with pytest.warns(cs.DegenerateDataWarning, match="largest ICC searched"):
            res = cs.cluster_ci(None, y, g, method="korn_graubard_inverted")
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            res = cs.cluster_ci(None, y, g, method="korn_graubard_inverted")
    assert res.method == "korn_graubard_inverted"
    assert res.high - res.low > 0
    assert 0.0 <= res.low <= res.estimate <= res.high <= 1.0
