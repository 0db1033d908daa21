"""compare at arena scale (issue 45): the pairs' bootstrap-t is worked a block of pairs at a
time and the rank sets' step-down recomputes only what changed; the answers are the
definitions' (a pair-by-pair reference, a step-down that recomputes every round) and do not
depend on the block size, and memory does not grow with pairs x replicates."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

from clusterstats.core import paired
from clusterstats.core._lazy import special
from clusterstats.core.bootstrap import studentized_bounds
from clusterstats.core.paired import shared_replicates, summarize_comparison
from clusterstats.core.ranks import difference_sd, normal_deviations, rank_sets


def board(n_models: int, n_clusters: int = 40, *, binary: bool = True, seed: int = 3):
    """Per-cluster totals of ``n_models`` models on clusters of uneven sizes, with the sums
    over items of the products of two models' values (0/1 items: the shared passes)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 12, size=n_clusters)
    cluster = np.repeat(np.arange(n_clusters), sizes)
    difficulty = rng.normal(size=n_clusters)[cluster] + rng.normal(size=cluster.size)
    skill = rng.normal(0, 0.5, size=n_models)
    if binary:
        p = 1 / (1 + np.exp(-(skill[None, :] - difficulty[:, None])))
        items = (rng.random(p.shape) < p).astype(float)
    else:
        items = skill[None, :] + difficulty[:, None] + rng.gamma(0.5, size=(cluster.size, n_models))
    totals = np.zeros((n_clusters, n_models))
    np.add.at(totals, cluster, items)
    return totals, sizes.astype(float), items.T @ items


def compare(totals, counts, products, *, seed=5, n_resamples=199, **options):
    settings = dict(
        estimand="pooled",
        method="bootstrap_t",
        adjust="holm",
        confidence=0.95,
        baseline=None,
        n_resamples=n_resamples,
        item_products=products,
        rank_method="guarded",
    )
    settings.update(options)
    return summarize_comparison(totals, counts, rng=np.random.default_rng(seed), **settings)


def assert_same(one, other):
    for name in ("delta", "se", "low", "high", "df", "p_value", "p_adjusted", "means"):
        assert np.array_equal(getattr(one, name), getattr(other, name), equal_nan=True), name
    for name in one.ranks._fields[:-1]:
        assert np.array_equal(getattr(one.ranks, name), getattr(other.ranks, name)), name
    assert one.notes == other.notes


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "continuous"])
def test_block_size_does_not_change_the_answers(monkeypatch, binary):
    # 300 pairs: with one panel per block they take three blocks, by default one
    totals, counts, products = board(25, binary=binary)
    default = compare(totals, counts, products)
    monkeypatch.setattr(paired, "PAIR_BLOCK_ELEMENTS", 1)
    tiny = compare(totals, counts, products)
    assert_same(default, tiny)


def test_draws_made_again_from_the_saved_state_are_the_kept_draws(monkeypatch):
    # drawn again from the generator's saved state, the counts are the kept ones; with one
    # chunk of draws (199 x 40 clusters) the products have the same shapes, so the answers
    # agree to the bit
    totals, counts, products = board(12)
    kept = compare(totals, counts, products)
    monkeypatch.setattr(paired, "KEPT_DRAW_ELEMENTS", 0)
    drawn_again = compare(totals, counts, products)
    assert_same(kept, drawn_again)


@pytest.mark.parametrize("binary", [True, False], ids=["binary", "continuous"])
def test_bootstrap_t_pairs_equal_the_pair_by_pair_reference(binary):
    assert_pair_by_pair_reference(*board(9, binary=binary))


