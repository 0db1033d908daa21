"""The projection of a pilot's df to other numbers of clusters (ScaledDesign.df_at): from
draws of the pilot's sizes for small pilots and few clusters, from the draw's expected sums
for large pilots beyond that (issue 45: plans from a large pilot)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats.core import planning as pl
from clusterstats.core.grouping import cluster_sums
from clusterstats.core.variance import working_model_bias, working_model_df
from clusterstats.stats import planning as stats_planning

QUIET = pytest.mark.filterwarnings("ignore::clusterstats.ClusterStatsWarning")


def uneven_sizes(n_clusters: int, mean_size: float, seed: int = 3) -> np.ndarray:
    """Gamma-weighted sizes, each at least 1, as the benchmarks draw them."""
    rng = np.random.default_rng(seed)
    weights = rng.gamma(2.0, size=n_clusters)
    extra = rng.multinomial(int(n_clusters * (mean_size - 1)), weights / weights.sum())
    return 1.0 + extra


def drawn_medians(sizes: np.ndarray, k: int, icc: float, jackknife: bool) -> tuple[float, float]:
    """The median working-model df (capped at k - 1) and factor of the projection's draws,
    written out from ScaledDesign's documented rule (256 sets, its fixed seed)."""
    rng = np.random.default_rng(pl._DRAW_SEED)
    drawn = sizes[rng.integers(0, sizes.shape[0], size=(pl._DRAWS, k))]
    df = working_model_df(drawn, icc, "pooled", jackknife=jackknife)
    bias = working_model_bias(drawn, icc, "pooled", jackknife=jackknife)
    return float(np.median(np.minimum(df, k - 1.0))), float(np.median(bias))


@pytest.mark.parametrize("jackknife", [False, True])
def test_expected_sums_give_the_median_draw_of_many_clusters(jackknife):
    sizes = uneven_sizes(1000, 100.0)
    # the tolerances ScaledDesign.df_at states: 2-3% just past the draws, 0.5% from 1,000
    ks, tolerances = [300, 1000, 3000], [0.03, 0.005, 0.005]
    df, bias = pl.expected_working_model_terms(sizes, 0.2, "pooled", ks, jackknife=jackknife)
    for k, found, factor, tolerance in zip(ks, df, bias, tolerances, strict=True):
        drawn_df, drawn_bias = drawn_medians(sizes, k, 0.2, jackknife)
        assert found == pytest.approx(drawn_df, rel=tolerance)
        assert factor == pytest.approx(drawn_bias, rel=1e-4)


def test_expected_sums_of_equal_sizes_are_those_of_equal_clusters():
    df, bias = pl.expected_working_model_terms(np.full(50, 8.0), 0.3, "pooled", [10, 500])
    assert df.tolist() == [9.0, 499.0]
    # CR2 is unbiased under the working model when sizes are equal
    assert bias == pytest.approx(1.0, rel=1e-12)


def test_expected_sums_reject_an_unknown_estimand():
    with pytest.raises(ValueError, match="unknown estimand"):
        pl.expected_working_model_terms(np.ones(3), 0.1, "median", [10])


def scaled(sizes: np.ndarray, *, jackknife: bool = False) -> pl.ScaledDesign:
    return pl.ScaledDesign(
        half_width=0.02,
        df=float(working_model_df(sizes, 0.2, "pooled", jackknife=jackknife)),
        n_clusters=sizes.shape[0],
        confidence=0.95,
        sizes=sizes,
        icc=0.2,
        jackknife=jackknife,
    )


def test_a_small_pilot_is_projected_from_draws_at_every_count():
    sizes = uneven_sizes(pl._DRAWN_PILOT, 20.0)
    design = scaled(sizes)
    at_pilot = drawn_medians(sizes, sizes.shape[0], 0.2, False)[0]
    for k in (2, 50, 900):
        expected = design.df * drawn_medians(sizes, k, 0.2, False)[0] / at_pilot
        assert design.df_at(k) == pytest.approx(max(expected, 1.0), rel=1e-12)


