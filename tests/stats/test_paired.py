"""Paired deltas (``clusterstats.stats.paired``).

Sources of expected numbers: the methods reference's "D1 paired" values
(``tests/reference/methods_reference_values.json``), statsmodels (clustered OLS, McNemar) as
oracles, and identities derived in the tests.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs

sm = pytest.importorskip("statsmodels.api")


@pytest.fixture
def d1_pair(reference):
    """D1's paired tables as two frames (A and B), items keyed by position."""
    tables, sizes = reference["D1pair.tables"], reference["D1.data"]["sizes"]
    cluster = np.repeat(np.arange(8), sizes)
    a = pd.DataFrame({"item": np.arange(32), "cluster": cluster, "y": tables["yA"]})
    b = pd.DataFrame({"item": np.arange(32), "cluster": cluster, "y": tables["yB"]})
    return a, b


@pytest.fixture(scope="module")
def bbh_wide(bbh):
    """BBH with the two conditions as columns, one row per item, and its task."""
    wide = bbh.pivot(index="item_id", columns="condition", values="correct")
    wide["task"] = bbh.drop_duplicates("item_id").set_index("item_id")["task"]
    return wide


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return fn(*args, **kwargs)


def test_d1_paired_reference_values(d1_pair, reference):
    a, b = d1_pair
    res = quiet(cs.paired_delta, a, b, "y", by="cluster", on="item", method="cr1")
    ref = reference["D1pair.diff_CR1"]
    assert res.delta == pytest.approx(ref["mean_diff"], rel=1e-12)
    assert res.se == pytest.approx(ref["se_CR1"], rel=1e-12)
    assert res.p_value == pytest.approx(ref["p_t(G-1)"], rel=1e-10)
    mc = reference["D1pair.clustered_mcnemar(stat,p)"]
    assert res.mcnemar_statistic == pytest.approx(mc["mcnemar"][0], rel=1e-12)
    assert res.mcnemar_p_value == pytest.approx(mc["mcnemar"][1], rel=1e-10)
    assert res.clustered_mcnemar_statistic == pytest.approx(mc["obuchowski"][0], rel=1e-12)
    assert res.clustered_mcnemar_p_value == pytest.approx(mc["obuchowski"][1], rel=1e-10)
    assert res.clustered_mcnemar_statistic == pytest.approx(
        ref["obuchowski_equiv(null-centred CR1)"], rel=1e-12
    )


def test_mcnemar_matches_statsmodels(bbh_wide):
    from statsmodels.stats.contingency_tables import mcnemar

    wide = bbh_wide
    res = wide.eval.paired_delta("cot", "direct", by="task")
    table = pd.crosstab(wide["cot"], wide["direct"]).to_numpy()
    chi = mcnemar(table, exact=False, correction=False)
    exact = mcnemar(table, exact=True)
    assert (res.mcnemar_a_only, res.mcnemar_b_only) == (table[1, 0], table[0, 1])
    assert res.mcnemar_statistic == pytest.approx(chi.statistic, rel=1e-12)
    assert res.mcnemar_p_value == pytest.approx(chi.pvalue, rel=1e-10)
    assert res.mcnemar_exact_p_value == pytest.approx(exact.pvalue, rel=1e-8)


def clustered_ols_se(d: np.ndarray, groups: np.ndarray) -> tuple[float, float]:
    fit = sm.OLS(d, np.ones_like(d)).fit(
        cov_type="cluster", cov_kwds={"groups": pd.factorize(groups)[0]}, use_t=True
    )
    return fit.params[0], fit.bse[0]


def test_delta_se_equals_statsmodels_on_bbh(bbh):
    cot = bbh[bbh.condition == "cot"].set_index("item_id")
    direct = bbh[bbh.condition == "direct"].set_index("item_id")
    res = cot.eval.paired_delta(direct, "correct", by="task", method="cr1")
    d = (cot["correct"] - direct.loc[cot.index, "correct"]).to_numpy(float)
    est, se = clustered_ols_se(d, cot["task"].to_numpy())
    assert res.delta == pytest.approx(est, rel=1e-12)
    assert res.se == pytest.approx(se, rel=1e-10)


