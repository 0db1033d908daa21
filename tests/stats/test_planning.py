"""Planning, which grouping matters, the report, and the plots.

Sources of expected numbers: seed 003's worked example (n_eff 181.8 / 190.5 / 363.6) and
REPORT §7 (`reference_values.json` "planning"), statsmodels' `cov_cluster_2groups` for the
two-way variance, and closed-form identities derived in the tests.
"""

from __future__ import annotations

import io
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import special

import clusterstats as cs
from clusterstats.core import planning as pl


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return fn(*args, **kwargs)


def test_planning_formulas_against_report(reference):
    ref = reference["planning"]
    assert pl.variance_of_mean(0.25, 0.3, 30, 10) == pytest.approx(
        ref["var_pooled(sigma2=0.25,rho=0.3,K=30,m=10)"], rel=1e-12
    )
    assert pl.optimal_cluster_size(10, 1, 0.3) == pytest.approx(
        ref["m_opt(c1=10,c2=1,rho=0.3)"], rel=1e-12
    )
    assert pl.optimal_cluster_size(100, 1, 0.05) == pytest.approx(
        ref["m_opt(c1=100,c2=1,rho=0.05)"], rel=1e-12
    )
    assert pl.clusters_for_half_width(0.25, 0.3, 10, 0.05) == pytest.approx(
        ref["K_for_halfwidth(p=0.5,rho=0.3,m=10,h=0.05,z)"], rel=1e-9
    )
    # REPORT section 7: 145 clusters with the t quantile
    assert math.ceil(pl.clusters_for_half_width(0.25, 0.3, 10, 0.05, t_quantile=True)) == 145
    assert pl.clusters_for_power(0.2, 0.2, 5, 0.03) == pytest.approx(627.9, abs=0.05)
    assert pl.clusters_for_power(0.2, 0.2, 1, 0.03) == pytest.approx(1744.2, abs=0.05)
    # the MDE is the inverse of the power calculation
    k = pl.clusters_for_power(0.2, 0.2, 5, 0.03)
    assert pl.minimum_detectable_effect(0.2, 0.2, k, 5) == pytest.approx(0.03, rel=1e-12)


def test_plan_reproduces_seed_003():
    plan = cs.plan(n_clusters=100, cluster_size=10, icc=0.5, proportion=0.5)
    options = {o[0]: o for o in plan.options}
    assert round(options["current"][4], 1) == 181.8
    assert round(options["double the depth"][4], 1) == 190.5
    assert round(options["double the clusters"][4], 1) == 363.6
    assert plan.n_eff_ceiling == pytest.approx(200)
    assert plan.design_effect == pytest.approx(5.5)
    assert list(plan.to_frame().columns) == list(cs.Plan.columns)


def test_plan_with_costs_target_and_icc_range():
    plan = cs.plan(
        n_clusters=30,
        cluster_size=10,
        icc=0.3,
        proportion=0.5,
        cost_per_cluster=10,
        cost_per_row=1,
        target_half_width=0.05,
        icc_range=(0.1, 0.5),
    )
    assert plan.optimal_cluster_size == pytest.approx(4.83045891539648)
    optimal = plan.options[-1]
    assert optimal[0] == "cost-optimal depth, same cost"
    assert optimal[1] * (10 + optimal[2]) == pytest.approx(30 * (10 + 10))  # same cost
    assert optimal[4] > plan.n_eff  # more information for the money
    assert math.ceil(plan.clusters_needed) == 145
    table = plan.icc_table()
    assert table["icc"].tolist() == [0.1, 0.3, 0.5]
    assert table["n_eff"].is_monotonic_decreasing
    assert table["clusters_needed"].is_monotonic_increasing
    text = repr(plan)
    assert "ceiling 100 however deep the clusters" in text
    assert "145 clusters (115 more than the 30)" in text


