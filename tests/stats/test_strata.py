"""Stratified designs: agreement with R survey, invariances, lonely strata, nesting.

Every expected number below was printed by ``tests/r/strata.R`` (R 4.2.2, survey 4.1.1) on
the bundled ``mmlu_pro`` dataset (Mixtral-8x7B; clusters = src, strata = category); the R
call is named beside each. The suite does not need R.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import clusterstats as cs

TOL = {"rel": 1e-10}


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return fn(*args, **kwargs)


@pytest.fixture(scope="module")
def mixtral(mmlu):
    return mmlu[mmlu.model == "Mixtral-8x7B-Instruct-v0.1"]


def test_pooled_matches_svymean(mixtral):
    # svymean(~correct, svydesign(ids=~src, strata=~category, data=x), deff="replace")
    res = mixtral.eval.cluster_ci("correct", by="src", strata="category", method="cr1")
    assert res.estimate == pytest.approx(0.418882978723404, **TOL)
    assert res.se == pytest.approx(0.0238146963086566, **TOL)
    assert res.design_effect == pytest.approx(28.0308012772333, **TOL)
    assert res.df == 77  # degf(des)
    # svyciprop(~correct, des, method="beta", df=degf(des))
    kg = mixtral.eval.cluster_ci("correct", by="src", strata="category", method="korn_graubard")
    assert (kg.low, kg.high) == pytest.approx((0.370989697649888, 0.467938621524511), **TOL)


def test_other_estimands_match_r(mixtral):
    # svymean(~correct, svydesign(ids=~src, strata=~category, weights=~1/n_src, data=x))
    cm = mixtral.eval.cluster_ci(
        "correct", by="src", strata="category", method="cr1", estimand="cluster_mean"
    )
    assert cm.estimate == pytest.approx(0.412030224288854, **TOL)
    assert cm.se == pytest.approx(0.0138137888910009, **TOL)
    # svycontrast(svyby(~correct, ~category, des, svymean, covmat=TRUE), rep(1/H, H))
    macro = mixtral.eval.cluster_ci(
        "correct", by="src", strata="category", method="cr1", estimand="stratum_mean"
    )
    assert macro.estimate == pytest.approx(0.437541593623494, **TOL)
    assert macro.se == pytest.approx(0.0159544842757428, **TOL)
    with pytest.raises(cs.InvalidOptionError, match="estimand"):
        mixtral.eval.cluster_ci("correct", by="src", estimand="stratum_mean")


def test_lonely_strata(mixtral):
    law = mixtral[mixtral.category == "law"].src.unique()[0]
    lonely = mixtral[(mixtral.category != "law") | (mixtral.src == law)]
    with pytest.raises(cs.TooFewClustersError, match=r"single cluster.*\['law'\]"):
        lonely.eval.cluster_ci("correct", by="src", strata="category")
    # options(survey.lonely.psu=...); svymean(~correct, svydesign(ids=~src, strata=~category))
    expected = {
        "adjust": 0.023559344712267,
        "average": 0.0216075927304746,
        "certainty": 0.0208215973500024,
    }
    for option, se in expected.items():
        res = lonely.eval.cluster_ci(
            "correct", by="src", strata="category", method="cr1", lonely=option
        )
        assert res.estimate == pytest.approx(0.417295123177476, **TOL)
        assert res.se == pytest.approx(se, **TOL), option
        assert any("single cluster" in note for note in res.notes)


def test_paired_delta_with_strata_matches_svymean_of_differences(mmlu):
    a = mmlu[mmlu.model == "Meta-Llama-3.1-8B-Instruct"]
    b = mmlu[mmlu.model == "Mixtral-8x7B-Instruct-v0.1"]
    d = cs.paired_delta(a, b, "correct", by="src", on="question_id", strata="category")
    # svymean(~diff, svydesign(ids=~src, strata=~category, data=merged))
    assert d.delta == pytest.approx(0.0230219414893617, **TOL)
    assert d.se == pytest.approx(0.0097956439830197, **TOL)
    assert d.df == 77
    assert d.method == "stratified_cr1"
    with pytest.raises(cs.InvalidOptionError, match="with strata"):
        cs.paired_delta(
            a, b, "correct", by="src", on="question_id", strata="category", method="cr2"
        )


def test_cluster_ids_across_strata(mixtral):
    clash = mixtral.assign(
        code=mixtral.groupby("category")["src"].transform(lambda s: pd.factorize(s)[0])
    )
    with pytest.raises(cs.InvalidClusterError, match="appear in more than one stratum"):
        clash.eval.cluster_ci("correct", by="code", strata="category")
    nested = clash.eval.cluster_ci("correct", by="code", strata="category", nest=True, method="cr1")
    direct = mixtral.eval.cluster_ci("correct", by="src", strata="category", method="cr1")
    assert nested.se == pytest.approx(direct.se, rel=1e-12)
    assert nested.n_clusters == direct.n_clusters


@st.composite
def stratified_frames(draw):
    n_strata = draw(st.integers(1, 4))
    rows = []
    cluster = 0
    for stratum in range(n_strata):
        for _ in range(draw(st.integers(2, 5))):
            size = draw(st.integers(1, 6))
            values = draw(st.lists(st.integers(0, 1), min_size=size, max_size=size))
            rows += [(f"s{stratum}", cluster, v) for v in values]
            cluster += 1
    frame = pd.DataFrame(rows, columns=["stratum", "cluster", "y"])
    return frame


@given(frame=stratified_frames())
@settings(max_examples=60, deadline=None)
def test_properties_of_stratification(frame):
    if frame["y"].nunique() < 2:
        return
    one = frame.assign(stratum="all")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        single = cs.cluster_ci(one, "y", by="cluster", strata="stratum", method="cr1")
        plain = cs.cluster_ci(frame, "y", by="cluster", method="cr1")
        # one stratum is the unstratified design
        assert single.se == pytest.approx(plain.se, rel=1e-9, abs=1e-15, nan_ok=True)
        assert (single.low, single.high) == pytest.approx((plain.low, plain.high), rel=1e-9)
        assert single.method == plain.method
        stratified = cs.cluster_ci(frame, "y", by="cluster", strata="stratum", method="cr1")
        relabelled = frame.assign(stratum=frame["stratum"].map(lambda s: "z" + s[::-1]))
        again = cs.cluster_ci(relabelled, "y", by="cluster", strata="stratum", method="cr1")
    # relabelling strata changes nothing
    assert again.se == pytest.approx(stratified.se, rel=1e-12, abs=1e-15, nan_ok=True)
    assert again.estimate == pytest.approx(stratified.estimate, rel=1e-12)


def test_rao_wu_bootstrap_agrees_with_the_linearisation(mixtral):
    lin = mixtral.eval.cluster_ci("correct", by="src", strata="category", method="cr1")
    boot = mixtral.eval.cluster_ci(
        "correct", by="src", strata="category", method="bootstrap", n_resamples=4000, rng=1
    )
    assert boot.method == "bootstrap_percentile"
    assert boot.se == pytest.approx(lin.se, rel=0.1)
    assert boot.low < lin.estimate < boot.high


def test_stratum_table(mixtral):
    table = quiet(mixtral.eval.stratum_table, "correct", "src", strata="category")
    per = table[table.stratum != "(all)"]
    assert len(per) == 14
    assert per["weight_pooled"].sum() == pytest.approx(1.0)
    assert per["weight_stratum_mean"].sum() == pytest.approx(1.0)
    overall = table[table.stratum == "(all)"].set_index("estimand")
    # micro = Σ weight_pooled × stratum estimate; macro = plain mean of the strata
    assert overall.loc["pooled", "estimate"] == pytest.approx(
        (per["weight_pooled"] * per["estimate"]).sum(), rel=1e-12
    )
    assert overall.loc["stratum_mean", "estimate"] == pytest.approx(
        per["estimate"].mean(), rel=1e-12
    )
    assert np.isfinite(overall["low"]).all()


def test_compare_with_strata_matches_paired_delta(mmlu):
    options = {"by": "src", "on": "question_id", "how": "inner", "strata": "category"}
    comp = quiet(mmlu.eval.compare, "correct", model="model", rng=0, **options)
    pairs = comp.pairs()
    assert (pairs["method"] == "stratified_cr1").all()
    answered = mmlu.dropna(subset=["correct"]).groupby("question_id")["model"].nunique()
    common = mmlu[mmlu.question_id.isin(answered[answered == 4].index)]
    for row in pairs.itertuples(index=False):
        a = common[common.model == row.model_a]
        b = common[common.model == row.model_b]
        single = quiet(cs.paired_delta, a, b, "correct", **options)
        assert row.delta == pytest.approx(single.delta, rel=1e-12)
        assert row.se == pytest.approx(single.se, rel=1e-10)
        assert row.df == 77
    board = comp.leaderboard().set_index("model")
    mixtral = mmlu[mmlu.model == "Mixtral-8x7B-Instruct-v0.1"]
    ref = mixtral.eval.cluster_ci("correct", by="src", strata="category")
    # the leaderboard uses the items every model has (how="inner": gemini lacks 20)
    assert board.loc["Mixtral-8x7B-Instruct-v0.1", "score"] == pytest.approx(ref.estimate, abs=2e-3)
    macro = quiet(
        mmlu.eval.compare, "correct", model="model", estimand="stratum_mean", rng=0, **options
    )
    assert macro.estimand == "stratum_mean"
    shuffled = mmlu.sample(frac=1.0, random_state=2)
    again = quiet(shuffled.eval.compare, "correct", model="model", rng=0, **options)
    pd.testing.assert_frame_equal(again.pairs(), pairs)
    boot = quiet(
        mmlu.eval.compare,
        "correct",
        model="model",
        method="bootstrap",
        n_resamples=2000,
        rng=0,
        **options,
    )
    ratio = (boot.pairs()["high"] - boot.pairs()["low"]) / (pairs["high"] - pairs["low"])
    assert ratio.between(0.75, 1.25).all()


def test_zero_stratified_variance_falls_back_to_clopper_pearson_on_the_clusters():
    """Within each stratum every cluster has the same pass rate: the stratified variance is
    exactly zero. A binary outcome gets Clopper–Pearson with the G clusters as the units
    (closed form: beta quantiles at x = p*G, n = G) and a warning; a continuous one an error."""
    from scipy import stats

    rows = [("easy", f"e{c}", y) for c in range(14) for y in (1, 1, 1, 0)]
    rows += [("hard", f"h{c}", y) for c in range(10) for y in (1, 0, 0, 0)]
    frame = pd.DataFrame(rows, columns=["stratum", "doc", "passed"])
    with pytest.warns(cs.DegenerateDataWarning, match="stratified variance is zero"):
        res = frame.eval.cluster_ci("passed", by="doc", strata="stratum")
    point, g = (14 * 3 + 10 * 1) / 96, 24
    low = stats.beta.ppf(0.025, point * g, g - point * g + 1)
    high = stats.beta.ppf(0.975, point * g + 1, g - point * g)
    assert res.method == "clopper_pearson_fallback"
    assert res.estimate == pytest.approx(point, rel=1e-15)
    assert (res.low, res.high) == pytest.approx((low, high), rel=1e-12)
    assert res.n_eff == g
    assert any("effective n of 24, from the number of clusters (24)" in n for n in res.notes)
    continuous = frame.assign(passed=frame["passed"] * 0.5)
    with pytest.raises(cs.DegenerateDataError, match="within every stratum"):
        continuous.eval.cluster_ci("passed", by="doc", strata="stratum")
