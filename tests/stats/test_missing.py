"""Missing responses: IPW with cluster propensities, bounds, the report.

Sources of expected numbers: closed-form identities of REPORT §6 (cluster fixed-effect
Hájek = Σ n_g ȳ_g,obs / Σ n_g with zero propensity correction; the bounds formulas), an
independent M-estimation oracle (numerical Jacobian of the stacked estimating equations),
statsmodels' GLM for the response model, and scipy's chi2_contingency for the test.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import clusterstats as cs
from clusterstats.core import missing as mi

sm = pytest.importorskip("statsmodels.api")


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return fn(*args, **kwargs)


def clustered_missing(seed=3, n_clusters=30, size=12, covariates=2):
    """Binary outcomes and responses that both depend on the cluster (and covariates)."""
    rng = np.random.default_rng(seed)
    codes = np.repeat(np.arange(n_clusters), size)
    u = rng.normal(size=n_clusters)
    x = rng.normal(size=(codes.size, covariates))
    eta = u[codes] + x @ np.linspace(0.8, -0.5, covariates) + 0.8
    responded = (rng.random(codes.size) < 1 / (1 + np.exp(-eta))).astype(float)
    y = (rng.random(codes.size) < 0.5 + 0.3 * np.tanh(u[codes])).astype(float)
    return y, responded, codes, x


def stacked_oracle(psi_rows, theta, codes, has):
    """[A^-1 B A^-T]_00 with A from central differences and B summed within clusters."""
    jac = np.zeros((theta.size, theta.size))
    h = 1e-6
    for k in range(theta.size):
        up, down = theta.copy(), theta.copy()
        up[k] += h
        down[k] -= h
        jac[:, k] = (psi_rows(up).sum(0) - psi_rows(down).sum(0)) / (2 * h)
    rows = psi_rows(theta)
    per_cluster = np.array([rows[codes == g].sum(0) for g in range(codes.max() + 1)])[has]
    g = per_cluster.shape[0]
    meat = g / (g - 1) * per_cluster.T @ per_cluster
    bread = np.linalg.inv(-jac)
    return (bread @ meat @ bread.T)[0, 0]


def test_logistic_propensity_fit_and_stacked_variance():
    y, r, codes, x = clustered_missing()
    est, fit = mi.hajek_logistic_propensity(y, r, codes, x, min_propensity=0.0)
    g = codes.max() + 1
    n_g, r_g = np.bincount(codes), np.bincount(codes, weights=r)
    mixed = (r_g > 0) & (r_g < n_g)
    rows = mixed[codes]
    dummies = np.eye(g)[codes][:, mixed]
    glm = sm.GLM(r[rows], np.column_stack([dummies[rows], x[rows]]), sm.families.Binomial())
    params = glm.fit(tol=1e-12).params
    np.testing.assert_allclose(fit.coefficients, params[-2:], atol=1e-9)
    np.testing.assert_allclose(fit.cluster_effects[mixed], params[:-2], atol=1e-9)

    def psi_rows(theta):
        mu, u, beta = theta[0], np.zeros(g), theta[1 + mixed.sum() :]
        u[mixed] = theta[1 : 1 + mixed.sum()]
        pi = np.where(rows, 1 / (1 + np.exp(-(u[codes] + x @ beta))), (r_g[codes] > 0) * 1.0)
        w = np.where(r > 0, 1 / np.where(r > 0, pi, 1.0), 0.0)
        z = np.column_stack([dummies, x]) * rows[:, None]
        return np.column_stack([w * (np.where(r > 0, y, 0) - mu), ((r - pi) * rows)[:, None] * z])

    theta = np.concatenate([[est.estimate], fit.cluster_effects[mixed], fit.coefficients])
    oracle = stacked_oracle(psi_rows, theta, codes, r_g > 0)
    assert est.variance == pytest.approx(oracle, rel=1e-7)
    # REPORT section 6: for logistic propensities the stacked SE is the smaller one
    assert est.variance < est.variance_ignoring_propensity


def test_shrunk_cluster_propensity_stacked_variance():
    y, r, codes, _ = clustered_missing(seed=5, n_clusters=25, size=9)
    g = codes.max() + 1
    n_g = np.bincount(codes).astype(float)
    r_g = np.bincount(codes, weights=r)
    s_g = np.bincount(codes, weights=y * r)
    est = mi.hajek_cluster_propensity(n_g, r_g, s_g, min_propensity=0.0)
    _, kappa, p_bar = mi.shrunk_cluster_propensities(r_g, n_g)

    def psi_rows(theta):
        mu, p = theta
        pi = (r_g + kappa * p) / (n_g + kappa)
        w = (r / pi[codes]) * (r_g[codes] > 0)
        return np.column_stack([w * (y - mu), r - p])

    oracle = stacked_oracle(psi_rows, np.array([est.estimate, p_bar]), codes, r_g > 0)
    assert est.variance == pytest.approx(oracle, rel=1e-7)
    assert g == 25


def test_cluster_fixed_effect_identity_and_zero_correction():
    y, r, codes, _ = clustered_missing(seed=7)
    n_g = np.bincount(codes).astype(float)
    r_g = np.bincount(codes, weights=r)
    s_g = np.bincount(codes, weights=y * r)
    est = mi.hajek_cluster_propensity(n_g, r_g, s_g, shrink=False, min_propensity=0.0)
    has = r_g > 0
    # REPORT section 6(a): within-cluster mean imputation
    expected = (n_g[has] * s_g[has] / r_g[has]).sum() / n_g[has].sum()
    assert est.estimate == pytest.approx(expected, rel=1e-13)
    assert est.variance == pytest.approx(est.variance_ignoring_propensity, rel=1e-13)
    frame = pd.DataFrame({"g": codes, "y": np.where(r > 0, y, np.nan)})
    res = frame.eval.cluster_ci("y", by="g", missing="ipw")
    assert res.estimate == pytest.approx(expected, rel=1e-13)
    assert res.se == pytest.approx(np.sqrt(est.variance), rel=1e-12)


def test_logistic_propensity_through_cluster_ci():
    y, r, codes, x = clustered_missing(seed=11, n_clusters=40)
    frame = pd.DataFrame({"g": codes, "y": y, "answered": r > 0, "x1": x[:, 0], "x2": x[:, 1]})
    res = frame.eval.cluster_ci(
        "y",
        by="g",
        missing="ipw",
        responded="answered",
        propensity="logistic",
        covariates=["x1", "x2"],
        min_propensity=0.0,
    )
    est, _ = mi.hajek_logistic_propensity(y, r, codes, x, min_propensity=0.0)
    assert res.estimate == pytest.approx(est.estimate, rel=1e-12)
    assert res.se == pytest.approx(np.sqrt(est.variance), rel=1e-12)
    assert res.method == "ipw_korn_graubard"
    assert res.low < res.estimate < res.high


def test_bounds_and_complete_case(mmlu):
    mixtral = mmlu[mmlu.model == "Mixtral-8x7B-Instruct-v0.1"].assign(
        answered=lambda d: d.pred_missing.eq(0)
    )
    observed = mixtral.loc[mixtral.answered, "correct"]
    n, n_missing = len(mixtral), int((~mixtral.answered).sum())
    fail = mixtral.eval.cluster_ci("correct", by="src", missing="fail", responded="answered")
    best = mixtral.eval.cluster_ci("correct", by="src", missing="pass", responded="answered")
    drop = mixtral.eval.cluster_ci("correct", by="src", responded="answered")
    # REPORT section 6, Manski bounds: (Σ_obs y + a n_miss)/N with a = 0 and 1
    assert fail.estimate == pytest.approx(observed.sum() / n, rel=1e-13)
    assert best.estimate == pytest.approx((observed.sum() + n_missing) / n, rel=1e-13)
    assert drop.estimate == pytest.approx(observed.mean(), rel=1e-13)
    assert drop.n_missing == 1426
    assert any("varies across clusters" in note for note in drop.notes)
    # only the complete-case estimate is warned of as complete-case
    for scored, verb in ((fail, "counted as failures"), (best, "counted as passes")):
        varies = [note for note in scored.notes if "varies across clusters" in note]
        assert len(varies) == 1
        assert verb in varies[0]
        assert not any("complete-case estimate can" in note for note in scored.notes)
    assert any("bias the complete-case estimate" in note for note in drop.notes)


def test_missingness_test_matches_scipy():
    rows = np.array([20.0, 15.0, 30.0, 12.0])
    missing = np.array([2.0, 6.0, 3.0, 7.0])
    table = np.column_stack([missing, rows - missing])
    expected = stats.chi2_contingency(table, correction=False)
    got = mi.missingness_chi_square(rows, missing)
    assert got[0] == pytest.approx(expected.statistic, rel=1e-12)
    assert got[2] == pytest.approx(expected.pvalue, rel=1e-10)


def test_ipw_removes_the_bias_of_cluster_dependent_missingness():
    """Missing at random given the cluster: hard clusters lose more rows. A fixed seed and
    1,000 clusters, so the bias of complete case (several points) is far above the noise."""
    rng = np.random.default_rng(20261130)
    g, m = 1000, 10
    codes = np.repeat(np.arange(g), m)
    difficulty = rng.normal(size=g)
    y = (rng.random(g * m) < 1 / (1 + np.exp(difficulty[codes]))).astype(float)
    respond = rng.random(g * m) < 1 / (1 + np.exp(difficulty[codes] - 1.5))
    truth = y.mean()
    frame = pd.DataFrame({"g": codes, "y": np.where(respond, y, np.nan)})
    cc = frame.eval.cluster_ci("y", by="g")
    ipw = frame.eval.cluster_ci("y", by="g", missing="ipw")
    shrunk = frame.eval.cluster_ci("y", by="g", missing="ipw", propensity="shrunk")
    assert cc.estimate - truth > 0.03
    assert abs(ipw.estimate - truth) < 0.01
    assert ipw.low < truth < ipw.high
    assert cc.estimate > shrunk.estimate > ipw.estimate  # shrinkage pulls towards CC


def test_missing_inputs_fail_clearly():
    y, r, codes, x = clustered_missing(seed=2)
    frame = pd.DataFrame({"g": codes, "y": y, "x1": x[:, 0], "answered": r > 0})
    with pytest.raises(cs.InvalidOptionError, match="must be boolean"):
        frame.assign(answered="yes").eval.cluster_ci("y", by="g", responded="answered")
    with pytest.raises(cs.InvalidOptionError, match="must be boolean"):
        frame.assign(answered=0.5).eval.cluster_ci("y", by="g", responded="answered")
    nan_cov = frame.assign(x1=frame.x1.where(frame.index != 3))
    with pytest.raises(cs.InvalidOptionError, match=r"covariate 'x1' has 1 missing values"):
        nan_cov.eval.cluster_ci(
            "y",
            by="g",
            responded="answered",
            missing="ipw",
            propensity="logistic",
            covariates=["x1"],
        )
    with pytest.raises(cs.InvalidOptionError, match="needs covariates"):
        frame.eval.cluster_ci("y", by="g", missing="ipw", propensity="logistic")
    with pytest.raises(cs.InvalidOptionError, match="constant within every cluster"):
        frame.assign(level=codes % 3).eval.cluster_ci(
            "y",
            by="g",
            responded="answered",
            missing="ipw",
            propensity="logistic",
            covariates=["level"],
        )
    with pytest.raises(cs.InvalidOptionError, match="pooled mean"):
        frame.eval.cluster_ci("y", by="g", missing="ipw", estimand="cluster_mean")
    contradiction = frame.assign(y=frame.y.where(frame.index != 0), answered=True)
    with pytest.raises(cs.InvalidOutcomeError, match="True but no 'y' value"):
        contradiction.eval.cluster_ci("y", by="g", responded="answered")
    # a cluster where nobody answered: named, and the estimate covers the others
    lost = frame.assign(answered=frame.answered & (frame.g != 4))
    res = quiet(lost.eval.cluster_ci, "y", by="g", responded="answered", missing="ipw")
    assert any("1 clusters had no usable response" in note for note in res.notes)
    assert res.n_clusters == 29


def test_paired_and_compare_with_missing(mmlu):
    scored = mmlu.assign(score=mmlu.correct.where(mmlu.pred_missing.eq(0)))
    a = scored[scored.model == "Meta-Llama-3.1-8B-Instruct"]
    b = scored[scored.model == "Mixtral-8x7B-Instruct-v0.1"]
    options = {"by": "src", "on": "question_id"}
    fail = cs.paired_delta(a, b, "score", missing="fail", **options)
    both = cs.paired_delta(a.fillna({"score": 0}), b.fillna({"score": 0}), "score", **options)
    assert fail.delta == pytest.approx(both.delta, rel=1e-13)
    ipw = cs.paired_delta(a, b, "score", missing="ipw", **options)
    assert ipw.method == "ipw_t"
    assert ipw.n_missing_items == 1426
    assert ipw.low < ipw.delta < ipw.high
    # compare's IPW: cluster fixed effects, Σ n_g (ȳa_g - ȳb_g) / Σ n_g
    pair = scored[scored.model.isin([a.model.iloc[0], b.model.iloc[0]])]
    comp = quiet(pair.eval.compare, "score", model="model", missing="ipw", rng=0, **options)
    answered = (
        a.set_index("question_id")["score"].notna() & b.set_index("question_id")["score"].notna()
    )
    src = a.set_index("question_id")["src"]
    diff = a.set_index("question_id")["score"] - b.set_index("question_id")["score"]
    per = pd.DataFrame({"src": src, "d": diff, "ok": answered})
    n_g = per.groupby("src").size()
    mean_g = per[per.ok].groupby("src")["d"].mean()
    expected = (n_g[mean_g.index] * mean_g).sum() / n_g[mean_g.index].sum()
    assert comp.pairs()["delta"].iloc[0] == pytest.approx(expected, rel=1e-12)


def test_missing_report(mmlu):
    mixtral = mmlu[mmlu.model == "Mixtral-8x7B-Instruct-v0.1"].assign(
        answered=lambda d: d.pred_missing.eq(0),
        reason=lambda d: np.where(d.pred_missing.eq(1), "parse failure", None),
    )
    rep = quiet(
        mixtral.eval.missing_report,
        "correct",
        "src",
        responded="answered",
        reason="reason",
        threshold=0.45,
    )
    assert rep.n_missing == 1426
    assert rep.n_rows == 12032
    assert rep.chi_square_p < 1e-10
    assert [name for name, _ in rep.analyses] == [
        "complete_case",
        "ipw",
        "missing_as_fail",
        "missing_as_pass",
    ]
    table = rep.to_frame()
    assert list(table.columns) == list(cs.MissingReport.columns)
    per = rep.per_cluster()
    assert per["missing"].sum() == 1426
    assert len(per) == 91
    assert rep.by_reason()["reason"].tolist() == ["parse failure"]
    deltas = rep.delta_table()["estimate"].to_numpy()
    assert np.all(np.diff(deltas) > 0)
    fail = dict(rep.analyses)["missing_as_fail"].estimate
    # even missing-as-fail stays inside the IPW interval: no tipping point below
    assert rep.tipping_low == -np.inf
    assert 0 < rep.tipping_high < 20
    low_est = mi.delta_adjusted_mean(
        np.asarray(rep.cluster_rows, float),
        np.asarray(rep.cluster_rows, float) - np.asarray(rep.cluster_missing, float),
        mixtral[mixtral.answered]
        .groupby("src")["correct"]
        .sum()
        .reindex(list(rep.cluster_labels), fill_value=0)
        .to_numpy(float),
        rep.tipping_threshold,
        binary=True,
    )
    assert low_est == pytest.approx(0.45, abs=1e-9)
    assert fail < 0.45
    assert "tipping points" in repr(rep)
    assert "<table" in rep._repr_html_()


def test_responded_in_paired_delta_and_compare(mmlu):
    marked = mmlu.assign(answered=mmlu.pred_missing.eq(0))
    scored = mmlu.assign(score=mmlu.correct.where(mmlu.pred_missing.eq(0)))
    a = marked[marked.model == "Meta-Llama-3.1-8B-Instruct"]
    b = marked[marked.model == "Mixtral-8x7B-Instruct-v0.1"]
    sa = scored[scored.model == "Meta-Llama-3.1-8B-Instruct"]
    sb = scored[scored.model == "Mixtral-8x7B-Instruct-v0.1"]
    options = {"by": "src", "on": "question_id", "missing": "ipw"}
    via_indicator = cs.paired_delta(a, b, "correct", responded="answered", **options)
    via_nan = cs.paired_delta(sa, sb, "score", **options)
    assert via_indicator.delta == pytest.approx(via_nan.delta, rel=1e-13)
    assert via_indicator.se == pytest.approx(via_nan.se, rel=1e-12)
    before = a.copy()
    comp = quiet(
        marked.eval.compare,
        "correct",
        by="src",
        model="model",
        on="question_id",
        how="inner",
        responded="answered",
        rng=0,
    )
    ref = quiet(
        scored.eval.compare, "score", by="src", model="model", on="question_id", how="inner", rng=0
    )
    np.testing.assert_allclose(comp.pairs()["delta"], ref.pairs()["delta"], rtol=1e-13)
    pd.testing.assert_frame_equal(a, before)  # the caller's frame is untouched


def test_ipw_with_no_spread_falls_back_to_clopper_pearson_on_the_clusters():
    """Every observed outcome passes: the weighted responses have no spread and the IPW
    variance is zero. The interval is Clopper–Pearson with the G clusters as the units
    (closed form for x = n = G = 24: low = (alpha/2)^(1/G), high = 1), with a warning."""
    frame = pd.DataFrame({"doc": np.repeat(np.arange(24), 5), "passed": np.ones(120)}).astype(
        {"passed": float}
    )
    frame.loc[[1, 7, 8, 22], "passed"] = np.nan
    with pytest.warns(cs.DegenerateDataWarning, match="no spread across clusters"):
        res = frame.eval.cluster_ci("passed", by="doc", missing="ipw")
    assert res.method == "ipw_clopper_pearson_fallback"
    assert res.estimate == 1.0
    assert (res.low, res.high) == pytest.approx((0.025 ** (1 / 24), 1.0), rel=1e-12)
    assert any("effective n of 24, from the number of clusters (24)" in n for n in res.notes)