def test_plan_rejects_bad_numbers():
    with pytest.raises(cs.InvalidOptionError, match="variance= or a pass rate"):
        cs.plan(n_clusters=10, cluster_size=5, icc=0.2)
    with pytest.raises(cs.InvalidOptionError, match="icc must be between 0 and 1"):
        cs.plan(n_clusters=10, cluster_size=5, icc=1.5, proportion=0.5)
    with pytest.raises(cs.InvalidOptionError, match="both cost_per_cluster and cost_per_row"):
        cs.plan(n_clusters=10, cluster_size=5, icc=0.2, proportion=0.5, cost_per_row=1)
    with pytest.raises(cs.InvalidOptionError, match="needs difference_variance"):
        cs.plan(n_clusters=10, cluster_size=5, icc=0.2, proportion=0.5, effect=0.1)


def test_pilot_plan(mmlu):
    llama = mmlu[mmlu.model == "Meta-Llama-3.1-8B-Instruct"]
    mixtral = mmlu[mmlu.model == "Mixtral-8x7B-Instruct-v0.1"]
    plan = llama.eval.plan("correct", "src", target_half_width=0.02)
    icc = llama.eval.icc("correct", by="src")
    assert plan.icc == pytest.approx(icc.icc, rel=1e-12)
    assert (plan.icc_low, plan.icc_high) == pytest.approx((icc.low, icc.high), rel=1e-12)
    assert plan.n_clusters == 91
    assert plan.cluster_size == pytest.approx(12032 / 91)
    assert plan.variance == pytest.approx(llama.correct.var(ddof=1), rel=1e-12)
    # the current row is the interval cluster_ci gives on the same rows, and so is its
    # design effect (the one definition)
    ci = llama.eval.cluster_ci("correct", by="src")
    assert plan.half_width == pytest.approx((ci.high - ci.low) / 2, rel=1e-12)
    assert plan.options[0][5] == plan.half_width
    assert plan.design_effect == pytest.approx(ci.design_effect, rel=1e-12)
    assert plan.n_eff == pytest.approx(ci.n_eff, rel=1e-12)
    assert plan.df == pytest.approx(uneven_sizes_df_of(llama), rel=1e-12)
    # the target: the projected half-width at the planned clusters is the target
    scaled = pl.ScaledDesign(
        half_width=plan.half_width,
        df=plan.df,
        n_clusters=91,
        confidence=0.95,
        sizes=llama.groupby("src").size().to_numpy(float),
        icc=moulton_icc_of(llama),
    )
    assert scaled.half_width(plan.clusters_needed) == pytest.approx(0.02, rel=1e-9)
    assert plan.more_clusters_needed == math.ceil(plan.clusters_needed) - 91
    paired = llama.eval.plan("correct", "src", other=mixtral, on="question_id", effect=0.02)
    diff = llama.set_index("question_id").correct - mixtral.set_index("question_id").correct
    assert paired.quantity == "paired difference"
    assert paired.difference_variance == pytest.approx(diff.var(ddof=1), rel=1e-10)
    delta = llama.eval.paired_delta(mixtral, "correct", by="src", on="question_id", how="inner")
    assert paired.estimate == pytest.approx(delta.delta, rel=1e-12)
    assert paired.half_width == pytest.approx((delta.high - delta.low) / 2, rel=1e-12)
    assert paired.minimum_detectable_effect > 0.02  # 91 clusters are too few for 0.02
    assert paired.clusters_for_power > 91
    assert paired.more_clusters_for_power == math.ceil(paired.clusters_for_power) - 91


def uneven_sizes_df_of(frame):
    from clusterstats.core.grouping import cluster_sums
    from clusterstats.core.summary import uneven_sizes_df

    codes = frame.src.astype("category").cat.codes.to_numpy()
    return uneven_sizes_df(cluster_sums(frame.correct.to_numpy(float), codes), "pooled")


def moulton_icc_of(frame):
    from clusterstats.core.grouping import cluster_sums
    from clusterstats.core.variance import moulton_icc

    codes = frame.src.astype("category").cat.codes.to_numpy()
    return moulton_icc(cluster_sums(frame.correct.to_numpy(float), codes))


