"""Few clusters, all-pass data, undefined ICCs: explicit warnings, never a zero-width interval."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import clusterstats as cs
from clusterstats.core.intervals import METHODS

# Every method with a clustered interval that falls back on zero variance (the inverted
# interval, which "auto" resolves to for binary outcomes, needs no fallback).
# the inverted test and the hybrid built on it need no fallback (below)
INVERTED = ("korn_graubard_inverted", "korn_graubard_hybrid", "korn_graubard_hybrid_or_score")
CLUSTERED_METHODS = [m for m in METHODS if m not in ("naive", *INVERTED, "auto")]


def all_pass(n_clusters=30, size=10) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "case": np.repeat(np.arange(n_clusters), size),
            "passed": np.ones(n_clusters * size, dtype=int),
        }
    )


@pytest.mark.parametrize("method", CLUSTERED_METHODS)
def test_all_pass_gives_clopper_pearson_on_the_number_of_clusters(method):
    frame = all_pass()
    with pytest.warns(cs.DegenerateDataWarning, match="all 300 outcomes are 1"):
        res = cs.cluster_ci(frame, "passed", by="case", method=method, n_resamples=100, rng=0)
    assert res.high == 1.0
    # Two-sided Clopper-Pearson lower bound with n = K = 30 successes out of 30:
    # (alpha/2)^(1/30), the clustered analogue of the rule of three.
    assert res.low == pytest.approx(0.025 ** (1 / 30), rel=1e-12)
    assert res.high - res.low > 0.1
    assert res.method == "clopper_pearson_fallback"
    assert math.isnan(res.se)
    assert any("effective n of 30" in n for n in res.notes)


@pytest.mark.parametrize("method", [*INVERTED, "auto"])
def test_all_pass_under_the_inverted_interval_assumes_the_largest_icc(method):
    """No fallback: the restricted ICC is 0.98 for every candidate rate (each cluster agrees
    with itself), n0 = 300 / (1 + 0.98 * 9), and the mid-p lower bound solves
    mu^n0 / 2 = alpha / 2, i.e. mu = 0.05^(1 / n0)."""
    with pytest.warns(cs.DegenerateDataWarning, match="all 300 outcomes are 1: the data cannot"):
        res = cs.cluster_ci(all_pass(), "passed", by="case", method=method)
    n0 = 300 / (1 + 0.98 * 9)
    assert res.method == ("korn_graubard_hybrid" if method == "auto" else method)
    assert res.high == 1.0
    assert res.low == pytest.approx(0.05 ** (1 / n0), rel=1e-9)
    # the reported design effect is over s^2 / N with s^2's (N - 1) divisor, as for every
    # method, so it is the tested one times (N - 1) / N and n_eff = n0 * N / (N - 1)
    assert res.n_eff == pytest.approx(n0 * 300 / 299, rel=1e-12)


def test_all_pass_naive_stays_the_iid_wilson_interval_without_warning():
    res = cs.cluster_ci(all_pass(), "passed", by="case", method="naive")
    assert res.method == "naive"
    assert (res.low, res.high) == cs.wilson_interval(300, 300)
    assert res.high - res.low > 0


def test_all_fail_with_pilot_icc_uses_kish_effective_n():
    frame = all_pass().assign(passed=0)
    with pytest.warns(cs.DegenerateDataWarning, match="supplied icc=0.3"):
        res = cs.cluster_ci(frame, "passed", by="case", icc=0.3)
    n_eff = 300 / (1 + 9 * 0.3)  # 81.08 (seed 002's example)
    assert res.low == 0.0
    assert res.high == pytest.approx(1 - 0.025 ** (1 / n_eff), rel=1e-12)


def test_equal_cluster_means_are_degenerate_too():
    frame = pd.DataFrame({"case": np.repeat(np.arange(25), 2), "passed": [0, 1] * 25})
    with pytest.warns(cs.DegenerateDataWarning, match="every cluster has the same pass rate"):
        res = cs.cluster_ci(frame, "passed", by="case", method="cr1")
    assert res.low < 0.5 < res.high
    lo, hi = stats.beta.ppf([0.025, 0.975], [12.5, 13.5], [13.5, 12.5])
    assert (res.low, res.high) == (pytest.approx(lo), pytest.approx(hi))


def test_constant_continuous_outcome_is_an_error():
    frame = pd.DataFrame({"case": np.repeat(np.arange(25), 2), "score": 0.7})
    with pytest.raises(cs.DegenerateDataError, match=r"all 50 outcomes equal 0\.7"):
        cs.cluster_ci(frame, "score", by="case")


def test_few_clusters_warning_names_count_and_method():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"case": np.repeat(np.arange(12), 5), "passed": rng.integers(0, 2, 60)})
    with pytest.warns(cs.FewClustersWarning, match="only 12 clusters: the cr2 interval"):
        res = cs.cluster_ci(frame, "passed", by="case", method="cr2")
    assert any("only 12 clusters" in n for n in res.notes)
    # the iid comparison interval does not depend on clusters: no warning
    cs.cluster_ci(frame, "passed", by="case", method="naive")


def test_warning_points_at_the_callers_line():
    frame = pd.DataFrame(
        {
            "case": np.repeat(np.arange(5), 4),
            "passed": [0, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0, 1, 1, 1],
        }
    )
    with pytest.warns(cs.FewClustersWarning) as record:
        frame.eval.cluster_ci("passed", by="case")
    assert record[0].filename == __file__


def test_icc_undefined_cases_return_nan_with_a_warning():
    with pytest.warns(cs.DegenerateDataWarning, match="all outcomes are equal"):
        res = cs.icc(all_pass(), "passed", by="case")
    assert math.isnan(res.icc)
    assert math.isnan(res.low)
    singletons = pd.DataFrame({"case": np.arange(40), "passed": np.arange(40) % 3 == 0})
    with pytest.warns(cs.DegenerateDataWarning, match="single row"):
        res = cs.icc(singletons, "passed", by="case")
    assert math.isnan(res.icc)


def test_negative_icc_is_reported_raw_and_truncated_for_design_effects():
    # Perfectly balanced clusters (each 1 pass, 1 fail... plus noise) give a negative ICC.
    frame = pd.DataFrame({"case": np.repeat(np.arange(30), 4), "passed": np.tile([1, 0, 1, 0], 30)})
    frame.loc[0, "passed"] = 0
    res = cs.icc(frame, "passed", by="case")
    assert res.icc < 0
    assert res.icc_truncated == 0.0
    assert any("negative" in n for n in res.notes)
    deff = cs.design_effect(frame, "passed", by="case")
    assert deff.icc == res.icc
    assert deff.kish == 1.0


def test_estimand_note_when_size_relates_to_outcome():
    # Big clusters fail, small clusters pass: pooled and cluster-mean estimates diverge.
    sizes = np.array([2] * 20 + [30] * 10)
    rate = np.where(sizes == 2, 0.9, 0.2)
    rng = np.random.default_rng(5)
    rows = [(g, int(rng.random() < rate[g])) for g in range(30) for _ in range(sizes[g])]
    frame = pd.DataFrame(rows, columns=["case", "passed"])
    res = cs.cluster_ci(frame, "passed", by="case")
    assert any("cluster size is related to the outcome" in n for n in res.notes)
    balanced = cs.cluster_ci(
        all_pass(30, 4).assign(passed=np.tile([0, 1, 1, 0], 30) | (np.arange(120) % 7 == 0)),
        "passed",
        by="case",
    )
    assert not any("cluster size" in n for n in balanced.notes)