def test_pairs_with_clusters_at_their_estimate_equal_the_pair_by_pair_reference():
    # 40 clusters of 4 and 8 items (256 in all, so the means are exact); B passes n_k / 4
    # items fewer than A in every cluster but two (one more, one fewer), so delta = 0.25
    # exactly and 38 clusters sit exactly at the estimate: about 13% of the replicates draw
    # only those, and their t is 0. The pair is found and drawn from its centred differences.
    rng = np.random.default_rng(8)
    sizes = np.r_[np.tile([4, 8], 16), np.full(8, 8)]
    start = np.cumsum(sizes) - sizes
    a = (rng.random(256) < 0.6).astype(float)
    b = a.copy()
    fewer = sizes // 4
    fewer[0], fewer[2] = 0, 2
    for k in range(40):
        a[start[k] : start[k] + fewer[k]] = 1.0
        b[start[k] : start[k] + fewer[k]] = 0.0
    items = np.column_stack([a, b, (rng.random(256) < 0.5).astype(float)])
    totals = np.zeros((40, 3))
    np.add.at(totals, np.repeat(np.arange(40), sizes), items)
    counts = sizes.astype(float)
    pair_a, pair_b = np.triu_indices(3, k=1)
    means = totals.sum(axis=0) / 256
    delta = means[pair_a] - means[pair_b]
    assert delta[0] == 0.25
    near = paired._near_estimate(totals, counts, pair_a, pair_b, delta)
    assert near.tolist() == [True, False, False]
    assert_pair_by_pair_reference(totals, counts, items.T @ items)


def assert_pair_by_pair_reference(totals, counts, products):
    """The definition, pair by pair: each pair's per-cluster differences centred at its
    estimate, their squares and their products with the counts, resampled with the same
    draws, studentised by studentized_bounds; joined with the cr3_ik floor."""
    found = compare(totals, counts, products, n_resamples=499)
    floor = compare(totals, counts, products, n_resamples=499, method="cr3_ik")
    a, b = found.pair_a, found.pair_b
    means = totals.sum(axis=0) / counts.sum()
    centred = totals[:, a] - totals[:, b] - np.outer(counts, means[a] - means[b])
    extra = np.column_stack(
        [centred, centred * centred, centred * counts[:, None], counts * counts, counts]
    )
    _, sums = shared_replicates(
        totals, counts, n_resamples=499, rng=np.random.default_rng(5), extra=extra
    )
    n_pairs, g = a.shape[0], counts.shape[0]
    cr1 = paired.pairwise_cluster_robust(totals, counts, "CR1")[1][a, b]
    for k in range(n_pairs):
        gap = sums[:, k] / sums[:, -1]
        square, cross = sums[:, n_pairs + k], sums[:, 2 * n_pairs + k]
        bounds = studentized_bounds(
            float(found.delta[k]),
            math.sqrt(cr1[k]),
            gap,
            square - 2.0 * gap * cross + gap * gap * sums[:, -2],
            sums[:, -1],
            magnitude=square,
            n_clusters=g,
            confidence=0.95,
            null=0.0,
        )
        assert found.low[k] == pytest.approx(min(floor.low[k], bounds.low), rel=1e-12)
        assert found.high[k] == pytest.approx(max(floor.high[k], bounds.high), rel=1e-12)
        expected_p = max(floor.p_value[k], bounds.p_value)
        assert found.p_value[k] == pytest.approx(expected_p, rel=1e-12)


def reference_rank_sets(estimates, sd, deviations, *, confidence, simultaneous, guard_df):
    """The step-down of rank_sets, recomputing every studentised deviation each round."""
    m = estimates.shape[0]
    usable = sd > 0
    scale = np.where(usable, sd, 1.0)
    studentised = (deviations[:, :, None] - deviations[:, None, :]) / scale  # [r, j, k]
    if simultaneous:
        studentised = (deviations[:, :, None] - deviations[:, None, :]) * (1.0 / scale)
    difference = estimates[:, None] - estimates[None, :]
    alpha = 1.0 - confidence
    row_active = ~np.eye(m, dtype=bool)
    column_active = row_active.copy()
    row_rejected = np.zeros((m, m), dtype=bool)
    column_rejected = np.zeros((m, m), dtype=bool)
    while True:
        row_mask, column_mask = row_active & usable, column_active & usable.T
        own = np.where(row_mask, studentised, -np.inf).max(axis=2)
        if simultaneous:
            critical = np.full(m, np.quantile(own.max(axis=1), confidence))
            open_pairs = np.full(m, row_mask.sum())
        else:
            other = np.where(column_mask, studentised.transpose(0, 2, 1), -np.inf).max(axis=2)
            critical = np.quantile(np.maximum(own, other), confidence, axis=0)
            open_pairs = row_mask.sum(axis=1) + column_mask.sum(axis=1)
        if guard_df is not None:
            holm = special.stdtrit(guard_df, 1.0 - alpha / np.maximum(open_pairs, 1))
            critical = np.maximum(critical, holm)
        new_row = row_mask & (difference - sd * critical[:, None] > 0)
        new_column = column_mask & (difference.T - sd * critical[:, None] > 0)
        row_rejected |= new_row
        column_rejected |= new_column
        if simultaneous:
            new_column = np.zeros_like(new_column)
        if not (new_row.any() or new_column.any()):
            break
        row_active &= ~new_row
        column_active &= ~new_column
    if simultaneous:
        return 1 + row_rejected.sum(axis=0), m - row_rejected.sum(axis=1)
    return 1 + column_rejected.sum(axis=1), m - row_rejected.sum(axis=1)