def test_wide_layout_equals_two_frames(bbh, bbh_wide):
    wide = bbh_wide
    from_columns = wide.eval.paired_delta("cot", "direct", by="task")
    cot = bbh[bbh.condition == "cot"]
    direct = bbh[bbh.condition == "direct"]
    from_frames = cot.eval.paired_delta(
        direct, "correct", by="task", on="item_id", labels=("cot", "direct")
    )
    for field in (
        "delta",
        "se",
        "low",
        "high",
        "p_value",
        "mcnemar_statistic",
        "clustered_mcnemar_statistic",
        "se_unpaired",
        "correlation",
    ):
        assert getattr(from_columns, field) == pytest.approx(
            getattr(from_frames, field), rel=1e-12
        ), field
    assert (from_columns.label_a, from_columns.label_b) == ("cot", "direct")
    reverse = wide.eval.paired_delta("direct", "cot", by="task")
    assert reverse.delta == pytest.approx(-from_columns.delta)


def test_pairing_beats_unpaired_on_correlated_items(bbh_wide):
    wide = bbh_wide
    res = wide.eval.paired_delta("cot", "direct", by="task")
    assert res.correlation > 0
    assert res.se < res.se_unpaired
    assert res.high - res.low > 3 * (res.naive_high - res.naive_low)  # clusters matter


def test_reruns_are_averaged_and_their_noise_share_reported():
    rng = np.random.default_rng(4)
    rows = []
    for item in range(120):
        doc = item // 6
        p = rng.uniform(0.2, 0.9)
        for run in range(4):
            rows.append((item, doc, run, int(rng.random() < p), int(rng.random() < p - 0.1)))
    frame = pd.DataFrame(rows, columns=["item", "doc", "run", "new", "old"])
    a = frame[["item", "doc", "new"]].rename(columns={"new": "passed"})
    b = frame[["item", "doc", "old"]].rename(columns={"old": "passed"})
    with pytest.raises(cs.AlignmentError, match=r"120 items have more than one row.*rerun="):
        a.eval.paired_delta(b, "passed", by="doc", on="item")
    a, b = a.assign(run=frame["run"]), b.assign(run=frame["run"])
    res = a.eval.paired_delta(b, "passed", by="doc", on="item", rerun="run")
    with pytest.raises(cs.AlignmentError, match="share both the item key and the run id"):
        a.eval.paired_delta(b.assign(run=0), "passed", by="doc", on="item", rerun="run")
    per_item = frame.groupby("item")[["new", "old"]].mean()
    d = per_item["new"] - per_item["old"]
    assert res.delta == pytest.approx(d.mean(), rel=1e-12)
    assert res.max_runs == 4
    assert res.mcnemar_a_only is None  # McNemar needs one binary run per item and side
    by_hand = (
        frame.groupby("item")["new"].var().mean() / 4
        + frame.groupby("item")["old"].var().mean() / 4
    ) / d.var()
    assert res.rerun_variance_share == pytest.approx(min(1.0, by_hand), rel=1e-10)
    assert 0 < res.rerun_variance_share < 1


