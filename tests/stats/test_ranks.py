"""Rank sets, tiers and the top set of ``compare``, and ``compare(over=)``: one family over
slices x pairs."""

import math

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats.core.paired import (
    adjust_p_values,
    pairwise_cluster_robust,
    shared_replicates,
    summarize_comparison,
)
from clusterstats.core.ranks import rank_sets
from clusterstats.stats.comparison import DEFAULT_RANK_METHOD


def leaderboard_frame(seed=0, n_models=6, n_docs=30, icc=0.3, gaps=0.15):
    """Long results of ``n_models`` models on the same items in documents of uneven size,
    with a model-by-document effect (what makes clustering matter for differences)."""
    rng = np.random.default_rng(seed)
    rows = []
    skills = np.linspace(gaps * n_models / 2, -gaps * n_models / 2, n_models)
    for doc in range(n_docs):
        shared = rng.normal(0, math.sqrt(icc / 2))
        own = rng.normal(0, math.sqrt(icc / 2), n_models)
        for item in range(1 + rng.poisson(6)):
            noise = rng.normal(0, math.sqrt(1 - icc), n_models)
            for m in range(n_models):
                passed = int(0.3 + skills[m] + shared + own[m] + noise[m] > 0)
                rows.append((f"m{m}", f"{doc}-{item}", f"d{doc}", doc % 3, passed))
    return pd.DataFrame(rows, columns=["model", "item", "doc", "topic", "passed"])


def run(frame, **options):
    options = {"rng": 1, "n_resamples": 999, **options}
    return cs.compare(frame, "passed", by="doc", model="model", on="item", **options)


def test_the_leaderboard_has_every_set_and_they_nest():
    res = run(leaderboard_frame())
    board = res.leaderboard()
    for column in ("rank_low", "rank_high", "marginal_rank_low", "marginal_rank_high", "tier"):
        assert column in board.columns
    # marginal sets (one model's family) lie inside the simultaneous ones, and both hold
    # the estimated rank
    assert (board["rank_low"] <= board["marginal_rank_low"]).all()
    assert (board["marginal_rank_low"] <= board["rank"]).all()
    assert (board["rank"] <= board["marginal_rank_high"]).all()
    assert (board["marginal_rank_high"] <= board["rank_high"]).all()
    assert board["in_top_set"].tolist() == (board["rank_low"] <= 1).tolist()
    assert res.rank_method == "guarded"


def test_compare_ranks_are_the_core_step_down_on_its_own_draws():
    # rank_method="bootstrap", method="cr2": the sets are rank_sets() of the CR2 variance
    # and the replicates of the shared cluster bootstrap drawn from the same seed
    frame = leaderboard_frame(seed=2)
    res = run(frame, method="cr2", rank_method="bootstrap", rng=7, n_resamples=500)
    wide = frame.pivot(index="item", columns="model", values="passed")
    docs = frame.groupby("item")["doc"].first().loc[wide.index]
    codes, _ = pd.factorize(docs, sort=True)
    totals = np.zeros((codes.max() + 1, wide.shape[1]))
    np.add.at(totals, codes, wide.to_numpy(float))
    counts = np.bincount(codes).astype(float)
    means, variance, _, _ = pairwise_cluster_robust(totals, counts, "CR2")
    replicates, _ = shared_replicates(
        totals, counts, n_resamples=500, rng=np.random.Generator(np.random.PCG64(7))
    )
    simultaneous = rank_sets(means, np.sqrt(variance), replicates - means, confidence=0.95)
    alone = rank_sets(
        means, np.sqrt(variance), replicates - means, confidence=0.95, simultaneous=False
    )
    assert list(res.models) == list(wide.columns)
    assert list(res.rank_low) == simultaneous.low.tolist()
    assert list(res.rank_high) == simultaneous.high.tolist()
    assert list(res.marginal_rank_low) == alone.low.tolist()
    assert list(res.marginal_rank_high) == alone.high.tolist()


def test_tiers_follow_their_stated_rule():
    res = cs.compare(
        cs.datasets.load("repoqa_snf"), "correct", by="repo", model="system",
        on="instance_id", rng=0, n_resamples=999,
    )  # fmt: skip
    tier = dict(zip(res.models, res.tier, strict=True))
    above = set(res.separated)
    for model in res.models:
        over = [a for a, b in above if b == model]
        # tier 1: no model separated above; otherwise one below the lowest tier above it
        assert tier[model] == (1 + max(tier[a] for a in over) if over else 1)
        # nobody in a model's own tier is separated from it
        assert not any((a, model) in above for a in res.models if tier[a] == tier[model])
    # the three systems tied at 453 of 500 are all in the top set, and so in tier 1
    tied = [m for m, s in zip(res.models, res.score, strict=True) if s == 0.906]
    assert len(tied) == 3
    assert all(tier[m] == 1 for m in tied)
    assert all(inside for m, inside in zip(res.models, res.in_top_set, strict=True) if m in tied)


def test_top_and_rank_method_options():
    frame = leaderboard_frame(seed=3)
    two = run(frame, top=2)
    assert two.in_top_set == tuple(bool(low <= 2) for low in two.rank_low)
    assert "among the best 2" in repr(two)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(cs.InvalidOptionError, match="top"):
            run(frame, top=bad)
    with pytest.raises(cs.InvalidOptionError, match="top=7 is more places than the 6 models"):
        run(frame, top=7)
    with pytest.raises(cs.InvalidOptionError, match="rank_method"):
        run(frame, rank_method="exact")
    with pytest.raises(cs.InvalidOptionError, match="no crossed form"):
        cs.compare(
            frame, "passed", by=["doc", "topic"], model="model", on="item", crossed=True,
            rank_method="bootstrap",
        )  # fmt: skip


