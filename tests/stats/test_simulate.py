"""The simulator: realised mean, ICC and size CV match the requested ones within Monte Carlo
error (tolerances are stated as multiples of a standard error or as a 99.9% interval)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import xarray as xr

import clusterstats as cs
from clusterstats.core.simulation import draw_cluster_sums


@pytest.mark.parametrize(
    ("mean", "icc", "size", "cv"),
    [(0.1, 0.3, 10, 0.0), (0.3, 0.1, 5, 0.8), (0.5, 0.6, 20, 0.8), (0.05, 0.0, 5, 0.0)],
)
def test_binary_mean_and_icc_match_the_request(mean, icc, size, cv):
    frame = cs.simulate(3000, size, mean=mean, icc=icc, size_cv=cv, seed=11)
    assert set(np.unique(frame["y"])) <= {0.0, 1.0}
    res = cs.cluster_ci(frame, "y", by="cluster", method="cr1", confidence=0.999)
    assert res.low < mean < res.high  # 99.9% clustered interval
    est = cs.icc(frame, "y", by="cluster", confidence=0.999)
    assert est.low < icc < est.high or (icc == 0 and est.low < 0.002)


def test_equal_sizes_and_size_cv():
    equal = cs.simulate(50, 7, mean=0.5, icc=0.2, seed=1)
    assert (equal.groupby("cluster").size() == 7).all()
    assert equal["row"].tolist()[:8] == [0, 1, 2, 3, 4, 5, 6, 0]
    sizes = cs.simulate(20000, 5, mean=0.5, icc=0.2, size_cv=0.8, seed=2).groupby("cluster").size()
    assert sizes.min() >= 1
    # mean 5 and CV 0.8 (sd 4): the SE of the sample mean is 4/sqrt(20000) = 0.028
    assert abs(sizes.mean() - 5) < 4 * 0.028
    assert abs(sizes.std() / sizes.mean() - 0.8) < 0.03


def test_continuous_random_intercept_model():
    frame = cs.simulate(3000, 8, mean=2.0, icc=0.6, outcome="continuous", seed=3)
    res = cs.cluster_ci(frame, "y", by="cluster", method="cr1", confidence=0.999)
    assert res.low < 2.0 < res.high
    assert abs(frame["y"].var() - 1.0) < 0.05  # total variance 1
    est = cs.icc(frame, "y", by="cluster", confidence=0.999)
    assert est.low < 0.6 < est.high


def test_size_related_to_difficulty_separates_the_estimands():
    frame = cs.simulate(6000, 20, mean=0.3, icc=0.3, size_difficulty=True, seed=4)
    true_pooled = 0.3 * (1 - 0.3 * 19 / 20)  # closed form in core/simulation.py
    assert frame.attrs["true_pooled"] == pytest.approx(true_pooled)
    assert frame.attrs["true_cluster_mean"] == 0.3
    for estimand, truth in (("pooled", true_pooled), ("cluster_mean", 0.3)):
        res = cs.cluster_ci(
            frame, "y", by="cluster", estimand=estimand, method="cr1", confidence=0.999
        )
        assert res.low < truth < res.high, estimand


def test_case_rerun_layout_pads_with_nan():
    ds = cs.simulate(40, 4, mean=0.4, icc=0.3, size_cv=0.8, layout="case_rerun", seed=5)
    assert isinstance(ds, xr.Dataset)
    assert ds["y"].dims == ("case", "rerun")
    long = cs.simulate(40, 4, mean=0.4, icc=0.3, size_cv=0.8, seed=5)
    runs = ds["y"].notnull().sum("rerun").values
    np.testing.assert_array_equal(runs, long.groupby("cluster").size().to_numpy())
    assert float(ds["y"].sum()) == long["y"].sum()
    assert ds.attrs["true_pooled"] == 0.4


def test_seed_reproduces_and_generator_is_accepted():
    a = cs.simulate(10, 3, mean=0.5, icc=0.5, seed=7)
    b = cs.simulate(10, 3, mean=0.5, icc=0.5, seed=np.random.default_rng(7))
    assert a.equals(b)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"mean": 1.2, "icc": 0.1}, "strictly between 0 and 1"),
        ({"mean": 0.5, "icc": 1.0}, r"icc must be in \[0, 1\)"),
        ({"mean": 0.5, "icc": 0.1, "size_cv": 0.1}, "too small"),
        ({"mean": 0.5, "icc": 0.1, "outcome": "ordinal"}, "binary' or 'continuous"),
        ({"mean": 0.5, "icc": 0.1, "layout": "wide"}, "layout"),
        ({"mean": 0.5, "icc": 0.1, "outcome": "continuous", "size_difficulty": True}, "binary"),
    ],
)
def test_invalid_parameters(kwargs, match):
    with pytest.raises(cs.InvalidOptionError, match=match):
        cs.simulate(10, 5, **kwargs)
    with pytest.raises(cs.InvalidOptionError, match="cluster_size=1"):
        cs.simulate(10, 1, mean=0.5, icc=0.1, size_cv=0.8)


def test_sufficient_statistics_path_matches_the_row_path_in_distribution():
    # Same model two ways: compare the means and variances of the pooled estimate over many
    # datasets (both ~ N(0.3, v) with v = p(1-p) * deff / N); 4 standard errors of tolerance.
    rng = np.random.default_rng(8)
    sums = draw_cluster_sums(
        rng, 4000, 20, cluster_size=5, mean=0.3, icc=0.3, size_cv=0.8, outcome="binary"
    )
    from_sums = np.array([s.totals.sum() / s.counts.sum() for s in sums])
    from_rows = np.array(
        [cs.simulate(20, 5, mean=0.3, icc=0.3, size_cv=0.8, seed=s)["y"].mean() for s in range(600)]
    )
    se = math.sqrt(from_sums.var() / 600 + from_sums.var() / 4000)
    assert abs(from_sums.mean() - from_rows.mean()) < 4 * se
    assert 0.8 < from_rows.var() / from_sums.var() < 1.25  # F(599, 3999) 99.9% range
