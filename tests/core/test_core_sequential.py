"""Confidence sequences over completed clusters (``clusterstats.core.sequential``).

Sources of expected numbers: the authors' implementation of betting confidence sequences
(``confseq.betting.betting_cs``), through the values ``tests/reference/confseq_betting.py``
wrote to ``tests/reference/confseq_betting.json`` (and live, when ``CLUSTERSTATS_CONFSEQ_PYTHON``
names an interpreter where confseq imports); identities derived in the tests; and Ville's
inequality, checked by simulation with fixed seeds.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from clusterstats.core.sequential import betting_sequence, predictable_bets

REFERENCE = Path(__file__).parents[1] / "reference"


def _ours(case):
    x = np.asarray(case["x"], dtype=float)
    return betting_sequence(
        x,
        np.ones_like(x),
        estimand="cluster_mean",
        confidence=1 - case["alpha"],
        breaks=case["breaks"],
    )


def test_one_row_per_cluster_equals_confseq():
    """With one row per cluster, the sequence is confseq's betting_cs (hedged capital,
    predictable plug-in bets, theta = 1/2, truncation 1/2, the same grid and the running
    intersection), bound for bound."""
    cases = json.loads((REFERENCE / "confseq_betting.json").read_text())
    assert len(cases) == 4
    for case in cases:
        seq = _ours(case)
        np.testing.assert_allclose(seq.low, case["low"], rtol=0, atol=1e-12, err_msg=case["name"])
        np.testing.assert_allclose(seq.high, case["high"], rtol=0, atol=1e-12, err_msg=case["name"])


@pytest.mark.skipif(
    not os.environ.get("CLUSTERSTATS_CONFSEQ_PYTHON"),
    reason="CLUSTERSTATS_CONFSEQ_PYTHON names no interpreter with confseq",
)
def test_one_row_per_cluster_equals_confseq_live(tmp_path):
    rng = np.random.default_rng(7)
    cases = [
        {"name": "beta", "x": rng.beta(0.5, 0.5, 400).tolist(), "alpha": 0.05},
        {"name": "rare", "x": (rng.random(300) < 0.05).astype(float).tolist(), "alpha": 0.05},
    ]
    script = REFERENCE / "confseq_betting.py"
    done = subprocess.run(
        [os.environ["CLUSTERSTATS_CONFSEQ_PYTHON"], str(script), "--stdin"],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    for case in json.loads(done.stdout):
        seq = _ours(case)
        np.testing.assert_allclose(seq.low, case["low"], rtol=0, atol=1e-12)
        np.testing.assert_allclose(seq.high, case["high"], rtol=0, atol=1e-12)


def test_the_first_bets_follow_the_formula():
    """Waudby-Smith & Ramdas (2024), eq. 26: sqrt(2 log(1/a) / (sigma2 t log(1 + t))), with
    the prior variance 1/4 before any data and (1/4 + (x1 - mu1)^2) / 2 after one."""
    alpha = 0.025
    bets = predictable_bets(np.array([1.0, 0.0]), np.ones(2), alpha=alpha)
    first = np.sqrt(2 * np.log(1 / alpha) / (0.25 * 1 * np.log(2)))
    mu1 = (0.5 + 1.0) / 2
    sigma1 = (0.25 + (1.0 - mu1) ** 2) / 2
    second = np.sqrt(2 * np.log(1 / alpha) / (sigma1 * 2 * np.log(3)))
    assert bets == pytest.approx([first, second], rel=1e-14)


def test_equal_sizes_make_the_two_estimands_one():
    """With every cluster of the same size n and the bound B = n, the pooled martingale's
    x_g = S_g / n and u_g = 1 are the cluster means: the two sequences are the same."""
    rng = np.random.default_rng(3)
    totals = rng.binomial(6, 0.4, 150).astype(float)
    counts = np.full(150, 6.0)
    pooled = betting_sequence(totals, counts, estimand="pooled")
    means = betting_sequence(totals, counts, estimand="cluster_mean")
    np.testing.assert_allclose(pooled.estimate, means.estimate, rtol=1e-14)
    for name in ("low", "high"):
        np.testing.assert_array_equal(getattr(pooled, name), getattr(means, name))


def test_bounds_rescale_the_sequence():
    """A score in [a, b] gives the sequence of (y - a) / (b - a), mapped back."""
    rng = np.random.default_rng(4)
    counts = rng.integers(1, 8, 120).astype(float)
    unit = rng.binomial(counts.astype(int), 0.6).astype(float)
    a, b = -3.0, 7.0
    scores = a * counts + (b - a) * unit  # cluster sums of a + (b - a) y
    on_unit = betting_sequence(unit, counts, estimand="pooled")
    scaled = betting_sequence(scores, counts, estimand="pooled", bounds=(a, b))
    np.testing.assert_allclose(scaled.low, a + (b - a) * on_unit.low, atol=1e-12)
    np.testing.assert_allclose(scaled.high, a + (b - a) * on_unit.high, atol=1e-12)


def test_blocks_carry_the_wealth_exactly(monkeypatch):
    """The trajectory computed in blocks of clusters equals the one computed at once."""
    import clusterstats.core.sequential as sequential

    rng = np.random.default_rng(5)
    counts = rng.integers(1, 30, 700).astype(float)
    totals = rng.binomial(counts.astype(int), 0.3).astype(float)
    whole = betting_sequence(totals, counts, estimand="pooled")
    monkeypatch.setattr(sequential, "_BLOCK_CELLS", 1001 * 7)  # blocks of 7 clusters
    blocked = betting_sequence(totals, counts, estimand="pooled")
    np.testing.assert_array_equal(whole.low, blocked.low)
    np.testing.assert_array_equal(whole.high, blocked.high)


def _clustered(rng, n_clusters, mean, icc, sizes):
    """Binary rows in clusters: each cluster's rate from a beta with the given mean and ICC
    (the beta-binomial's ICC is 1 / (a + b + 1))."""
    total = 1.0 / icc - 1.0
    rates = rng.beta(mean * total, (1 - mean) * total, n_clusters)
    return rng.binomial(sizes, rates).astype(float), sizes.astype(float)


@pytest.mark.parametrize("estimand", ["pooled", "cluster_mean"])
def test_the_sequence_misses_the_truth_at_any_look_at_most_alpha(estimand):
    """Ville's inequality, checked: over 400 runs of 120 clusters of unequal sizes (ICC 0.3,
    mean 0.3), the share whose sequence ever excludes the truth, at any of the 120 looks,
    is below 5% plus three Monte Carlo standard errors (and in fact far below)."""
    rng = np.random.default_rng(20261203)
    runs, misses = 400, 0
    for _ in range(runs):
        sizes = rng.integers(1, 25, 120)
        totals, counts = _clustered(rng, 120, 0.3, 0.3, sizes)
        seq = betting_sequence(totals, counts, estimand=estimand, max_cluster_size=24)
        misses += bool(np.any((seq.low > 0.3) | (seq.high < 0.3)))
    # the pooled truth E[S]/E[n] is the mean itself here: the rates do not depend on sizes
    limit = 0.05 + 3 * np.sqrt(0.05 * 0.95 / runs)
    assert misses / runs <= limit


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="same positive length"):
        betting_sequence(np.ones(3), np.ones(2), estimand="pooled")
    with pytest.raises(ValueError, match="above the bound"):
        betting_sequence(np.ones(3), np.array([1.0, 2, 9]), estimand="pooled", max_cluster_size=5)
    with pytest.raises(ValueError, match="unknown estimand"):
        betting_sequence(np.ones(3), np.ones(3), estimand="median")
