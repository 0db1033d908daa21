"""Property-based tests (hypothesis): invariances and guarantees that must hold on any data."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import clusterstats as cs

ANALYTIC = ["naive", "cr1", "cr2", "wilson", "korn_graubard"]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def clustered_binary(draw, min_clusters=2, max_clusters=30, max_size=12):
    sizes = draw(st.lists(st.integers(1, max_size), min_size=min_clusters, max_size=max_clusters))
    rows = []
    for g, size in enumerate(sizes):
        p = draw(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]))
        bits = draw(st.lists(st.booleans(), min_size=size, max_size=size))
        # mix the cluster's propensity with free bits so every pattern can occur
        rows += [(g, int(b) if p in (0.1, 0.5, 0.9) else int(p)) for b in bits]
    return pd.DataFrame(rows, columns=["cluster", "y"])


def quietly(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cs.ClusterStatsWarning)
        return fn(*args, **kwargs)


def comparable(result) -> dict:
    out = result.to_dict()
    out.pop("notes")
    return out


def assert_same_result(got, expected) -> None:
    for key, value in comparable(expected).items():
        if isinstance(value, float):
            assert got.to_dict()[key] == pytest.approx(value, rel=1e-9, abs=1e-12, nan_ok=True), key
        else:
            assert got.to_dict()[key] == value, key


@SETTINGS
@given(frame=clustered_binary(), seed=st.integers(0, 2**32 - 1), method=st.sampled_from(ANALYTIC))
def test_invariant_to_row_order_and_cluster_labels(frame, seed, method):
    rng = np.random.default_rng(seed)
    shuffled = frame.iloc[rng.permutation(len(frame))].reset_index(drop=True)
    relabel = {
        g: f"c{v}"
        for g, v in zip(
            frame.cluster.unique(), rng.permutation(frame.cluster.nunique()), strict=True
        )
    }
    relabelled = shuffled.assign(cluster=shuffled.cluster.map(relabel))
    base = quietly(cs.cluster_ci, frame, "y", by="cluster", method=method)
    for other in (shuffled, relabelled):
        assert_same_result(quietly(cs.cluster_ci, other, "y", by="cluster", method=method), base)


@SETTINGS
@given(
    frame=clustered_binary(min_clusters=3),
    seed=st.integers(0, 2**32 - 1),
    method=st.sampled_from(["bootstrap_bca", "bootstrap_percentile"]),
)
def test_bootstrap_with_a_seed_is_invariant_to_row_order(frame, seed, method):
    shuffled = frame.iloc[np.random.default_rng(seed).permutation(len(frame))]
    options = {"method": method, "n_resamples": 300, "rng": 11}
    base = quietly(cs.cluster_ci, frame, "y", by="cluster", **options)
    assert_same_result(quietly(cs.cluster_ci, shuffled, "y", by="cluster", **options), base)


@SETTINGS
@given(
    frame=clustered_binary(),
    method=st.sampled_from([*ANALYTIC, "bootstrap_percentile"]),
    estimand=st.sampled_from(["pooled", "cluster_mean"]),
    confidence=st.floats(0.5, 0.999),
)
def test_interval_contains_the_estimate_and_is_never_zero_width(
    frame, method, estimand, confidence
):
    res = quietly(
        cs.cluster_ci,
        frame,
        "y",
        by="cluster",
        method=method,
        estimand=estimand,
        confidence=confidence,
        n_resamples=max(200, math.ceil(2 / (1 - confidence))),  # a replicate in each tail
        rng=0,
    )
    assert res.high > res.low
    assert 0.0 <= res.low <= 1.0
    assert 0.0 <= res.high <= 1.0
    if method != "bootstrap_percentile":  # a percentile interval need not contain it
        assert res.low <= res.estimate <= res.high


@SETTINGS
@given(values=st.lists(st.floats(-50, 50, allow_nan=False), min_size=3, max_size=60))
def test_singleton_clusters_give_design_effect_one_and_the_iid_interval(values):
    frame = pd.DataFrame({"cluster": np.arange(len(values)), "y": values})
    assume(np.ptp(frame["y"]) > 1e-6 * max(1.0, np.abs(frame["y"]).max()))  # not constant
    assume(not set(frame["y"]) <= {0.0, 1.0})  # binary data compare with Wilson, not t
    deff = quietly(cs.design_effect, frame, "y", by="cluster")
    n = len(values)
    assert deff.linearized == pytest.approx(1.0, rel=1e-9)
    # the default for a continuous score is the studentized bootstrap, whose design effect is
    # the jackknife's (CR3): a singleton's residual is inflated by 1 / (1 - 1/n), so the
    # variance is sum(e^2) / (n - 1)^2 = s^2 / (n - 1), n / (n - 1) times s^2 / n
    assert deff.method == "bootstrap_t"
    assert deff.design_effect == pytest.approx(n / (n - 1), rel=1e-9)
    assert deff.kish == 1.0
    assert deff.unequal_sizes == 1.0
    assert deff.n_eff == pytest.approx(n - 1, rel=1e-9)
    for method in ("cr1", "cr2"):
        res = quietly(cs.cluster_ci, frame, "y", by="cluster", method=method)
        naive = quietly(cs.cluster_ci, frame, "y", by="cluster", method="naive")
        assert res.df == pytest.approx(len(values) - 1)
        assert res.low == pytest.approx(naive.low, rel=1e-9, abs=1e-9)
        assert res.high == pytest.approx(naive.high, rel=1e-9, abs=1e-9)


@SETTINGS
@given(frame=clustered_binary(min_clusters=3), offset=st.sampled_from([1e3, -7.5, 1e6]))
def test_shifting_a_continuous_outcome_shifts_only_the_estimate(frame, offset):
    assume(frame.y.nunique() > 1)  # constant data are covered by the degenerate-data tests
    frame = frame.assign(y=frame.y * 0.37)
    base = quietly(cs.cluster_ci, frame, "y", by="cluster", method="cr2")
    shifted = quietly(
        cs.cluster_ci, frame.assign(y=frame.y + offset), "y", by="cluster", method="cr2"
    )
    assert shifted.estimate - offset == pytest.approx(base.estimate, abs=1e-6)
    if not math.isnan(base.se):
        assert shifted.se == pytest.approx(base.se, rel=1e-6, abs=1e-9)
        assert shifted.icc == pytest.approx(base.icc, rel=1e-6, abs=1e-9, nan_ok=True)


@SETTINGS
@given(frame=clustered_binary(min_clusters=2), confidence=st.floats(0.5, 0.999))
def test_icc_interval_contains_the_estimate(frame, confidence):
    res = quietly(cs.icc, frame, "y", by="cluster", confidence=confidence)
    if math.isnan(res.icc):
        return
    if math.isnan(res.low):  # at a bound of its range (no within or no between variation)
        assert math.isnan(res.high)
        assert any("the ICC has no interval" in note for note in res.notes)
    else:
        assert res.low <= res.icc <= res.high
        assert res.low < res.high  # never a zero-width interval


@given(
    runs=st.lists(
        st.tuples(st.sampled_from(["a", "b", "c", None]), st.integers(1, 40)),
        min_size=1,
        max_size=12,
    ),
    dtype=st.sampled_from(
        ["object", "str", "string[pyarrow]", "arrow", "category", "int", "Int64"]
    ),
    shuffle=st.booleans(),
)
@settings(max_examples=80, deadline=None)
def test_label_codes_equal_factorize(runs, dtype, shuffle):
    """Codes computed on runs (long runs of equal labels) are exactly pd.factorize's."""
    from clusterstats.adapters.frame import label_codes

    labels = [label for label, length in runs for _ in range(length)]
    if dtype in ("int", "Int64"):
        mapping = {"a": 3, "b": 1, "c": 2, None: None if dtype == "Int64" else 0}
        series = pd.Series([mapping[x] for x in labels], dtype="int64" if dtype == "int" else dtype)
    elif dtype == "arrow":
        pa = pytest.importorskip("pyarrow")
        series = pd.Series(labels, dtype=pd.ArrowDtype(pa.string()))
    else:
        series = pd.Series(labels, dtype=dtype)
    if shuffle:
        series = series.sample(frac=1.0, random_state=0)
    codes, uniques = label_codes(series)
    expected_codes, expected_uniques = pd.factorize(series, sort=False, use_na_sentinel=True)
    np.testing.assert_array_equal(codes, expected_codes)
    assert list(uniques) == list(expected_uniques)


@pytest.mark.parametrize("dtype", ["int64", "category", "string[pyarrow]"])
@pytest.mark.parametrize("layout", ["runs", "runs after a mixed prefix", "mixed"])
def test_label_codes_probe_of_a_prefix(monkeypatch, dtype, layout):
    """The prefix probe only decides which path computes the codes, never the codes."""
    from clusterstats.adapters import frame as _frame

    monkeypatch.setattr(_frame, "_RUN_PROBE_ROWS", 8)
    rng = np.random.default_rng(0)
    runs = np.repeat([2, 0, 1], 50)
    labels = {
        "runs": runs,
        "runs after a mixed prefix": np.concatenate([rng.integers(0, 3, 8), runs]),
        "mixed": rng.integers(0, 3, 150),
    }[layout]
    series = pd.Series(labels).astype(dtype)
    codes, uniques = _frame.label_codes(series)
    expected_codes, expected_uniques = pd.factorize(series, sort=False)
    np.testing.assert_array_equal(codes, expected_codes)
    assert list(uniques) == list(expected_uniques)
