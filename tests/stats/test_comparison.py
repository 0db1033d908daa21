"""Many models on shared items (``clusterstats.stats.comparison``).

Sources of expected numbers: statsmodels (clustered OLS, multipletests) as oracles,
``paired_delta`` on each pair, and identities derived in the tests.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats.core.paired import adjust_p_values

sm = pytest.importorskip("statsmodels.api")


def clustered_ols_se(d: np.ndarray, groups: np.ndarray) -> tuple[float, float]:
    fit = sm.OLS(d, np.ones_like(d)).fit(
        cov_type="cluster", cov_kwds={"groups": pd.factorize(groups)[0]}, use_t=True
    )
    return fit.params[0], fit.bse[0]


def small_panel(seed=0, n_docs=25, per_doc=4):
    rng = np.random.default_rng(seed)
    rows = []
    for g in range(n_docs):
        hard = rng.normal()
        for i in range(per_doc):
            for model, skill in (("a", 1.0), ("b", 0.3), ("c", 0.0)):
                p = 1 / (1 + np.exp(-(skill - hard)))
                rows.append((model, f"{g}-{i}", g, int(rng.random() < p)))
    return pd.DataFrame(rows, columns=["model", "item", "doc", "passed"])


def _compare_frame(frame, **kwargs):
    options = {"by": "doc", "model": "model", "on": "item", "n_resamples": 500, "rng": 3}
    return frame.eval.compare("passed", **(options | kwargs))


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return fn(*args, **kwargs)


def test_delta_and_compare_equal_statsmodels_on_mmlu(mmlu):
    models = ["Meta-Llama-3.1-8B-Instruct", "Mixtral-8x7B-Instruct-v0.1"]
    a = mmlu[mmlu.model == models[0]].set_index("question_id")
    b = mmlu[mmlu.model == models[1]].set_index("question_id")
    res = a.eval.paired_delta(b, "correct", by="src", method="cr1")
    d = (a["correct"] - b.loc[a.index, "correct"]).to_numpy(float)
    est, se = clustered_ols_se(d, a["src"].to_numpy())
    assert res.delta == pytest.approx(est, rel=1e-12)
    assert res.se == pytest.approx(se, rel=1e-10)
    both = mmlu[mmlu.model.isin(models)]
    comp = both.eval.compare(
        "correct", by="src", model="model", on="question_id", method="cr1", n_resamples=200, rng=0
    )
    pair = comp.pairs().iloc[0]
    assert pair["delta"] == pytest.approx(est, rel=1e-12)
    assert pair["se"] == pytest.approx(se, rel=1e-10)


def test_compare_pairs_agree_with_paired_delta(mmlu):
    comp = quiet(
        mmlu.eval.compare,
        "correct",
        by="src",
        model="model",
        on="question_id",
        n_resamples=300,
        rng=1,
    )
    assert len(comp.pairs()) == 6
    dropped = mmlu[mmlu.correct.isna()]["question_id"].unique()
    for row in comp.pairs().itertuples():
        a = mmlu[(mmlu.model == row.model_a) & ~mmlu.question_id.isin(dropped)]
        b = mmlu[(mmlu.model == row.model_b) & ~mmlu.question_id.isin(dropped)]
        single = cs.paired_delta(a, b, "correct", by="src", on="question_id")
        assert row.delta == pytest.approx(single.delta, rel=1e-12)
        assert row.se == pytest.approx(single.se, rel=1e-10)
        assert row.p_value == pytest.approx(single.p_value, rel=1e-8)


def test_p_value_adjustment_matches_statsmodels():
    from statsmodels.stats.multitest import multipletests

    p = np.random.default_rng(0).uniform(0, 0.2, size=25)
    assert adjust_p_values(p, "holm") == pytest.approx(multipletests(p, method="holm")[1])
    assert adjust_p_values(p, "bh") == pytest.approx(multipletests(p, method="fdr_bh")[1])


def test_baseline_and_bh(mmlu):
    comp = quiet(
        mmlu.eval.compare,
        "correct",
        by="src",
        model="model",
        on="question_id",
        baseline="Mixtral-8x7B-Instruct-v0.1",
        adjust="bh",
        n_resamples=200,
        rng=0,
    )
    pairs = comp.pairs()
    assert len(pairs) == 3
    assert set(pairs["model_b"]) == {"Mixtral-8x7B-Instruct-v0.1"}
    assert (pairs["adjust"] == "bh").all()
    with pytest.raises(cs.InvalidOptionError, match="baseline"):
        mmlu.eval.compare("correct", by="src", model="model", on="question_id", baseline="GPT-9")


def test_rank_sets_from_shared_draws():
    rng = np.random.default_rng(3)
    rows = []
    for g in range(40):
        difficulty = rng.normal()
        for i in range(10):
            for model, skill in (("strong", 2.0), ("mid", 0.0), ("twin", 0.02)):
                p = 1 / (1 + np.exp(-(skill - difficulty)))
                rows.append((model, f"{g}-{i}", g, int(rng.random() < p)))
    frame = pd.DataFrame(rows, columns=["model", "item", "doc", "passed"])
    comp = frame.eval.compare("passed", by="doc", model="model", on="item", rng=5, n_resamples=2000)
    board = comp.leaderboard().set_index("model")
    assert board.loc["strong", "rank"] == 1
    assert (board.loc["strong", "rank_low"], board.loc["strong", "rank_high"]) == (1, 1)
    # two nearly identical models: their ranks are not separable
    assert board.loc["mid", "rank_low"] == 2
    assert board.loc["mid", "rank_high"] == 3
    again = frame.eval.compare(
        "passed", by="doc", model="model", on="item", rng=5, n_resamples=2000
    )
    assert again.leaderboard().equals(comp.leaderboard())


def test_compare_bootstrap_pairs_share_the_rank_draws():
    panel = small_panel()
    boot = panel.eval.compare(
        "passed", by="doc", model="model", on="item", method="bootstrap", n_resamples=4000, rng=2
    )
    analytic = panel.eval.compare(
        "passed", by="doc", model="model", on="item", rng=2, n_resamples=4000
    )
    pairs_b, pairs_a = boot.pairs(), analytic.pairs()
    assert (pairs_b["method"] == "bootstrap_percentile").all()
    assert pairs_b["delta"].tolist() == pairs_a["delta"].tolist()
    # the percentile interval of each pair and the CR2 interval describe the same spread
    width_b = (pairs_b["high"] - pairs_b["low"]).to_numpy()
    width_a = (pairs_a["high"] - pairs_a["low"]).to_numpy()
    assert np.all(np.abs(width_b / width_a - 1) < 0.25)
    assert boot.leaderboard().equals(analytic.leaderboard())  # same draws, same ranks


def test_compare_alignment_errors():
    panel = small_panel()
    lacking = panel[~((panel.model == "c") & panel.item.isin(["0-0", "3-1"]))]
    with pytest.raises(
        cs.AlignmentError,
        match=r"2 items are missing for some models "
        r"\(items lacking per model: 'c': 2\)",
    ):
        lacking.eval.compare("passed", by="doc", model="model", on="item")
    inner = lacking.eval.compare(
        "passed", by="doc", model="model", on="item", how="inner", n_resamples=200, rng=0
    )
    assert inner.n_items == 98
    assert inner.n_dropped_items == 2
    doubled = pd.concat([panel, panel.iloc[:3]])
    with pytest.raises(cs.AlignmentError, match="3 items have more than one row for one model"):
        doubled.eval.compare("passed", by="doc", model="model", on="item")
    with pytest.raises(cs.InvalidOptionError, match="at least two models"):
        panel[panel.model == "a"].eval.compare("passed", by="doc", model="model", on="item")


def test_compare_cluster_mean_estimand_matches_paired_delta():
    panel = small_panel(seed=1)
    comp = panel.eval.compare(
        "passed",
        by="doc",
        model="model",
        on="item",
        estimand="cluster_mean",
        n_resamples=200,
        rng=0,
    )
    a, c = panel[panel.model == "a"], panel[panel.model == "c"]
    single = cs.paired_delta(a, c, "passed", by="doc", on="item", estimand="cluster_mean")
    row = comp.pairs().query("model_a == 'a' and model_b == 'c'").iloc[0]
    assert row["delta"] == pytest.approx(single.delta, rel=1e-12)
    assert row["se"] == pytest.approx(single.se, rel=1e-10)


@pytest.mark.parametrize("missing", ["drop", "fail"])
def test_compare_does_not_depend_on_the_row_order(missing):
    """Rows in one block per model take a shortcut (no scatter); any other order takes the
    general path. Both must give the same comparison, on binary data to the last bit."""
    panel = small_panel(seed=4)  # item-major: the general path
    panel.loc[[5, 40, 41], "passed"] = np.nan
    blocked = panel.sort_values(["model", "doc", "item"], kind="stable")
    shuffled = panel.sample(frac=1.0, random_state=1)
    categorical = blocked.astype({"model": "category"})
    before = blocked.copy()
    expected = quiet(_compare_frame, panel, missing=missing)
    assert expected.n_missing_items == (2 if missing == "drop" else 0)
    for frame in (blocked, shuffled, categorical):
        got = quiet(_compare_frame, frame, missing=missing)
        pd.testing.assert_frame_equal(got.to_frame(), expected.to_frame())
        pd.testing.assert_frame_equal(got.leaderboard(), expected.leaderboard())
        assert got.n_missing_items == expected.n_missing_items
    pd.testing.assert_frame_equal(blocked, before)


def test_compare_row_order_with_a_continuous_outcome():
    panel = small_panel(seed=5)
    panel["passed"] = panel["passed"] + np.random.default_rng(0).normal(size=len(panel))
    blocked = panel.sort_values(["model", "item"])
    a, b = _compare_frame(panel).pairs(), _compare_frame(blocked).pairs()
    for column in ("delta", "se", "low", "high", "p_value"):
        np.testing.assert_allclose(a[column], b[column], rtol=1e-12)


def test_compare_blocked_layout_still_checks_clusters_and_duplicates():
    blocked = small_panel(seed=6).sort_values(["model", "item"], ignore_index=True)
    moved = blocked.copy()
    moved.loc[(moved.model == "b") & (moved.item == "0-0"), "doc"] = 7
    with pytest.raises(cs.AlignmentError, match="1 items have rows in several clusters"):
        _compare_frame(moved)
    repeated = blocked.copy()
    repeated.loc[repeated.item == "0-1", "item"] = "0-0"  # in every block: same shape, twice
    with pytest.raises(cs.AlignmentError, match="more than one row for one model"):
        _compare_frame(repeated)


@pytest.fixture
def threaded_small_blocks(monkeypatch):
    """Make every frame long enough for the threaded row passes, in blocks of 7 rows, so that
    slices, blocks and threads all split the small panels below."""
    from clusterstats.adapters import frame, pairing

    monkeypatch.setattr(frame, "_THREADED_ROWS", 1)
    monkeypatch.setattr(pairing, "_ROW_BLOCK", 7)
    monkeypatch.setattr(frame.os, "cpu_count", lambda: 3)
    monkeypatch.setattr(frame, "_pool", None)  # a pool of three threads, for these tests only


def _panel_variants():
    panel = small_panel(seed=8).sample(frac=1.0, random_state=2, ignore_index=True)
    continuous = panel.assign(
        passed=panel["passed"] + np.random.default_rng(1).normal(size=len(panel))
    )
    with_missing = panel.astype({"passed": float})
    with_missing.loc[[3, 50, 51, 200], "passed"] = np.nan
    lacking = panel[~((panel.model == "c") & panel.item.isin(["0-0", "3-1"]))]
    arrow = panel.astype({"model": "string[pyarrow]"})
    as_bool = panel.astype({"passed": bool})
    return {
        "binary int": (panel, {}),
        "continuous": (continuous, {}),
        "missing drop": (with_missing, {"missing": "drop"}),
        "missing ipw": (with_missing, {"missing": "ipw"}),
        "inner": (lacking, {"how": "inner"}),
        "arrow labels": (arrow, {}),
        "bool outcome": (as_bool, {}),
    }


@pytest.mark.parametrize("variant", list(_panel_variants()))
def test_threaded_row_passes_give_the_serial_numbers(variant, request):
    """The per-row passes of a long frame run in slices on threads and in cache-sized blocks;
    the result must not depend on how the rows were split."""
    frame, options = _panel_variants()[variant]
    serial = quiet(_compare_frame, frame, **options)
    request.getfixturevalue("threaded_small_blocks")
    threaded = quiet(_compare_frame, frame, **options)
    pd.testing.assert_frame_equal(threaded.to_frame(), serial.to_frame(), rtol=1e-13)
    pd.testing.assert_frame_equal(threaded.leaderboard(), serial.leaderboard())
    assert threaded.notes == serial.notes


def test_threaded_row_passes_still_report_bad_layouts(threaded_small_blocks):
    panel = small_panel(seed=9).sample(frac=1.0, random_state=3, ignore_index=True)
    moved = panel.copy()
    moved.loc[(moved.model == "b") & (moved.item == "0-0"), "doc"] = 7
    with pytest.raises(cs.AlignmentError, match="1 items have rows in several clusters"):
        _compare_frame(moved)
    doubled = pd.concat([panel, panel.iloc[:3]], ignore_index=True)
    with pytest.raises(cs.AlignmentError, match="3 items have more than one row for one model"):
        _compare_frame(doubled)


# -- the studentized bootstrap: the default of every pair ---------------------------------------


@pytest.mark.parametrize("estimand", ["pooled", "cluster_mean"])
def test_bootstrap_t_pairs_equal_paired_delta_on_the_same_seed(estimand):
    # compare studentises every pair from the rank bootstrap's draws; with the same seed those
    # are paired_delta's draws, so each pair's interval and p-value are paired_delta's.
    panel = small_panel(seed=4)
    res = _compare_frame(panel, estimand=estimand, method="bootstrap_t", n_resamples=400, rng=9)
    default = _compare_frame(panel, estimand=estimand, n_resamples=400, rng=9)
    assert res.method == default.method == "bootstrap_t"
    assert default.low == res.low
    assert default.high == res.high
    wide = panel.pivot(index="item", columns="model", values="passed").join(
        panel.drop_duplicates("item").set_index("item")["doc"]
    )
    cr2 = _compare_frame(panel, estimand=estimand, method="cr2")
    floor = _compare_frame(panel, estimand=estimand, method="cr3_ik")
    for k, (a, b) in enumerate(zip(res.pair_a, res.pair_b, strict=True)):
        single = quiet(
            cs.paired_delta,
            wide,
            a,
            b,
            by="doc",
            estimand=estimand,
            method="bootstrap_t",
            n_resamples=400,
            rng=9,
        )
        assert res.low[k] == pytest.approx(single.low, rel=1e-12, abs=1e-14)
        assert res.high[k] == pytest.approx(single.high, rel=1e-12, abs=1e-14)
        assert res.p_value[k] == pytest.approx(single.p_value, rel=1e-10)
        # never inside its floor's interval (the jackknife with the df of uneven sizes), nor
        # CR2's, and the p-value no smaller than theirs
        assert res.low[k] <= floor.low[k] + 1e-15 <= cr2.low[k] + 2e-15
        assert res.high[k] >= floor.high[k] - 1e-15 >= cr2.high[k] - 2e-15
        assert res.p_value[k] >= floor.p_value[k] - 1e-15
        assert floor.p_value[k] >= cr2.p_value[k] - 1e-15
    assert res.se == pytest.approx(floor.se, rel=1e-12)


@pytest.mark.parametrize("estimand", ["pooled", "cluster_mean"])
def test_cr2_ik_pairs_have_their_own_df_and_equal_paired_delta(estimand):
    # each pair's df of uneven sizes comes from its own differences (their Moulton ICC)
    panel = small_panel(seed=5)
    res = _compare_frame(panel, estimand=estimand, method="cr2_ik")
    assert res.method == "cr2_ik"
    wide = panel.pivot(index="item", columns="model", values="passed").join(
        panel.drop_duplicates("item").set_index("item")["doc"]
    )
    for k, (a, b) in enumerate(zip(res.pair_a, res.pair_b, strict=True)):
        single = quiet(cs.paired_delta, wide, a, b, by="doc", estimand=estimand, method="cr2_ik")
        assert res.df[k] == pytest.approx(single.df, rel=1e-12)
        assert res.low[k] == pytest.approx(single.low, rel=1e-12, abs=1e-14)
        assert res.high[k] == pytest.approx(single.high, rel=1e-12, abs=1e-14)
        assert res.p_value[k] == pytest.approx(single.p_value, rel=1e-10)
    assert res.to_frame()["df"].tolist() == list(res.df)


def test_bootstrap_t_pair_that_one_cluster_carries_is_bounded_by_its_discordant_items():
    # Model a passes the 5 items of doc 0 and nothing else; b passes nothing. About 36% of
    # the replicates miss doc 0 and have no spread, so the bootstrap cannot bound the upper
    # side. a - b is at most the share of items where a alone passes, so the bound is
    # cluster_ci's default upper bound on that clustered rate (the reference, computed here).
    docs = np.repeat(np.arange(30), 5)
    rows = [("a", f"{d}-{i}", d, int(d == 0)) for i, d in enumerate(docs)]
    rows += [("b", f"{d}-{i}", d, 0) for i, d in enumerate(docs)]
    panel = pd.DataFrame(rows, columns=["model", "item", "doc", "passed"])
    res = quiet(_compare_frame, panel, method="bootstrap_t")
    a_alone = pd.DataFrame({"doc": docs, "e": (docs == 0).astype(float)})
    expected = quiet(cs.cluster_ci, a_alone, "e", by="doc").high
    assert res.high[0] == pytest.approx(expected, rel=1e-12)
    assert res.delta[0] == pytest.approx(5 / 150)
    assert res.low[0] < res.delta[0] < res.high[0] < 1.0
    assert any("clustered rate of items where" in note for note in res.notes)


def test_compare_auto_switches_to_cr2_above_2000_clusters():
    rng = np.random.default_rng(5)
    docs = np.arange(2001)
    panel = pd.DataFrame(
        {
            "model": np.repeat(["a", "b"], docs.size),
            "item": np.tile(docs, 2),
            "doc": np.tile(docs, 2),
            "passed": rng.random(2 * docs.size) < 0.5,
        }
    ).astype({"passed": int})
    assert _compare_frame(panel, n_resamples=50).method == "cr2"
    assert _compare_frame(panel.iloc[1:].query("doc > 0"), n_resamples=50).method == "bootstrap_t"


def test_compare_bootstrap_t_is_refused_with_strata():
    panel = small_panel().assign(cat=lambda d: d["doc"] % 2)
    with pytest.raises(cs.InvalidOptionError, match="not 'bootstrap_t'"):
        _compare_frame(panel, strata="cat", method="bootstrap_t")


@pytest.mark.parametrize("method", ["cr2", "bootstrap", "bootstrap_t"])
def test_higher_minus_lower_turns_each_pair_without_changing_its_inference(method):
    # the best model sorts last, so the pairs as given include leads and lags
    panel = small_panel(seed=5).replace({"model": {"a": "z"}})
    given = quiet(_compare_frame, panel, method=method)
    turned = quiet(_compare_frame, panel, method=method, orientation="higher_minus_lower")
    a, b = given.pairs(), turned.pairs()
    score = dict(zip(given.models, given.score, strict=True))
    assert (b["delta"] >= 0).all()
    assert all(score[x] >= score[y] for x, y in zip(b.model_a, b.model_b, strict=True))
    flipped = (a["delta"] < 0).to_numpy()
    assert flipped.any()  # the panel has pairs of both kinds
    assert not flipped.all()
    # a turned pair is the same pair negated: its bounds swap and change sign
    np.testing.assert_allclose(
        b["delta"], np.where(flipped, -a["delta"], a["delta"]), rtol=0, atol=0
    )
    np.testing.assert_allclose(b["low"], np.where(flipped, -a["high"], a["low"]), rtol=0, atol=0)
    np.testing.assert_allclose(b["high"], np.where(flipped, -a["low"], a["high"]), rtol=0, atol=0)
    np.testing.assert_array_equal(b["model_a"], np.where(flipped, a["model_b"], a["model_a"]))
    for column in ("se", "df", "p_value", "p_adjusted"):
        np.testing.assert_array_equal(b[column], a[column])
    assert turned.orientation == "higher_minus_lower"
    assert given.orientation == "as_given"
    assert "every pair, higher minus lower: .pairs()" in repr(turned)
    assert "every pair: .pairs()" in repr(given)
    # and it is paired_delta with the models passed higher first
    top = b.iloc[0]
    delta = quiet(
        cs.paired_delta,
        panel[panel.model == top.model_a],
        panel[panel.model == top.model_b],
        "passed",
        by="doc",
        on="item",
        method="cr2",
    )
    if method == "cr2":
        assert delta.delta == pytest.approx(top.delta, abs=1e-12)
        assert (delta.low, delta.high) == pytest.approx((top.low, top.high), abs=1e-12)


def test_orientation_is_checked():
    with pytest.raises(cs.InvalidOptionError, match="orientation"):
        _compare_frame(small_panel(), orientation="descending")


def test_leaderboard_carries_each_models_naive_interval():
    panel = small_panel(seed=2)
    board = quiet(_compare_frame, panel).leaderboard().set_index("model")
    for model, rows in panel.groupby("model"):
        ci = quiet(cs.cluster_ci, rows, "passed", by="doc")
        assert board.loc[model, "naive_low"] == pytest.approx(ci.naive_low, abs=1e-14)
        assert board.loc[model, "naive_high"] == pytest.approx(ci.naive_high, abs=1e-14)
        # rows treated as independent: narrower than the clustered interval here
        assert board.loc[model, "naive_high"] - board.loc[model, "naive_low"] < (
            board.loc[model, "high"] - board.loc[model, "low"]
        )