def test_two_way_variance_matches_statsmodels():
    sm = pytest.importorskip("statsmodels.api")
    from statsmodels.stats.sandwich_covariance import cov_cluster_2groups

    rng = np.random.default_rng(4)
    n = 600
    doc = rng.integers(0, 40, n)
    template = rng.integers(0, 15, n)
    y = rng.normal(size=40)[doc] + rng.normal(size=15)[template] + rng.normal(size=n)
    fit = sm.OLS(y, np.ones(n)).fit()
    both, first, second = cov_cluster_2groups(fit, doc, template)
    from clusterstats.core.crossed import crossed_variance_of_rows

    two_way = crossed_variance_of_rows(y, [doc, template])
    v = two_way.variance
    va, vb = (variance for subset, _, variance in two_way.terms if len(subset) == 1)
    assert va == pytest.approx(first[0, 0], rel=1e-10)
    assert vb == pytest.approx(second[0, 0], rel=1e-10)
    assert v == pytest.approx(both[0, 0], rel=1e-10)


def test_check_clustering(mmlu):
    llama = mmlu[mmlu.model == "Meta-Llama-3.1-70B-Instruct"]
    check = quiet(llama.eval.check_clustering, "correct", ["src", "category"])
    frame = check.to_frame()
    assert list(frame.columns) == list(cs.ClusteringCheck.columns)
    src = frame.set_index("grouping").loc["src"]
    # the design effect and se of the interval cluster_ci gives (one definition), and the
    # linearised se the two-way comparison uses
    ci = llama.eval.cluster_ci("correct", by="src")
    assert src["design_effect"] == pytest.approx(ci.design_effect, rel=1e-12)
    assert src["icc"] == pytest.approx(ci.icc, rel=1e-12)
    cr1 = llama.eval.cluster_ci("correct", by="src", method="cr1")
    assert src["se_linearized"] == pytest.approx(cr1.se, rel=1e-12)
    # src is nested in category: a decomposition, not a crossed pair
    assert [level for level, _ in check.nested] == ["category", "src", "within"]
    assert sum(share for _, share in check.nested) == pytest.approx(1.0)
    assert check.crossed == ()
    assert check.recommendation.startswith("cluster by category")

    rng = np.random.default_rng(0)
    n = 2000
    crossed = pd.DataFrame({"doc": rng.integers(0, 50, n), "template": rng.integers(0, 30, n)})
    crossed["y"] = (
        rng.normal(size=50)[crossed.doc] + rng.normal(size=30)[crossed.template] > 0
    ).astype(float)
    two = crossed.eval.check_clustering("y", ["doc", "template"])
    assert len(two.crossed) == 1
    assert two.recommendation.startswith("cluster two-way by doc x template")


def test_check_clustering_time_windows():
    rng = np.random.default_rng(1)
    start = pd.Timestamp("2026-11-01 09:00")
    stamps = start + pd.to_timedelta(np.sort(rng.uniform(0, 600, 1200)), unit="min")
    outage = (stamps > start + pd.Timedelta(minutes=200)) & (
        stamps < start + pd.Timedelta(minutes=260)
    )
    passed = np.where(outage, 0.0, (rng.random(1200) < 0.8).astype(float))
    df = pd.DataFrame({"started_at": stamps, "passed": passed})
    check = df.eval.check_clustering("passed", time="started_at", window="10min")
    row = check.to_frame().iloc[0]
    assert row["grouping"] == "started_at per 10min"
    assert row["n_clusters"] == 60
    assert row["design_effect"] > 2  # failures bunch in the outage windows
    with pytest.raises(cs.InvalidOptionError, match="needs window"):
        df.eval.check_clustering("passed", time="started_at")


def test_report(mmlu):
    rep = mmlu.eval.report("correct", "src", over="model")
    frame = rep.to_frame()
    assert list(frame.columns) == list(cs.Report.columns)
    assert len(frame) == 4
    ci = mmlu[mmlu.model == "Mixtral-8x7B-Instruct-v0.1"].eval.cluster_ci("correct", by="src")
    row = frame.set_index("group").loc["Mixtral-8x7B-Instruct-v0.1"]
    assert row["low"] == pytest.approx(ci.low)
    assert row["n_eff"] == pytest.approx(ci.n_eff)
    sentence = row["sentence"]
    assert f"{ci.n_rows:,} examples in 91 src clusters" in sentence
    assert f"±{100 * (ci.high - ci.low) / 2:.1f} points" in sentence
    markdown = rep.to_markdown()
    assert markdown.startswith("**Report(correct by src)**\n\n| model | estimate |")
    assert "<table" in rep._repr_html_()
    single = mmlu[mmlu.model == "gemini-1.5-flash-002"].eval.report("correct", "src")
    assert single.to_frame()["n_missing"].iloc[0] == 20