@pytest.mark.parametrize("simultaneous", [True, False], ids=["simultaneous", "marginal"])
@pytest.mark.parametrize("guard_df", [None, 12.0])
def test_rank_sets_equal_a_step_down_that_recomputes_every_round(simultaneous, guard_df):
    rng = np.random.default_rng(11)
    m = 30
    spread = rng.normal(size=(m, m)) * 0.01
    covariance = spread @ spread.T + np.eye(m) * 1e-4
    estimates = np.sort(rng.normal(0, 0.3, m))[::-1].copy()
    estimates[7] = estimates[8]  # a tie
    sd = difference_sd(covariance)
    sd[3, 9] = sd[9, 3] = 0.0  # a pair never separated
    deviations = normal_deviations(covariance, 400, rng)
    found = rank_sets(
        estimates,
        sd,
        deviations,
        confidence=0.9,
        simultaneous=simultaneous,
        guard_df=guard_df,
    )
    low, high = reference_rank_sets(
        estimates,
        sd,
        deviations,
        confidence=0.9,
        simultaneous=simultaneous,
        guard_df=guard_df,
    )
    assert found.steps > 1  # the step-down went past its first round
    assert found.low.tolist() == low.tolist()
    assert found.high.tolist() == high.tolist()


def test_memory_does_not_grow_with_pairs_times_replicates(monkeypatch):
    # 120 models, 7,140 pairs, 999 resamples: one array of every pair's replicates is
    # 999 x 7,140 x 8 bytes = 57 MB, and the former layout held three of them; the blocks
    # (here 2^16 replicate values each) keep the peak well under one
    monkeypatch.setattr(paired, "PAIR_BLOCK_ELEMENTS", 1 << 16)
    totals, counts, products = board(120)
    n_resamples = 999
    tracemalloc.start()
    try:
        compare(totals, counts, products, n_resamples=n_resamples)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    one_array = n_resamples * (120 * 119 // 2) * 8
    assert peak < one_array / 2


@pytest.mark.parametrize(
    ("n", "low", "high"),
    [(9999, 249, 9749), (9999, 4, 9994), (9999, 0, 9998), (999, 24, 974), (9999, 2499, 7499)],
)
def test_order_statistics_are_the_partitions(n, low, high):
    # the values a whole partition puts at low and high, with ties, infinities (a replicate
    # without spread) and rows whose cut leaves too few values beyond it
    rng = np.random.default_rng(n + low)
    values = rng.standard_t(3, size=(40, n))
    values[1, : n // 3] = np.inf
    values[2, :] = -np.inf
    values[3, ::2] = 0.0
    values[4] = np.round(values[4], 1)
    values[5, : n - 3] = -np.inf  # every sampled value at -inf: the cut leaves all
    # the sampled columns (every eighth) alone in the tails: a cut leaves too few beyond it
    values[6, ::8] = -1.0 - rng.random(values[6, ::8].shape)
    values[6, np.arange(n) % 8 > 0] = 10.0
    values[7, ::8] = 1.0 + rng.random(values[7, ::8].shape)
    values[7, np.arange(n) % 8 > 0] = -10.0
    whole = values.copy()
    whole.partition((low, high), axis=1)
    found_low, found_high = paired._order_statistics(values, low, high)
    assert np.array_equal(found_low, whole[:, low])
    assert np.array_equal(found_high, whole[:, high])
