"""Planning, which grouping matters, the report, and the plots.

Sources of expected numbers: seed 003's worked example (n_eff 181.8 / 190.5 / 363.6) and
REPORT §7 (`reference_values.json` "planning"), statsmodels' `cov_cluster_2groups` for the
two-way variance, and closed-form identities derived in the tests.
"""

from __future__ import annotations

import io
import math
import warnings

import numpy as np
import pandas as pd
import pytest

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
    assert "ceiling K/ρ = 100" in text
    assert "145 clusters" in text


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
    paired = llama.eval.plan("correct", "src", other=mixtral, on="question_id", effect=0.02)
    diff = llama.set_index("question_id").correct - mixtral.set_index("question_id").correct
    assert paired.difference_variance == pytest.approx(diff.var(ddof=1), rel=1e-10)
    assert paired.minimum_detectable_effect > 0
    k = pl.clusters_for_power(
        paired.difference_variance, paired.difference_icc, plan.cluster_size, 0.02
    )
    assert paired.clusters_for_power == pytest.approx(k)


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
    ci = llama.eval.cluster_ci("correct", by="src", method="cr1")
    assert src["se"] == pytest.approx(ci.se, rel=1e-12)
    assert src["icc"] == pytest.approx(ci.icc, rel=1e-12)
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
    assert markdown.startswith("| model | estimate |")
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
    tick_labels = [t.get_text() for t in ax.get_yticklabels()]
    assert tick_labels[0] == "Meta-Llama-3.1-70B-Instruct"
    plt.close(ax.figure)
    single = grouped["gemini-1.5-flash-002"].plot()
    assert _png(single).startswith(b"\x89PNG")
    plt.close(single.figure)
    plan = cs.plan(n_clusters=100, cluster_size=10, icc=0.5, proportion=0.5)
    ax = plan.plot()
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
    assert html.count("<tr>") == 1 + len(plan.options)
    # seed 003's sentence: 200 examples in 40 documents (m = 5, ρ = 0.3) are worth about 91
    assert round(plan.n_eff) == 91
    assert plan.design_effect == pytest.approx(2.2)
    llama = mmlu[mmlu.model == "Meta-Llama-3.1-70B-Instruct"]
    check = quiet(llama.eval.check_clustering, "correct", ["src"])
    assert "cluster by src" in check._repr_html_()