def _png(ax) -> bytes:
    buffer = io.BytesIO()
    ax.figure.savefig(buffer, format="png", dpi=60)
    return buffer.getvalue()


def test_plots_render_to_png(mmlu):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grouped = mmlu.eval.cluster_ci("correct", by="src", over="model")
    ax = grouped.plot()
    png = _png(ax)
    assert png.startswith(b"\x89PNG")
    assert len(png) > 5000
    # two intervals per model (clustered and naive) and a point estimate
    thick = [line for line in ax.lines if line.get_linewidth() == 3 and len(line.get_xdata())]
    assert len(thick) == 4
    # highest estimate at the top (the last tick label, counted from the bottom)
    tick_labels = [t.get_text() for t in ax.get_yticklabels()]
    assert tick_labels[-1] == "gemini-1.5-flash-002"
    plt.close(ax.figure)
    single = grouped["gemini-1.5-flash-002"].plot()
    assert _png(single).startswith(b"\x89PNG")
    plt.close(single.figure)
    plan = cs.plan(n_clusters=100, cluster_size=10, icc=0.5, proportion=0.5)
    ax = plan.plot(kind="depth")
    assert _png(ax).startswith(b"\x89PNG")
    ceiling = [line for line in ax.lines if line.get_linestyle() == "--"]
    assert ceiling[0].get_ydata()[0] == pytest.approx(200)
    plt.close(ax.figure)
    rep = mmlu.eval.report("correct", "src", over="model")
    ax = rep.plot()
    assert len([t for t in ax.get_yticklabels() if t.get_text()]) == 4
    plt.close(ax.figure)


def test_html_of_plan_and_check(mmlu):
    plan = cs.plan(n_clusters=40, cluster_size=5, icc=0.3, proportion=0.07)
    html = plan._repr_html_()
    assert html.count("<tr") == 1 + len(plan.options)
    # seed 003's sentence: 200 examples in 40 documents (m = 5, ρ = 0.3) are worth about 91
    assert round(plan.n_eff) == 91
    assert plan.design_effect == pytest.approx(2.2)
    llama = mmlu[mmlu.model == "Meta-Llama-3.1-70B-Instruct"]
    check = quiet(llama.eval.check_clustering, "correct", ["src"])
    assert "cluster by src" in check._repr_html_()


