"""The cluster score interval as a method of every statistic that takes ``method=``, and its
unions with the defaults: each is the interval of ``clusterstats.core.score`` (clipped to the
outcome's range) or exactly the lower of the two lower bounds and the higher of the two upper
bounds, so that the real-data study's candidate columns are what users get."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats.core.grouping import ClusterSums
from clusterstats.core.score import cluster_score_interval, cluster_score_test
from clusterstats.core.simulation import draw_cluster_sums
from clusterstats.core.summary import summarize_interval


def _binary_sums(seed: int, k: int = 15) -> list[ClusterSums]:
    rng = np.random.default_rng(seed)
    return draw_cluster_sums(
        rng, 12, k, cluster_size=20, mean=0.15, icc=0.3, size_cv=0.8, outcome="binary"
    )


def _continuous_sums(seed: int, k: int = 12) -> ClusterSums:
    rng = np.random.default_rng(seed)
    counts = rng.integers(1, 40, size=k).astype(float)
    values = [rng.lognormal(0.0, 1.0, size=int(n)) * (1 + j % 3) for j, n in enumerate(counts)]
    totals = np.array([v.sum() for v in values])
    squares = np.array([(v * v).sum() for v in values])
    return ClusterSums(counts, totals, squares)


def _summary(sums, method, *, binary, estimand="pooled", **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return summarize_interval(
            sums, estimand=estimand, method=method, confidence=0.95, is_binary=binary, **options
        )


@pytest.mark.parametrize("estimand", ["pooled", "cluster_mean"])
def test_hybrid_or_score_is_the_union_of_its_parts(estimand):
    widened = 0
    for sums in _binary_sums(1):
        hybrid = _summary(sums, "korn_graubard_hybrid", binary=True, estimand=estimand)
        union = _summary(sums, "korn_graubard_hybrid_or_score", binary=True, estimand=estimand)
        low, high = cluster_score_interval(sums, estimand, 0.95)
        assert union.low == min(hybrid.low, max(low, 0.0))
        assert union.high == max(hybrid.high, min(high, 1.0))
        assert union.method == "korn_graubard_hybrid_or_score"
        if (union.low, union.high) == (hybrid.low, hybrid.high):
            assert (union.se, union.design_effect) == (hybrid.se, hybrid.design_effect)
        else:
            # widened: the se scales with the width, the design effect and effective n with
            # its square
            ratio = (union.high - union.low) / (hybrid.high - hybrid.low)
            assert ratio > 1
            assert union.se == pytest.approx(hybrid.se * ratio, rel=1e-12)
            inflation = ratio**2
            assert union.design_effect == pytest.approx(hybrid.design_effect * inflation, rel=1e-12)
            assert union.n_eff == pytest.approx(hybrid.n_eff / inflation, rel=1e-12)
            assert union.df == hybrid.df or (math.isnan(union.df) and math.isnan(hybrid.df))
            widened += 1
    # the draws have uneven sizes and a strong ICC: the score side must matter somewhere
    assert widened > 0


def test_bootstrap_t_or_score_is_the_union_of_its_parts():
    for seed in range(4):
        sums = _continuous_sums(seed)
        options = {"n_resamples": 499, "rng": np.random.default_rng(seed)}
        boot = _summary(sums, "bootstrap_t", binary=False, **options)
        options = {"n_resamples": 499, "rng": np.random.default_rng(seed)}
        union = _summary(sums, "bootstrap_t_or_score", binary=False, **options)
        low, high = cluster_score_interval(sums, "pooled", 0.95)
        assert union.low == min(boot.low, low)
        assert union.high == max(boot.high, high)


def test_score_method_is_the_core_interval_clipped_to_the_rate_range():
    for sums in _binary_sums(2, k=10):
        found = _summary(sums, "score", binary=True)
        low, high = cluster_score_interval(sums, "pooled", 0.95)
        assert (found.low, found.high) == (max(low, 0.0), min(high, 1.0))
        assert found.df == sums.n_clusters - 1


def test_score_method_falls_back_on_data_with_no_spread():
    # every outcome 0: the score test rejects every rate above 0 (a zero-width interval), so
    # the method takes the fallback every method takes on such data, never [0, 0]
    sums = ClusterSums(np.array([5.0, 8, 3, 9]), np.zeros(4), np.zeros(4))
    found = _summary(sums, "score", binary=True)
    assert found.low == 0.0
    assert found.high > 0.0
    assert found.method == "clopper_pearson_fallback"
    assert any("cluster-robust variance is zero" in note for note in found.notes)


def test_unbounded_score_side_is_stated():
    # one cluster holds nearly every row: too few clusters' worth of rows to bound the mean
    rng = np.random.default_rng(5)
    counts = np.array([400.0, 2, 3, 2, 1])
    values = [rng.normal(size=int(n)) for n in counts]
    sums = ClusterSums(
        counts, np.array([v.sum() for v in values]), np.array([(v * v).sum() for v in values])
    )
    found = _summary(sums, "score", binary=False)
    assert math.isinf(found.low) or math.isinf(found.high)
    assert any("unbounded" in note for note in found.notes)


def test_score_test_agrees_with_its_interval():
    sums = _continuous_sums(7, k=20)
    low, high = cluster_score_interval(sums, "pooled", 0.9)
    for bound in (low, high):
        assert cluster_score_test(sums, "pooled", bound) == pytest.approx(0.1, abs=1e-9)
    inside = 0.5 * (low + high)
    assert cluster_score_test(sums, "pooled", inside) > 0.1
    assert cluster_score_test(sums, "pooled", high + (high - low)) < 0.1


def _paired_frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(11)
    sizes = rng.integers(2, 30, size=24)
    doc = np.repeat(np.arange(24), sizes)
    level = rng.normal(0, 1, 24)[doc]
    a = pd.DataFrame({"doc": doc, "item": np.arange(doc.size)})
    b = a.copy()
    a["y"] = (rng.random(doc.size) < 1 / (1 + np.exp(-(level + 0.4)))).astype(int)
    b["y"] = (rng.random(doc.size) < 1 / (1 + np.exp(-level))).astype(int)
    return a, b.sample(frac=1.0, random_state=1)  # paired by key, not by position


@pytest.mark.parametrize("method", ["score", "bootstrap_t_or_score"])
def test_paired_score_methods_test_what_the_interval_shows(method):
    a, b = _paired_frames()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        found = cs.paired_delta(a, b, "y", "doc", on="item", method=method, rng=1)
        boot = cs.paired_delta(a, b, "y", "doc", on="item", method="bootstrap_t", rng=1)
    assert found.method == method
    assert found.test == ("score_t" if method == "score" else method)
    assert (found.low > 0.0 or found.high < 0.0) == (found.p_value < 0.05)
    if method == "bootstrap_t_or_score":
        assert found.low <= boot.low
        assert found.high >= boot.high
        assert found.p_value >= boot.p_value


def test_score_methods_are_refused_where_they_have_no_form():
    a, _ = _paired_frames()
    a["cat"] = a["doc"] % 3
    with pytest.raises(cs.InvalidOptionError, match="score"):
        cs.cluster_ci(a, "y", "doc", method="score", weights="doc")
    with pytest.raises(cs.ClusterStatsError, match="score"):
        cs.cluster_ci(a, "y", "doc", method="score", strata="cat")
    with pytest.raises(cs.InvalidOptionError, match="score"):
        cs.compare(
            a.assign(model="x", item=a.index), "y", "doc", model="model", on="item", method="score"
        )


def test_command_line_gives_the_functions_numbers(tmp_path, capsys):
    from clusterstats.cli import main

    a, b = _paired_frames()
    a.to_csv(tmp_path / "a.csv", index=False)
    b.to_csv(tmp_path / "b.csv", index=False)
    argv = ["ci", str(tmp_path / "a.csv"), "--outcome", "y", "--by", "doc", "--output", "csv"]
    assert main([*argv, "--method", "korn_graubard_hybrid_or_score"]) == 0
    printed = pd.read_csv(pd.io.common.StringIO(capsys.readouterr().out))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        expected = cs.cluster_ci(a, "y", "doc", method="korn_graubard_hybrid_or_score")
    assert printed["low"].iloc[0] == pytest.approx(expected.low, rel=1e-12)
    assert printed["high"].iloc[0] == pytest.approx(expected.high, rel=1e-12)
    paired = ["paired", str(tmp_path / "a.csv"), str(tmp_path / "b.csv"), "--outcome", "y"]
    paired += ["--by", "doc", "--on", "item", "--method", "score", "--output", "json"]
    assert main(paired) == 0
    record = json.loads(capsys.readouterr().out)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        expected = cs.paired_delta(a, b, "y", "doc", on="item", method="score")
    assert record["low"] == pytest.approx(expected.low, rel=1e-12)
    assert record["test"] == "score_t"


def test_a_union_keeps_the_fallback_of_data_with_no_spread():
    # every outcome 0 with a pilot ICC: the hybrid takes the fallback on that ICC, and so does
    # its union (the score test, which rejects every rate above 0 here, adds nothing)
    sums = ClusterSums(np.array([3.0, 5, 2, 7, 4, 6]), np.zeros(6), np.zeros(6))
    hybrid = _summary(sums, "korn_graubard_hybrid", binary=True, icc_prior=0.2)
    union = _summary(sums, "korn_graubard_hybrid_or_score", binary=True, icc_prior=0.2)
    assert hybrid.method == "clopper_pearson_fallback"
    assert union == hybrid