def test_the_text_states_the_rules_and_the_top_set():
    res = run(leaderboard_frame())
    text = repr(res)
    assert "ranks (all)" in text
    assert "rank (alone)" in text
    assert "could be first (95%, all models at once)" in text
    assert "Mogstad, Romano, Shaikh & Wilhelm 2024" in text
    assert f"adjacent places separated: {res.n_separated_neighbours} of 5" in text
    metrics = res.to_metrics()
    assert metrics["m0/in_top_set"] in (0.0, 1.0)
    assert metrics["m0/tier"] == res.tier[0]


def test_simultaneous_coverage_quick_simulation():
    """The study's hardest kind of cell in a quick form (studies/coverage_ranks.py --part
    tied): twenty tied models on 20 documents of uneven size (more models than the
    clusters' df, so the estimated covariance is singular), ICC 0.5, compare's default sets;
    every model's true rank set is [1, 20], so a draw misses when the family separates any
    pair. The unguarded multivariate t, on the same draws, misses whenever the default does
    (its critical values are never larger)."""
    rng = np.random.default_rng(11)
    runs, n_models, misses, top_misses, unguarded = 120, 20, 0, 0, 0
    for run in range(runs):
        sizes = 1 + rng.poisson(9, 20)
        cluster = np.repeat(np.arange(20), sizes)
        u = rng.normal(0, 0.5, 20)
        v = rng.normal(0, 0.5, (20, n_models))
        noise = rng.normal(0, math.sqrt(0.5), (cluster.size, n_models))
        z = 0.3 + u[cluster, None] + v[cluster] + noise
        totals = np.zeros((20, n_models))
        np.add.at(totals, cluster, (z > 0).astype(float))
        found = {
            method: summarize_comparison(
                totals, sizes.astype(float), estimand="pooled", method="cr3", adjust="none",
                confidence=0.95, baseline=None, n_resamples=499,
                rng=np.random.default_rng(run), rank_method=method,
            ).ranks
            for method in (DEFAULT_RANK_METHOD, "t")
        }  # fmt: skip
        missed = {m: bool((r.low > 1).any() or (r.high < n_models).any()) for m, r in found.items()}
        assert missed["t"] or not missed[DEFAULT_RANK_METHOD]
        misses += missed[DEFAULT_RANK_METHOD]
        unguarded += missed["t"]
        top_misses += bool((found[DEFAULT_RANK_METHOD].low > 1).any())
    bound = 0.05 + 3 * math.sqrt(0.05 * 0.95 / runs)
    assert misses / runs <= bound
    assert top_misses / runs <= bound
    assert unguarded >= misses


# -- slices -----------------------------------------------------------------------------


def test_each_slice_is_compare_on_its_rows_at_the_bonferroni_level():
    frame = leaderboard_frame(seed=4, n_docs=60)
    sliced = run(frame, over="topic")
    assert isinstance(sliced, cs.SliceComparison)
    assert sliced.slices == (0, 1, 2)
    assert sliced.slice_confidence == pytest.approx(1 - 0.05 / 3)
    for topic in sliced.slices:
        alone = run(frame[frame.topic == topic], confidence=1 - 0.05 / 3)
        pd.testing.assert_frame_equal(sliced[topic].leaderboard(), alone.leaderboard())
        pd.testing.assert_frame_equal(sliced[topic].pairs(), alone.pairs())


def test_the_family_spans_every_slice():
    frame = leaderboard_frame(seed=5, n_docs=60, gaps=0.3)
    sliced = run(frame, over="topic")
    pairs = sliced.pairs()
    assert sliced.n_family == len(pairs) == 3 * 15
    np.testing.assert_allclose(
        pairs["p_family"], adjust_p_values(pairs["p_value"].to_numpy(), "holm")
    )
    # a lead is reported only when its family p-value is below 5%, leader first
    leads = sliced.leads()
    assert len(leads) == int((pairs["p_family"] < 0.05).sum()) > 0
    assert (leads["delta"] > 0).all()
    assert (leads["low"] <= leads["delta"]).all()
    # the family is stricter than each slice's own adjustment
    assert (pairs["p_family"] >= pairs["p_adjusted"] - 1e-15).all()
    assert "leads that survive the family" in repr(sliced)
    assert set(sliced.leaderboard()["slice"]) == {0, 1, 2}


def test_slices_report_what_is_wrong_and_where():
    frame = leaderboard_frame(seed=6, n_docs=60)
    with pytest.raises(cs.ColumnNotFoundError, match="language"):
        run(frame, over="language")
    # one slice where a model lacks an item
    broken = frame.drop(frame[(frame.topic == 1) & (frame.model == "m2")].index[:1])
    with pytest.raises(cs.AlignmentError, match="slice topic=1"):
        run(broken, over="topic")
    gaps = frame.astype({"topic": "float"})
    gaps.loc[gaps.index[:3], "topic"] = np.nan
    with pytest.raises(cs.InvalidClusterError, match="over="):
        run(gaps, over="topic")
    assert frame.equals(leaderboard_frame(seed=6, n_docs=60))  # the caller's frame is untouched