def test_scaled_design_projects_the_jackknife_bias_out_of_its_power():
    from clusterstats.core.variance import working_model_bias

    sizes = np.array([20, 25, 30, 40, 50, 60, 80, 120, 400, 900.0])
    kwargs = dict(half_width=0.03, df=4.0, n_clusters=10, confidence=0.95, sizes=sizes)
    cr2 = pl.ScaledDesign(**kwargs, icc=0.1)
    cr3 = pl.ScaledDesign(**kwargs, icc=0.1, jackknife=True)
    # at the pilot's clusters both are the pilot's own interval
    assert cr2.half_width(10) == pytest.approx(0.03, rel=1e-12)
    assert cr3.half_width(10) == pytest.approx(0.03, rel=1e-12)
    # the jackknife's factor at the pilot is the working model's, and the true spread is
    # the pilot's se with that factor taken out
    bias = working_model_bias(sizes, 0.1, "pooled", jackknife=True)
    assert cr3.bias_at(10) == pytest.approx(bias, rel=1e-12)
    assert cr3.sd_at(10) == pytest.approx(cr3.se / math.sqrt(bias), rel=1e-12)
    assert cr2.bias_at(10) == pytest.approx(working_model_bias(sizes, 0.1, "pooled"))
    # more clusters dilute the largest: the factor falls towards 1
    assert 1.0 < cr3.bias_at(200) < cr3.bias_at(10)
    # the same interval found by a jackknife is a noisier estimate of a smaller spread:
    # fewer clusters give the same power
    assert cr3.clusters_for_power(0.03, power=0.8) < cr2.clusters_for_power(0.03, power=0.8)
    k = cr3.clusters_for_power(0.03, power=0.8)
    # (the drawn sizes' df and factor step at whole clusters: k is where the power first
    # reaches 0.8)
    assert cr3.power(0.03, k) >= 0.8 - 1e-9
    assert cr3.power(0.03, k - 1) < 0.8
    # the power is that of the projected test: reject when the estimate passes q se_at
    df = cr3.df_at(k)
    q = float(special.stdtrit(df, 0.975))
    shift = (0.03 - q * cr3.se_at(k)) / cr3.sd_at(k)
    assert cr3.power(0.03, k) == pytest.approx(float(special.stdtr(df, shift)), rel=1e-12)
    # a studentized bootstrap's interval, wider than t * se, keeps its excess only as a
    # small-sample term that fades as 1/df
    t_now = float(special.stdtrit(4.0, 0.975))
    boot = pl.ScaledDesign(**kwargs, icc=0.1, jackknife=True, se=0.03 / t_now / 1.2)
    assert boot.half_width(10) == pytest.approx(0.03, rel=1e-12)
    assert boot.widening_at(10) == pytest.approx(1.2, rel=1e-12)
    assert boot.widening_at(200) == pytest.approx(1.0 + 0.2 * 4.0 / boot.df_at(200))
    assert cr3.widening_at(200) == pytest.approx(1.0, rel=1e-12)
    assert boot.clusters_for_power(0.03, power=0.8) < cr3.clusters_for_power(0.03, power=0.8)
    # without sizes nothing is projected but the se
    plain = pl.ScaledDesign(half_width=0.03, df=9.0, n_clusters=10, confidence=0.95)
    assert plain.bias_at(40) == 1.0
    assert plain.sd_at(40) == pytest.approx(plain.se / 2)


def test_paired_pilot_plan_projects_the_jackknife_of_its_interval(mmlu):
    from clusterstats.core.grouping import cluster_sums
    from clusterstats.core.summary import uneven_sizes_df

    llama = mmlu[mmlu.model == "Meta-Llama-3.1-8B-Instruct"]
    mixtral = mmlu[mmlu.model == "Mixtral-8x7B-Instruct-v0.1"]
    paired = llama.eval.plan("correct", "src", other=mixtral, on="question_id", effect=0.023)
    assert paired.method == "bootstrap_t"  # the default for a paired difference
    merged = llama.merge(mixtral, on="question_id", suffixes=("_a", "_b"))
    codes = merged.src_a.astype("category").cat.codes.to_numpy()
    diff = cluster_sums((merged.correct_a - merged.correct_b).to_numpy(float), codes)
    assert paired.df == pytest.approx(uneven_sizes_df(diff, "pooled", jackknife=True))
    # the power at the whole number of clusters drawn: at least the power asked for, and
    # what the text says
    assert 0.8 - 1e-9 <= paired.power_at_clusters < 1.0
    assert f"(power {paired.power_at_clusters:.0%} at that whole number)" in repr(paired)
    assert cs.plan(n_clusters=10, cluster_size=5, icc=0.2, proportion=0.5).power_at_clusters is None


