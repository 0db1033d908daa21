"""The studentised (bootstrap-t) cluster bootstrap: the same numbers as a plain loop over
resampled rows, never narrower than CR2, and explicit when the data cannot bound a side."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats.core.bootstrap import studentized_interval
from clusterstats.core.grouping import cluster_sums
from clusterstats.core.summary import summarize_interval


def _rows(seed: int, g: int = 15):
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 9, g)
    codes = np.repeat(np.arange(g), sizes)
    level = rng.gamma(0.6, 1.0, g)[codes]
    values = np.where(rng.random(codes.size) < 0.4, rng.lognormal(level, 1.0), 0.0) + 3.0
    return values, codes


def _loop_reference(values, codes, estimand, indices, confidence):
    """Resample clusters row by row and studentise each replicate by its own CR1 standard
    error, written out from the definition (Davison & Hinkley 1997, eq. 5.7)."""
    g = int(codes.max()) + 1
    groups = [values[codes == j] for j in range(g)]

    def estimate_and_se(chosen):
        if estimand == "pooled":
            rows = np.concatenate(chosen)
            theta = rows.mean()
            scores = np.array([c.sum() - theta * c.size for c in chosen]) / rows.size
        else:
            means = np.array([c.mean() for c in chosen])
            theta = means.mean()
            scores = (means - theta) / g
        return theta, math.sqrt(g / (g - 1) * float(scores @ scores))

    theta, se = estimate_and_se(groups)
    t_stats = []
    for draw in indices:
        th, s = estimate_and_se([groups[j] for j in draw])
        t_stats.append((th - theta) / s if s > 0 else math.copysign(math.inf, th - theta))
    alpha = 1 - confidence
    t_low, t_high = np.quantile(t_stats, [alpha / 2, 1 - alpha / 2], method="inverted_cdf")
    return theta - t_high * se, theta - t_low * se


@pytest.mark.parametrize("estimand", ["pooled", "cluster_mean"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_a_plain_loop_on_the_same_draws(estimand, seed):
    values, codes = _rows(seed)
    g = int(codes.max()) + 1
    indices = np.random.default_rng(seed).integers(0, g, size=(300, g))
    got = studentized_interval(
        cluster_sums(values, codes, g),
        estimand,
        confidence=0.9,
        n_resamples=300,
        rng=np.random.default_rng(0),
        indices=indices,
    )
    low, high = _loop_reference(values, codes, estimand, indices, 0.9)
    assert (got.low, got.high) == pytest.approx((low, high), rel=1e-10)


@pytest.mark.parametrize("seed", range(6))
def test_never_inside_the_cr3_ik_interval_nor_cr2s(seed):
    values, codes = _rows(seed)
    frame = pd.DataFrame({"y": values, "g": codes})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.FewClustersWarning)
        cr2 = cs.cluster_ci(frame, "y", by="g", method="cr2")
        floor = cs.cluster_ci(frame, "y", by="g", method="cr3_ik")
        boot = cs.cluster_ci(frame, "y", by="g", method="bootstrap_t", n_resamples=499, rng=seed)
    assert boot.method == "bootstrap_t"
    assert boot.low <= floor.low <= cr2.low
    assert boot.high >= floor.high >= cr2.high
    assert boot.se == pytest.approx(floor.se, rel=1e-12)  # the jackknife's
    assert boot.estimate == cr2.estimate


def test_skewed_data_widen_the_upper_side_only():
    # 30 clusters, a lognormal score: the estimate's distribution is right-skewed, so the
    # bootstrap-t upper bound lies above its floor's while the lower bound stays the floor's
    rng = np.random.default_rng(4)
    codes = np.repeat(np.arange(30), 4)
    values = rng.lognormal(0.0, 1.4, codes.size)
    frame = pd.DataFrame({"y": values, "g": codes})
    floor = cs.cluster_ci(frame, "y", by="g", method="cr3_ik")
    boot = cs.cluster_ci(frame, "y", by="g", method="bootstrap_t", n_resamples=999, rng=0)
    assert boot.high > floor.high * 1.02
    assert boot.low == floor.low


def test_a_side_the_data_cannot_bound_is_infinite_with_a_note():
    # one cluster of 20 carries every nonzero value: 36% of replicates miss it and have no
    # spread, so the upper bound cannot be pinned down
    values = np.zeros(60)
    values[:3] = [4.0, 7.0, 1.0]
    codes = np.repeat(np.arange(20), 3)

    def interval(scores, **extra):
        return summarize_interval(
            cluster_sums(scores, codes, 20),
            estimand="pooled",
            method="bootstrap_t",
            confidence=0.95,
            is_binary=False,
            n_resamples=999,
            rng=np.random.default_rng(1),
            **extra,
        )

    res = interval(values)
    assert math.isinf(res.high)
    assert res.low < res.estimate
    assert any("cannot bound the upper side" in n for n in res.notes)
    clipped = interval(values / 10, outcome_range=(-1.0, 1.0))
    assert clipped.high == 1.0
    assert any("was clipped" in n for n in clipped.notes)


def test_binary_outcomes_stay_in_the_unit_interval():
    frame = pd.DataFrame({"g": np.repeat(np.arange(25), 4), "y": 0})
    frame.loc[[0, 1, 2, 3, 9], "y"] = 1
    res = cs.cluster_ci(frame, "y", by="g", method="bootstrap_t", n_resamples=999, rng=0)
    assert 0.0 <= res.low < res.estimate < res.high <= 1.0


def test_paired_differences_of_binary_outcomes_are_clipped_to_plus_minus_one():
    codes = np.repeat(np.arange(20), 3)
    a = np.zeros(60)
    a[:3] = 1.0
    frame_a = pd.DataFrame({"g": codes, "item": np.arange(60), "y": a})
    frame_b = frame_a.assign(y=0.0)
    res = cs.paired_delta(
        frame_a, frame_b, "y", "g", on="item", method="bootstrap_t", n_resamples=999, rng=0
    )
    assert res.method == "bootstrap_t"
    assert -1.0 <= res.low < res.delta < res.high <= 1.0


def test_the_paired_p_value_agrees_with_the_interval():
    """The interval is the union of CR2's and the bootstrap-t's, and the p-value the larger of
    their two tests: 0 lies outside the 95% interval exactly when p < 0.05."""
    rng = np.random.default_rng(0)
    codes = np.repeat(np.arange(20), 5)
    checked = 0
    for seed in range(60):
        rate = rng.beta(0.1, 1.2, 20)[codes]
        a = (rng.random(100) < rate).astype(float)
        b = (rng.random(100) < rate * 0.5).astype(float)
        frame_a = pd.DataFrame({"g": codes, "item": np.arange(100), "y": a})
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", cs.DegenerateDataWarning)
                res = cs.paired_delta(
                    frame_a,
                    frame_a.assign(y=b),
                    "y",
                    "g",
                    on="item",
                    method="bootstrap_t",
                    n_resamples=999,
                    rng=seed,
                )
        except cs.DegenerateDataError:  # identical sides
            continue
        if res.method != "bootstrap_t":  # a degenerate fallback, with its own test
            continue
        assert res.test == "bootstrap_t"
        assert (not res.low <= 0.0 <= res.high) == (res.p_value < 0.05), seed
        checked += 1
    assert checked > 50
