"""The cluster bootstrap's replicate sums: integer-valued statistics packed into one int64 per
cluster give the float sums bit for bit, and the intervals do not move by a digit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import clusterstats as cs
from clusterstats.core import bootstrap
from clusterstats.core.bootstrap import _IntegerPacking, resample_cluster_sums


def _integer_sums(stats: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """The exact sums, in Python integers (no float rounding, no int64 wrap-around)."""
    as_int = [[int(v) for v in row] for row in stats]
    return np.array(
        [[sum(as_int[i][j] for i in draw) for j in range(stats.shape[1])] for draw in indices],
        dtype=np.float64,
    )


@pytest.mark.parametrize(
    ("low", "high", "k"),
    [(0, 1, 2), (-1, 0, 2), (-600, 600, 1), (-600, 600, 3), (0, 2**20, 2), (7, 7, 2)],
)
def test_packed_integer_sums_are_the_exact_sums_and_the_float_gather_sums(low, high, k):
    rng = np.random.default_rng([abs(low), high, k])
    g, b = 57, 40
    stats = rng.integers(low, high + 1, size=(g, k)).astype(np.float64)
    indices = rng.integers(0, g, size=(b, g))
    assert _IntegerPacking.of(stats, g) is not None
    got = resample_cluster_sums(stats, b, rng, indices=indices)
    assert np.array_equal(got, _integer_sums(stats, indices))
    assert np.array_equal(got, stats[indices].sum(axis=1))


def test_the_widest_packing_decodes_the_extreme_draws():
    # spans 2^30 + 1 and 2^29 + 1: three draws need 32 and 31 bits, 63 in all
    g = 3
    stats = np.array([[-(2.0**29), 2.0**29 + 6], [1.0, 5.0], [2.0**29 + 1, 100.0]])
    packing = _IntegerPacking.of(stats, g)
    assert packing is not None
    assert [mask.bit_length() for mask in packing.masks] == [32, 31]
    indices = np.array([[0, 0, 0], [2, 2, 2], [1, 1, 1], [0, 2, 1], [1, 2, 2]])
    got = resample_cluster_sums(stats, len(indices), np.random.default_rng(0), indices=indices)
    assert np.array_equal(got, _integer_sums(stats, indices))


@pytest.mark.parametrize(
    "stats",
    [
        np.array([[1.0, 2.0], [0.5, 3.0]]),  # not an integer
        np.array([[1.0, -0.0], [-0.0, 3.0]]),  # -0.0: a float sum of -0.0 alone stays -0.0
        np.array([[1.0, 2.0**52 + 2], [0.0, 3.0]]),  # two draws of 2^52 + 2 pass 2^53
        np.array([[0.0, 0.0], [2.0**31 - 1, 2.0**31 - 1]]),  # 2 x 32 bits: more than 63
    ],
)
def test_what_cannot_be_packed_falls_back_to_the_float_sums(stats):
    g = stats.shape[0]
    assert _IntegerPacking.of(stats, g) is None
    indices = np.array([[0, 0], [1, 1], [0, 1]])
    got = resample_cluster_sums(stats, 3, np.random.default_rng(0), indices=indices)
    assert np.array_equal(got, stats[indices].sum(axis=1))
    assert np.array_equal(np.signbit(got), np.signbit(stats[indices].sum(axis=1)))


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_non_finite_statistics_are_not_packed(value):
    assert _IntegerPacking.of(np.array([[1.0, value], [0.0, 3.0]]), 2) is None


def test_the_draws_are_one_stream_whatever_the_chunk():
    g, b = 1_000, 300  # 131 replicates per chunk: three chunks
    stats = np.random.default_rng(1).integers(0, 40, size=(g, 2)).astype(np.float64)
    drawn = resample_cluster_sums(stats, b, np.random.default_rng(4))
    indices = np.random.default_rng(4).integers(0, g, size=(b, g))
    assert np.array_equal(drawn, _integer_sums(stats, indices))


def _frames():
    rng = np.random.default_rng(11)
    sizes = rng.integers(1, 25, 80)
    cluster = np.repeat(np.arange(80), sizes)
    n = cluster.size
    rate = rng.beta(2.0, 5.0, 80)[cluster]
    yield pd.DataFrame({"cluster": cluster, "y": (rng.random(n) < rate).astype(int)})
    yield pd.DataFrame({"cluster": cluster, "y": rng.integers(1, 6, n).astype(float)})
    yield pd.DataFrame({"cluster": cluster, "y": rng.integers(-1000, 3, n)})


@pytest.mark.parametrize("frame", list(_frames()), ids=["binary", "likert", "negative"])
@pytest.mark.parametrize("estimand", ["pooled", "cluster_mean"])
@pytest.mark.parametrize("method", ["bootstrap_percentile", "bootstrap_bca", "bootstrap_t"])
def test_packing_moves_no_interval_by_a_digit(frame, estimand, method, monkeypatch):
    def interval():
        found = cs.cluster_ci(
            frame, "y", by="cluster", method=method, estimand=estimand, n_resamples=999, rng=3
        )
        return found.low, found.high, found.se, found.notes

    packed = interval()
    monkeypatch.setattr(bootstrap._IntegerPacking, "of", classmethod(lambda cls, s, g: None))
    assert interval() == packed