def test_a_unions_pilot_projects_the_spread_of_the_interval_it_widens():
    from clusterstats.core.grouping import cluster_sums
    from clusterstats.core.summary import summarize_interval
    from clusterstats.core.variance import moulton_icc

    # closed form: the union's excess over its base fades like a small-sample term,
    # h(K') = t_df' * (h_base / t_df) * sqrt(K / K') * (1 + (h / h_base - 1) * df / df')
    union = pl.ScaledDesign(
        half_width=0.03, base_half_width=0.025, df=9.0, n_clusters=10, confidence=0.95
    )
    t9, t39 = (float(special.stdtrit(df, 0.975)) for df in (9.0, 39.0))
    assert union.half_width(10) == pytest.approx(0.03, rel=1e-12)
    expected = t39 * (0.025 / t9) * 0.5 * (1.0 + 0.2 * 9.0 / 39.0)
    assert union.half_width(40) == pytest.approx(expected, rel=1e-12)
    # BBH chain-of-thought by task: 27 tasks of uneven sizes take the union, and the score
    # interval reaches beyond the hybrid on this pilot
    bbh = cs.datasets.load("bbh")
    cot = bbh[bbh["condition"] == "cot"]
    ci = cot.eval.cluster_ci("correct", "task")
    assert ci.method == "korn_graubard_hybrid_or_score"
    assert any("cluster score interval" in note and "union" in note for note in ci.notes)
    plan = cot.eval.plan("correct", "task", effect=0.03)
    # the plan's current row is the interval the user got
    assert plan.half_width == pytest.approx((ci.high - ci.low) / 2, rel=1e-12)
    # its projection is the hybrid's spread with the union's excess fading, so it asks
    # for fewer clusters than the union's width scaled as if it were all spread
    codes = cot["task"].astype("category").cat.codes.to_numpy()
    sums = cluster_sums(cot["correct"].to_numpy(float), codes)
    hybrid = summarize_interval(
        sums, estimand="pooled", method="korn_graubard_hybrid", confidence=0.95, is_binary=True
    )
    assert (hybrid.high - hybrid.low) / 2 < plan.half_width
    as_spread = pl.ScaledDesign(
        half_width=plan.half_width,
        df=plan.df,
        n_clusters=27,
        confidence=0.95,
        sizes=sums.counts,
        icc=moulton_icc(sums),
    )
    assert plan.clusters_for_power < as_spread.clusters_for_power(0.03, power=0.8)


def test_the_tests_spread_follows_the_residuals_skewness():
    # Var(mean - q se) / Var(mean) = 1 - q g / sqrt(K) + q^2 (k - 1) / (4 K) by the delta
    # method; checked here by simulation with exponential residuals (g = 2, k = 9)
    rng = np.random.default_rng(3)
    q = 2.0
    for k in (50, 200):
        e = rng.exponential(size=(40_000, k)) - 1.0
        mean = e.mean(axis=1)
        se = np.sqrt(((e - mean[:, None]) ** 2).sum(axis=1) / (k * (k - 1)))
        simulated = (mean - q * se).var() / mean.var()
        assert simulated == pytest.approx(1 - q * 2 / np.sqrt(k) + q * q * 8 / (4 * k), rel=0.03)
    # the projection uses both terms (see ScaledDesign.test_sd_at)
    kwargs = dict(half_width=0.03, df=20.0, n_clusters=21, confidence=0.95)
    plain = pl.ScaledDesign(**kwargs)
    skewed = pl.ScaledDesign(**kwargs, skewness=2.0, kurtosis=9.0)
    for k in (30.0, 100.0):
        q = float(special.stdtrit(plain.df_at(k), 0.975))
        factor = 1 - q * 2.0 / np.sqrt(k) + q * q * 8.0 / (4 * k)
        assert plain.test_sd_at(k) == pytest.approx(plain.sd_at(k), rel=1e-12)
        assert skewed.test_sd_at(k) == pytest.approx(plain.sd_at(k) * np.sqrt(factor))
    # without a kurtosis, Pearson's least one (1 + g^2): the factor is a square
    least = pl.ScaledDesign(**kwargs, skewness=2.0)
    q = float(special.stdtrit(plain.df_at(40.0), 0.975))
    assert least.test_sd_at(40.0) == pytest.approx(
        plain.sd_at(40.0) * abs(1 - q * 2.0 / (2 * np.sqrt(40.0)))
    )
    assert least.test_sd_at(8.0) == pytest.approx(plain.sd_at(8.0) / 2)  # the floor, 1/4
    # a larger se that comes with a larger estimate: the test decides more often
    assert skewed.power(0.03, 40) > plain.power(0.03, 40)
    assert skewed.clusters_for_power(0.03, power=0.8) < plain.clusters_for_power(0.03, power=0.8)
    # oriented the other way, the skewness works against the test
    against = pl.ScaledDesign(**kwargs, skewness=-2.0, kurtosis=9.0)
    assert against.power(0.03, 40) < plain.power(0.03, 40)
    # a heavy-tailed se (the kurtosis alone) works against it too
    heavy = pl.ScaledDesign(**kwargs, skewness=0.0, kurtosis=16.0)
    assert heavy.power(0.03, 40) < plain.power(0.03, 40)


