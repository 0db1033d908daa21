"""The degrees of freedom of uneven cluster sizes, and the defaults built on them.

``cr2_ik`` is CR2 with the Satterthwaite df under a random-effects working model whose ICC is
the Moulton moment estimate (Imbens & Kolesár 2016). The reference values are printed by
``Rscript tests/r/uneven_df.R`` (explicit N x N matrices; R's
``dfadjust::dfadjustSE(lm(y ~ 1), cl, IK = TRUE, rho0 = TRUE)`` gives the same numbers), and
the data it uses are in ``tests/reference/data/uneven.csv.xz``.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats.core.grouping import ClusterSums, cluster_sums
from clusterstats.core.summary import (
    default_design_effect,
    design_based_floor,
    summarize_interval,
    uneven_sizes_df,
)
from clusterstats.core.variance import (
    cluster_robust,
    design_effect_unequal,
    moulton_icc,
    satterthwaite_df_cr2,
    working_model_df,
)

DATA = Path(__file__).resolve().parents[1] / "reference" / "data"

# Rscript tests/r/uneven_df.R (R 4.2.2):
#   d1.df 4.1995074118531859      d1.icc 0.26214526214526213
#   uneven.df 5.7880394785194254  uneven.icc 0.21978325072637894
#   uneven_score.df 5.6939828410216853  uneven_score.icc 0.31409634206164844
#   uneven_score.cr3_ik.df 5.387788503919956
#   uneven_score.cr3.variance 0.0041681771918749989  (clubSandwich vcovCR(type = "CR3"))
#   uneven_score.cr3.df 11.664130772957774  (coef_test(test = "Satterthwaite"))
CR3_REFERENCE = (5.387788503919956, 0.0041681771918749989, 11.664130772957774)
R_REFERENCE = {
    "d1": (4.1995074118531859, 0.26214526214526213),
    "y": (5.7880394785194254, 0.21978325072637894),
    "score": (5.6939828410216853, 0.31409634206164844),
}


def d1_sums() -> ClusterSums:
    n = np.array([2, 3, 5, 4, 6, 1, 8, 3.0])
    t = np.array([1, 3, 2, 4, 1, 1, 6, 0.0])
    return ClusterSums(n, t, t)


def uneven() -> pd.DataFrame:
    return pd.read_csv(DATA / "uneven.csv.xz")


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return fn(*args, **kwargs)


@pytest.mark.parametrize("name", ["d1", "y", "score"])
def test_df_and_icc_match_r(name):
    if name == "d1":
        sums = d1_sums()
    else:
        frame = uneven()
        sums = cluster_sums(frame[name].to_numpy(float), frame.cluster.to_numpy() - 1)
    df, icc = R_REFERENCE[name]
    assert moulton_icc(sums) == pytest.approx(icc, rel=1e-12)
    assert working_model_df(sums.counts, moulton_icc(sums), "pooled") == pytest.approx(
        df, rel=1e-12
    )
    assert uneven_sizes_df(sums, "pooled") == pytest.approx(df, rel=1e-12)


def test_cr3_matches_clubsandwich_and_cr3_ik_the_explicit_matrices():
    frame = uneven()
    cr3_ik_df, variance, df = CR3_REFERENCE
    cr3 = quiet(cs.cluster_ci, frame, "score", by="cluster", method="cr3")
    assert cr3.se**2 == pytest.approx(variance, rel=1e-12)
    assert cr3.df == pytest.approx(df, rel=1e-12)
    ik = quiet(cs.cluster_ci, frame, "score", by="cluster", method="cr3_ik")
    assert ik.df == pytest.approx(cr3_ik_df, rel=1e-12)
    assert ik.se == cr3.se


def test_cr2_ik_on_a_frame_uses_that_df_and_the_cr2_variance():
    frame = uneven()
    res = quiet(cs.cluster_ci, frame, "score", by="cluster", method="cr2_ik")
    cr2 = quiet(cs.cluster_ci, frame, "score", by="cluster", method="cr2")
    assert res.df == pytest.approx(R_REFERENCE["score"][0], rel=1e-12)
    assert res.se == cr2.se
    assert res.low < cr2.low < cr2.high < res.high  # fewer df: wider


def test_independent_rows_give_clubsandwich_df_and_equal_sizes_give_g_minus_1():
    rng = np.random.default_rng(0)
    for _ in range(20):
        n = rng.integers(1, 300, size=int(rng.integers(3, 40))).astype(float)
        assert working_model_df(n, 0.0, "pooled") == pytest.approx(
            satterthwaite_df_cr2(n, n.sum()), rel=1e-12
        )
        for rho in (0.0, 0.2, 1.0):
            assert working_model_df(np.full(n.shape, 7.0), rho, "pooled") == n.shape[0] - 1
            assert working_model_df(np.full(n.shape, 7.0), rho, "cluster_mean") == n.shape[0] - 1


def test_working_df_takes_several_designs_at_once():
    rng = np.random.default_rng(1)
    n = rng.integers(1, 200, size=(6, 25)).astype(float)
    for estimand in ("pooled", "cluster_mean"):
        batch = working_model_df(n, 0.15, estimand)
        assert batch == pytest.approx([working_model_df(row, 0.15, estimand) for row in n])


def test_few_large_clusters_leave_few_df():
    # MMLU-Pro by source: 91 clusters of 17 to 1,003 questions, df near 9 (CR2's is 42)
    mmlu = cs.datasets.load("mmlu_pro")
    llama = mmlu[mmlu.model == "Meta-Llama-3.1-8B-Instruct"]
    res = llama.eval.cluster_ci("correct", by="src", method="cr2_ik")
    cr2 = llama.eval.cluster_ci("correct", by="src", method="cr2")
    assert 8 < res.df < 11 < 40 < cr2.df < 45


def test_each_interval_contains_the_one_before_it():
    # cr2 inside cr2_ik inside cr3_ik inside bootstrap_t: more variance, fewer df
    rng = np.random.default_rng(2)
    for _ in range(25):
        g = int(rng.integers(4, 30))
        n = rng.integers(1, 60, size=g).astype(float)
        y = rng.normal(rng.normal(size=g).repeat(n.astype(int)), 1.0) ** 2
        sums = cluster_sums(y, np.repeat(np.arange(g), n.astype(int)))
        found = {
            m: quiet(
                summarize_interval,
                sums,
                estimand="pooled",
                method=m,
                confidence=0.95,
                is_binary=False,
                n_resamples=499,
                rng=np.random.default_rng(0),
            )
            for m in ("cr2", "cr2_ik", "cr3", "cr3_ik", "bootstrap_t")
        }
        for inner, outer in (
            ("cr2", "cr2_ik"),
            ("cr2_ik", "cr3_ik"),
            ("cr2", "cr3"),
            ("cr3", "cr3_ik"),
            ("cr3_ik", "bootstrap_t"),
        ):
            assert found[outer].low <= found[inner].low, (inner, outer)
            assert found[outer].high >= found[inner].high, (inner, outer)


def _binary_sums(rng, g, sizes, rates):
    y = (rng.random(int(sizes.sum())) < np.repeat(rates, sizes.astype(int))).astype(float)
    return cluster_sums(y, np.repeat(np.arange(g), sizes.astype(int)))


def test_hybrid_contains_the_inverted_interval_and_uses_the_larger_design_effect():
    rng = np.random.default_rng(3)
    for _ in range(15):
        g = int(rng.integers(10, 40))
        sizes = rng.integers(1, 200, size=g).astype(float)
        sums = _binary_sums(rng, g, sizes, rng.beta(2, 3, size=g))
        args = {"estimand": "pooled", "confidence": 0.95, "is_binary": True}
        inverted = quiet(summarize_interval, sums, method="korn_graubard_inverted", **args)
        hybrid = quiet(summarize_interval, sums, method="korn_graubard_hybrid", **args)
        assert hybrid.low <= inverted.low + 1e-12
        assert hybrid.high >= inverted.high - 1e-12
        design = design_based_floor(sums, "pooled", hybrid.estimate, 0.95)
        # reported over s^2 / N = p (1 - p) / (N - 1), as every method's
        scale = (sums.n_rows - 1) / sums.n_rows
        assert hybrid.design_effect == pytest.approx(
            max(inverted.design_effect, design.design_effect * scale), rel=1e-12
        )
        assert hybrid.n_eff == pytest.approx(sums.n_rows / hybrid.design_effect, rel=1e-12)
        # the design effect of the default, however it is asked for (with 20 or more
        # clusters of uneven sizes, the default is the union with the score interval)
        default = quiet(summarize_interval, sums, method="auto", **args)
        assert default.method == (
            "korn_graubard_hybrid_or_score" if g >= 20 else "korn_graubard_hybrid"
        )
        assert default_design_effect(sums, "pooled", True)[0] == pytest.approx(
            default.design_effect, rel=1e-12
        )


def test_hybrid_floor_is_the_cr2_design_effect_stretched_by_the_lost_df():
    sums = d1_sums()
    p = float(sums.totals.sum() / sums.counts.sum())
    floor = design_based_floor(sums, "pooled", p, 0.95)
    cr2 = cluster_robust(sums, "pooled", "CR2").variance
    assert floor.design_effect == pytest.approx(32 * cr2 / (p * (1 - p)), rel=1e-14)
    assert floor.df == pytest.approx(R_REFERENCE["d1"][0], rel=1e-12)
    # t quantiles: t_{4.1995} / t_7 at 0.975, from scipy
    from scipy import stats

    stretch = stats.t.ppf(0.975, R_REFERENCE["d1"][0]) / stats.t.ppf(0.975, 7)
    assert floor.floor == pytest.approx(floor.design_effect * stretch**2, rel=1e-12)
    # equal sizes: no stretch
    equal = ClusterSums(np.full(8, 5.0), np.array([1, 3, 2, 4, 1, 1, 5, 0.0]), np.zeros(8))
    equal = ClusterSums(equal.counts, equal.totals, equal.totals)
    found = design_based_floor(equal, "pooled", 17 / 40, 0.95)
    assert found.floor == found.design_effect


def test_hybrid_keeps_the_models_bound_for_a_rare_outcome():
    # one success in 20 clusters of 20 rows: the upper bound the model's restricted ICC
    # gives (the design-based variance, from one cluster, would give 0.03)
    y = np.zeros(400)
    y[0] = 1
    g = np.repeat(np.arange(20), 20)
    inverted = quiet(cs.cluster_ci, None, y, g, method="korn_graubard_inverted")
    hybrid = quiet(cs.cluster_ci, None, y, g, method="korn_graubard_hybrid")
    cr2 = quiet(cs.cluster_ci, None, y, g, method="cr2")
    assert hybrid.high == pytest.approx(inverted.high, rel=1e-9)
    assert hybrid.high > 4 * cr2.high
    assert hybrid.low <= inverted.low


def test_one_design_effect_on_every_result():
    mmlu = cs.datasets.load("mmlu_pro")
    llama = mmlu[mmlu.model == "Meta-Llama-3.1-8B-Instruct"]
    ci = llama.eval.cluster_ci("correct", by="src")
    deff = llama.eval.design_effect("correct", by="src")
    plan = llama.eval.plan("correct", "src")
    report = llama.eval.report("correct", "src")
    check = quiet(llama.eval.check_clustering, "correct", ["src"])
    values = {
        "ClusterCI": ci.design_effect,
        "DesignEffect": deff.design_effect,
        "Plan": plan.design_effect,
        "Report": report.to_frame()["design_effect"].iloc[0],
        "check_clustering": check.to_frame()["design_effect"].iloc[0],
    }
    assert all(v == pytest.approx(ci.design_effect, rel=1e-12) for v in values.values()), values
    assert deff.n_eff == pytest.approx(ci.n_eff, rel=1e-12)
    assert float(deff) == deff.design_effect
    # the figures that are not the design effect carry their own names
    assert deff.linearized < deff.design_effect
    assert deff.unequal_sizes < deff.design_effect
    assert deff.unequal_sizes == pytest.approx(
        design_effect_unequal(
            llama.groupby("src").size().to_numpy(float), max(deff.icc, 0), "pooled"
        ),
        rel=1e-12,
    )
    # a continuous outcome: the default's is the CR2 one
    tau = cs.datasets.load("tau_bench_airline")
    score = tau.eval.cluster_ci("n_messages", by="user_id")
    assert tau.eval.design_effect("n_messages", by="user_id").design_effect == pytest.approx(
        score.design_effect, rel=1e-12
    )


def test_the_design_effect_is_that_of_the_variance_the_interval_uses():
    frame = uneven()
    methods = (
        ("cr1", "CR1"),
        ("cr2", "CR2"),
        ("cr2_ik", "CR2"),
        ("cr3", "CR3"),
        ("cr3_ik", "CR3"),
        ("bootstrap_t", "CR3"),
    )
    for method, kind in methods:
        res = quiet(cs.cluster_ci, frame, "score", by="cluster", method=method, rng=0)
        sums = cluster_sums(frame.score.to_numpy(float), frame.cluster.to_numpy() - 1)
        iid = frame.score.var(ddof=1) / len(frame)
        assert res.design_effect == pytest.approx(
            cluster_robust(sums, "pooled", kind).variance / iid, rel=1e-12
        ), method
    naive = quiet(cs.cluster_ci, frame, "score", by="cluster", method="naive")
    assert naive.design_effect == pytest.approx(1.0, rel=1e-12)


def test_working_model_bias_closed_forms():
    from clusterstats.core.variance import working_model_bias

    n = np.array([2, 3, 5, 4, 6, 1, 8, 3.0, 40.0])
    # CR2 is unbiased with independent rows (Bell & McCaffrey 2002), and for the mean of
    # cluster means whatever the ICC: sum_g w_g Var(r_g) = G/(G-1) * sum(lam) (G-1)/G
    assert working_model_bias(n, 0.0, "pooled") == pytest.approx(1.0, rel=1e-12)
    for icc in (0.0, 0.3, 0.9):
        assert working_model_bias(n, icc, "cluster_mean") == pytest.approx(1.0, rel=1e-12)
    # CR3 with independent rows: Var(e_g) = n_g (1 - n_g/N), weighted by (1 - n_g/N)^-2
    expected = float(np.sum(n / (1.0 - n / n.sum())) / n.sum())
    assert working_model_bias(n, 0.0, "pooled", jackknife=True) == pytest.approx(expected)
    # equal sizes: CR3 over-estimates by G/(G-1), whatever the ICC
    for icc in (0.0, 0.4):
        assert working_model_bias(np.full(6, 5.0), icc, "pooled", jackknife=True) == (
            pytest.approx(6 / 5)
        )
    # several designs along the last axis at once
    both = working_model_bias(np.stack([n, n[::-1]]), 0.2, "pooled", jackknife=True)
    assert both == pytest.approx([working_model_bias(n, 0.2, "pooled", jackknife=True)] * 2)


def test_working_model_bias_matches_the_simulated_cr2_and_cr3_variances():
    from clusterstats.core.variance import working_model_bias

    rng = np.random.default_rng(11)
    n = np.array([3, 4, 5, 6, 8, 10, 15, 60.0])
    icc, reps = 0.2, 4000
    codes = np.repeat(np.arange(n.size), n.astype(int))
    lam = n * (1.0 + (n - 1.0) * icc)
    truth = lam.sum() / n.sum() ** 2  # the variance of the pooled mean, unit row variance
    found = {"CR2": [], "CR3": []}
    for _ in range(reps):
        y = np.sqrt(icc) * rng.standard_normal(n.size)[codes]
        y += np.sqrt(1.0 - icc) * rng.standard_normal(codes.size)
        sums = cluster_sums(y, codes)
        for kind in found:
            found[kind].append(cluster_robust(sums, "pooled", kind).variance)
    for kind, jackknife in (("CR2", False), ("CR3", True)):
        ratio = np.asarray(found[kind]) / truth
        mc_se = ratio.std(ddof=1) / np.sqrt(reps)
        expected = working_model_bias(n, icc, "pooled", jackknife=jackknife)
        assert abs(ratio.mean() - expected) < 4 * mc_se, (kind, ratio.mean(), expected)
    assert working_model_bias(n, icc, "pooled", jackknife=True) > 1.2  # a real inflation