def test_a_large_pilot_draws_few_clusters_and_takes_expected_sums_beyond():
    sizes = uneven_sizes(pl._DRAWN_PILOT + 100, 20.0)
    design = scaled(sizes, jackknife=True)
    g = sizes.shape[0]
    ks = [g, pl._FEW_DRAWN + 1, 3 * g]
    df, bias = pl.expected_working_model_terms(sizes, 0.2, "pooled", ks, jackknife=True)
    for k, found, factor in zip(ks, df, bias, strict=True):
        assert design.df_at(k) == pytest.approx(design.df * found / df[0], rel=1e-12)
        assert design.bias_at(k) == pytest.approx(design.bias_at(g) * factor / bias[0], rel=1e-12)
    # at the pilot's clusters the projection is the pilot's own interval
    assert design.df_at(g) == pytest.approx(design.df, rel=1e-12)
    assert design.half_width(g) == pytest.approx(0.02, rel=1e-12)
    few = pl._FEW_DRAWN
    drawn = drawn_medians(sizes, few, 0.2, True)[0]
    assert design.df_at(few) == pytest.approx(design.df * drawn / df[0], rel=1e-12)


def test_preparing_the_grid_at_once_changes_nothing():
    sizes = uneven_sizes(2000, 10.0)
    grid = np.geomspace(500, 6000, 60).tolist()
    one_by_one, at_once = scaled(sizes), scaled(sizes)
    at_once.prepare(grid)
    for k in grid:
        assert at_once.df_at(k) == pytest.approx(one_by_one.df_at(k), rel=1e-12)
        assert at_once.half_width(k) == pytest.approx(one_by_one.half_width(k), rel=1e-12)


def test_a_large_pilot_projects_a_half_width_that_falls_with_every_cluster():
    # across the switch from draws to expected sums too
    sizes = uneven_sizes(1000, 30.0)
    design = scaled(sizes)
    widths = [design.half_width(k) for k in range(2, 3001)]
    assert all(b < a for a, b in itertools.pairwise(widths))


def large_pilot(n_clusters: int, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    sizes = uneven_sizes(n_clusters, 12.0, seed).astype(int)
    cluster = np.repeat(np.arange(n_clusters), sizes)
    rate = rng.beta(2.0, 2.0, n_clusters)[cluster]
    return pd.DataFrame({"y": (rng.random(cluster.shape[0]) < rate).astype(int), "c": cluster})


@QUIET
def test_a_plan_skips_the_base_interval_only_where_it_is_the_union(monkeypatch):
    pilot = large_pilot(600, seed=1)
    # the score interval lies inside this pilot's union, so the plan skips the base
    ci = cs.cluster_ci(pilot, "y", by="c")
    sums = cluster_sums(pilot["y"].to_numpy(float), pilot["c"].to_numpy())
    assert not stats_planning._score_reaches(sums, 0.95, ci.low, ci.high)
    options = {"target_half_width": 0.02, "effect": 0.03}
    skipped = cs.pilot_plan(pilot, "y", by="c", **options)
    monkeypatch.setattr(stats_planning, "_score_reaches", lambda *args: True)
    recomputed = cs.pilot_plan(pilot, "y", by="c", **options)
    assert skipped.method == "korn_graubard_hybrid_or_score"
    assert skipped == recomputed
    assert skipped.projection == recomputed.projection


@QUIET
def test_a_plan_from_a_large_pilot_is_the_pilots_interval_at_its_clusters():
    pilot = large_pilot(1200)
    plan = pilot.eval.plan("y", "c", target_half_width=0.01)
    ci = pilot.eval.cluster_ci("y", by="c")
    assert plan.half_width == (ci.high - ci.low) / 2
    projected = dict(plan.projection)
    assert projected[1200.0] == pytest.approx(plan.half_width, rel=1e-12)
    assert math.ceil(plan.clusters_needed) > 1200
    assert projected[plan.clusters_needed] == pytest.approx(0.01, rel=1e-9)