def test_residual_shape():
    from scipy import stats

    rng = np.random.default_rng(5)
    counts = rng.integers(1, 30, size=40).astype(float)
    totals = rng.binomial(counts.astype(int), 0.3).astype(float)
    e = totals - counts * totals.sum() / counts.sum()
    skewness, kurtosis = pl.residual_shape(counts, totals)
    assert skewness == pytest.approx(stats.skew(e))
    assert kurtosis == pytest.approx(stats.kurtosis(e, fisher=False))
    assert pl.residual_shape(np.ones(3), np.ones(3)) == (0.0, 1.0)


def test_pilot_plans_never_ask_for_fewer_than_20_clusters(mmlu):
    # A large effect or a loose target is met, by the projection, with a handful of sources;
    # the plan asks for 20 (below which every interval warns that it is itself uncertain),
    # promises the power the projection gives there, and names the smaller projection.
    llama = mmlu[mmlu.model == "Meta-Llama-3.1-8B-Instruct"]
    gemini = mmlu[mmlu.model == "gemini-1.5-flash-002"]
    paired = llama.eval.plan("correct", "src", other=gemini, on="question_id", effect=0.2)
    assert paired.clusters_for_power == 20
    assert paired.power_at_clusters > 0.8
    found = re.search(
        r"reaches 80% power with (\d+) clusters; the plan asks for 20, where it projects "
        r"([\d.]+)%",
        " ".join(paired.notes),
    )
    assert found is not None
    assert int(found.group(1)) < 20
    assert float(found.group(2)) == pytest.approx(100 * paired.power_at_clusters, abs=0.05)
    loose = llama.eval.plan("correct", "src", target_half_width=0.2)
    assert loose.clusters_needed == 20
    assert any("the plan asks for 20" in note for note in loose.notes)
    # a plan that needs more than 20 is the projection itself
    tight = llama.eval.plan("correct", "src", target_half_width=0.02)
    assert tight.clusters_needed > 20
    assert not any("the plan asks for 20" in note for note in tight.notes)


def test_a_plan_at_the_floor_projects_the_spread_of_its_standard_error(mmlu):
    # Mixtral against Gemini by source: a few sources hold most of the questions, so at the
    # 20-source floor the interval's end moves mostly with its standard error (the kurtosis
    # term of ScaledDesign.test_sd_at). The plan must promise what the committed power study
    # (docs/power-real-data.md, by studies/power_real_data.py) measured it to deliver, within
    # its 5-point goal, and the page must be the one this code writes.
    from pathlib import Path

    answered = mmlu.dropna(subset=["correct"])
    models = answered["model"].unique()
    shared = set.intersection(
        *(set(answered.loc[answered.model == m, "question_id"]) for m in models)
    )
    answered = answered[answered["question_id"].isin(shared)]
    mixtral = answered[answered.model == "Mixtral-8x7B-Instruct-v0.1"]
    gemini = answered[answered.model == "gemini-1.5-flash-002"]
    merged = mixtral.merge(gemini, on=["question_id", "src"], suffixes=("_a", "_b"))
    effect = float((merged["correct_a"] - merged["correct_b"]).mean())
    plan = quiet(mixtral.eval.plan, "correct", "src", other=gemini, on="question_id", effect=effect)
    assert plan.clusters_for_power == 20
    page = (Path(__file__).resolve().parents[2] / "docs" / "power-real-data.md").read_text()
    row = next(
        line.split("|")
        for line in page.splitlines()
        if line.startswith("| MMLU-Pro Mixtral-8x7B − gemini-1.5-flash-002 by src |")
    )
    promised, realised = (float(cell.strip().rstrip("%")) for cell in row[8:10])
    assert 100 * plan.power_at_clusters == pytest.approx(promised, abs=0.05)
    assert abs(realised - promised) <= 5.0