def test_strict_alignment_errors_and_inner(d1_pair):
    a, b = d1_pair
    b_short = b[b.item >= 3]
    with pytest.raises(
        cs.AlignmentError,
        match=r"3 items are only in the first frame "
        r"\(e\.g\. \[0, 1, 2\]\) and 0 only",
    ):
        cs.paired_delta(a, b_short, "y", by="cluster", on="item")
    res = quiet(cs.paired_delta, a, b_short, "y", by="cluster", on="item", how="inner")
    assert (res.n_items, res.n_dropped_a, res.n_dropped_b) == (29, 3, 0)
    assert "3 items only in A" in res.notes[0]
    moved = b.assign(cluster=np.where(b.item == 5, 7, b.cluster))
    with pytest.raises(cs.AlignmentError, match="1 items are in a different cluster"):
        cs.paired_delta(a, moved, "y", by="cluster", on="item")
    split = pd.concat([a.assign(run=0), a.assign(cluster=a.cluster + 1, run=1).iloc[:1]])
    with pytest.raises(cs.AlignmentError, match="several clusters"):
        cs.paired_delta(split, b.assign(run=0), "y", by="cluster", on="item", rerun="run")
    with pytest.raises(cs.InvalidOptionError, match="how"):
        cs.paired_delta(a, b, "y", by="cluster", on="item", how="outer")


def test_missing_outcomes_drop_fail_raise(d1_pair):
    a, b = d1_pair
    b = b.astype({"y": float})
    b.loc[[0, 9], "y"] = np.nan
    dropped = quiet(cs.paired_delta, a, b, "y", by="cluster", on="item")
    assert (dropped.n_items, dropped.n_missing_items) == (30, 2)
    assert "2 items with a missing outcome" in dropped.notes[0]
    failed = quiet(cs.paired_delta, a, b, "y", by="cluster", on="item", missing="fail")
    assert failed.n_items == 32
    assert failed.mean_b == pytest.approx(b["y"].fillna(0).mean())
    with pytest.raises(cs.MissingOutcomeError):
        cs.paired_delta(a, b, "y", by="cluster", on="item", missing="raise")


def test_identical_sides_fall_back_to_a_discordance_bound():
    frame = cs.simulate(30, 4, mean=0.6, icc=0.3, seed=2).assign(twin=lambda f: f["y"])
    with pytest.warns(cs.DegenerateDataWarning, match="agree on every item"):
        res = frame.eval.paired_delta("y", "twin", by="cluster")
    bound = 1 - 0.025 ** (1 / 30)
    assert (res.delta, res.low, res.high) == (0.0, pytest.approx(-bound), pytest.approx(bound))


def test_bootstrap_is_the_cluster_bootstrap_of_the_differences(bbh_wide):
    wide = bbh_wide
    paired = wide.eval.paired_delta(
        "cot", "direct", by="task", method="bootstrap_percentile", n_resamples=3000, rng=9
    )
    diff = (wide["cot"] - wide["direct"]).rename("d").to_frame().join(wide["task"])
    direct = diff.eval.cluster_ci(
        "d", by="task", method="bootstrap_percentile", n_resamples=3000, rng=9
    )
    assert (paired.low, paired.high) == (direct.low, direct.high)


def test_paired_results_display_and_frames(bbh, bbh_wide):
    wide = bbh_wide
    before = wide.copy()
    res = wide.eval.paired_delta("cot", "direct", by="task")
    pd.testing.assert_frame_equal(wide, before)
    assert list(res.to_frame().columns) == list(cs.PairedDelta.columns)
    assert "PairedDelta(cot - direct" in repr(res)
    assert "discordant items" in repr(res)
    assert "<table" in res._repr_html_()
    comp = quiet(
        bbh.eval.compare,
        "correct",
        by="task",
        model="condition",
        on="item_id",
        n_resamples=200,
        rng=0,
    )
    assert list(comp.to_frame().columns) == list(cs.Comparison.PAIR_COLUMNS)
    assert list(comp.leaderboard().columns) == list(cs.Comparison.LEADERBOARD_COLUMNS)
    assert "Comparison(correct by task" in comp._repr_html_()
    assert "adjacent places, higher minus lower" in repr(comp)
    assert "adjacent places, higher minus lower" in comp._repr_html_()


def test_frames_filtered_from_one_long_frame_need_on(bbh):
    cot, direct = bbh[bbh.condition == "cot"], bbh[bbh.condition == "direct"]
    with pytest.raises(cs.AlignmentError, match=r"matched on their index.*on='<item id column>'"):
        cot.eval.paired_delta(direct, "correct", by="task")
